// The registry's run limits: how much of the host one run of a repo may use.
// tasks_max (processes and threads), memory_max (bytes, or "512M"/"8G"),
// cpu_weight (systemd's CPUWeight, 1-10000). Parsed here, one key at a time,
// for the registry's key table (keys.ts); applied by control/dispatch/limits.ts.
import type { RunLimits } from '../../types.js';

export type { RunLimits } from '../../types.js';

const GIB = 1024 ** 3;

/**
 * The documented defaults: room for an orchestrate plus a few node-based
 * agents with their test runners (node alone has about a dozen threads),
 * 8 GiB, and the same CPU share as any other unit.
 */
export const RUN_LIMIT_DEFAULTS: RunLimits = { tasksMax: 1024, memoryMax: 8 * GIB, cpuWeight: 100 };

export const RUN_LIMIT_KEYS = {
  tasks_max: 'processes and threads one run may have at once',
  memory_max: 'memory of one run (per process without systemd)',
  cpu_weight: "one run's CPU share (systemd CPUWeight)",
} as const;

export type RunLimitKey = keyof typeof RUN_LIMIT_KEYS;

/** Bounds: fewer tasks than this cannot even start orchestrate; less memory cannot run node. */
const TASKS_MAX_RANGE = [32, 4_194_304] as const;
const MEMORY_MAX_MIN = 256 * 1024 ** 2;
const CPU_WEIGHT_RANGE = [1, 10_000] as const;

const UNITS: Readonly<Record<string, number>> = { '': 1, K: 1024, M: 1024 ** 2, G: GIB, T: 1024 ** 4 };

/** Pure: "512M", "8G", "1.5G" (base 1024, like systemd) or an integer byte count; undefined when not a size. */
export function parseSize(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isSafeInteger(value) && value > 0 ? value : undefined;
  if (typeof value !== 'string') return undefined;
  const match = /^\s*(\d+(?:\.\d+)?)\s*([KMGT]?)i?B?\s*$/i.exec(value);
  if (!match) return undefined;
  const bytes = Math.floor(Number(match[1]) * UNITS[match[2]!.toUpperCase()]!);
  return Number.isSafeInteger(bytes) && bytes > 0 ? bytes : undefined;
}

/** Pure: bytes as systemd and people read them ("8G", "1536M", "1000"). */
export function formatSize(bytes: number): string {
  for (const unit of ['T', 'G', 'M', 'K'] as const)
    if (bytes % UNITS[unit]! === 0) return `${bytes / UNITS[unit]!}${unit}`;
  return String(bytes);
}

export type RunLimitFields = { -readonly [K in keyof RunLimits]?: RunLimits[K] };

/**
 * Checks one limit key; on success sets it in `fields`, otherwise calls
 * bad(problem, fix). Every bad value is reported, not only the first.
 */
export function readRunLimit(
  key: RunLimitKey,
  value: unknown,
  fields: RunLimitFields,
  bad: (problem: string, fix: string) => void,
): void {
  switch (key) {
    case 'tasks_max': {
      const [min, max] = TASKS_MAX_RANGE;
      if (!Number.isInteger(value) || (value as number) < min || (value as number) > max)
        bad(
          `must be an integer ${min}-${max}, got ${JSON.stringify(value)}`,
          `e.g. tasks_max = ${RUN_LIMIT_DEFAULTS.tasksMax} (node alone runs about a dozen threads)`,
        );
      else fields.tasksMax = value as number;
      return;
    }
    case 'memory_max': {
      const bytes = parseSize(value);
      if (bytes === undefined)
        bad(
          `not a size: ${JSON.stringify(value)}`,
          'write bytes or a size with K, M, G or T (base 1024), e.g. memory_max = "8G"',
        );
      else if (bytes < MEMORY_MAX_MIN)
        bad(
          `${JSON.stringify(value)} is below the ${formatSize(MEMORY_MAX_MIN)} an agent needs`,
          'e.g. memory_max = "8G"',
        );
      else fields.memoryMax = bytes;
      return;
    }
    case 'cpu_weight': {
      const [min, max] = CPU_WEIGHT_RANGE;
      if (!Number.isInteger(value) || (value as number) < min || (value as number) > max)
        bad(
          `must be an integer ${min}-${max}, got ${JSON.stringify(value)}`,
          'e.g. cpu_weight = 100 (the default share; 50 is half of it)',
        );
      else fields.cpuWeight = value as number;
      return;
    }
  }
}

/** Pure: a repo's limits: its own, else [defaults], else RUN_LIMIT_DEFAULTS. */
export function resolveRunLimits(repo: RunLimitFields, defaults: RunLimitFields): RunLimits {
  return {
    tasksMax: repo.tasksMax ?? defaults.tasksMax ?? RUN_LIMIT_DEFAULTS.tasksMax,
    memoryMax: repo.memoryMax ?? defaults.memoryMax ?? RUN_LIMIT_DEFAULTS.memoryMax,
    cpuWeight: repo.cpuWeight ?? defaults.cpuWeight ?? RUN_LIMIT_DEFAULTS.cpuWeight,
  };
}

/** A repo section's limit keys as written (for re-rendering the section): key -> raw TOML value. */
export type RawRunLimits = Partial<Record<RunLimitKey, number | string>>;

/** The limit keys of a raw [repos.NAME] table, kept as written so re-provisioning never drops them. */
export function rawRunLimits(raw: Readonly<Record<string, unknown>>): RawRunLimits | undefined {
  const kept: RawRunLimits = {};
  for (const key of Object.keys(RUN_LIMIT_KEYS) as RunLimitKey[]) {
    const value = raw[key];
    if (typeof value === 'number' || typeof value === 'string') kept[key] = value;
  }
  return Object.keys(kept).length ? kept : undefined;
}

/** `key = value` lines of a section's limit keys. */
export function renderRunLimitLines(limits: RawRunLimits | undefined): string[] {
  if (!limits) return [];
  return (Object.keys(RUN_LIMIT_KEYS) as RunLimitKey[])
    .filter((key) => limits[key] !== undefined)
    .map((key) => `${key} = ${JSON.stringify(limits[key])}`);
}
