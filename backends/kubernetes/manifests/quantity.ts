// The repo's limits as Kubernetes quantities. Pure.
import type { RunLimits } from '../../../src/types.js';

const UNITS = [
  ['Ti', 1024 ** 4],
  ['Gi', 1024 ** 3],
  ['Mi', 1024 ** 2],
  ['Ki', 1024],
] as const;

/** Bytes as a binary-suffixed quantity ("8Gi", "1536Mi"), or the plain byte count. */
export function bytesQuantity(bytes: number): string {
  for (const [suffix, size] of UNITS) if (bytes % size === 0) return `${bytes / size}${suffix}`;
  return String(bytes);
}

/**
 * The pod's CPU request from cpu_weight: 100, every unit's default share, is one core, so a repo's share of a node
 * is what it is of a host (cpu_weight 50: half a core).
 */
export function cpuRequest(limits: RunLimits): string {
  return `${limits.cpuWeight * 10}m`;
}
