// Provisioning's part of the port and registry-file rules. Pure.
//
// A registry written before proxy ports had to be privileged may still hold
// ports from 1024 up. Provision does not refuse such a registry (every repo
// would have to be fixed by hand before any could be provisioned): it moves
// each of those repos to a free privileged port and says so in the step
// line. Running agents of a moved repo lose their proxy until their next run.
import { parse } from 'smol-toml';
import type { ProvisionStep } from './provision-step.js';
import { PRIVILEGED_PORT_LIMIT } from '../../src/control/registry/proxy-ports.js';
import { describePortBudget, freeProxyPort, morePortsFix, proxyPortBudget, type PortsState } from './ports.js';
import { systemCommand } from './exec.js';
import { UsageError } from '../../src/errors.js';

/** registry.toml holds every repo's user, ports, allowlist and env: root only. */
export const REGISTRY_MODE = 0o600;

type Rewrite = (text: string, repo: string, proxyPort: number) => string;

/** The registry text with every repo on a port the registry's limit refuses moved, and one line per move. */
export function movedProxyPorts(
  text: string,
  ports: Pick<PortsState, 'listeners' | 'unprivilegedStart'>,
  rewrite: Rewrite,
  limit: { readonly declared: number; readonly file: string } = {
    declared: PRIVILEGED_PORT_LIMIT,
    file: 'registry.toml',
  },
): { text: string; moves: string[] } {
  let repos: Record<string, Record<string, unknown>>;
  try {
    repos = ((parse(text) as Record<string, unknown>).repos ?? {}) as Record<string, Record<string, unknown>>;
  } catch {
    return { text, moves: [] };
  }
  const taken = new Set(
    Object.values(repos)
      .map((repo) => repo?.proxy_port)
      .filter((port): port is number => Number.isInteger(port)),
  );
  const moves: string[] = [];
  let result = text;
  for (const [name, repo] of Object.entries(repos)) {
    const port = repo?.proxy_port;
    if (!Number.isInteger(port) || (port as number) < limit.declared) continue;
    const next = freeProxyPort(taken, ports, limit.declared);
    if (next === undefined) {
      const budget = proxyPortBudget(taken, ports, limit.declared);
      throw new UsageError(
        `repo "${name}": proxy port ${String(port)} can be bound by any user and no free privileged port is left to move it to: ${describePortBudget(budget)}. Fix: ${morePortsFix(budget, limit.file)}`,
      );
    }
    taken.add(next);
    result = rewrite(result, name, next);
    moves.push(
      `proxy port of repo ${name} moves from ${String(port)} to ${next} (ports from ${limit.declared} up can be bound by any user, an agent too)`,
    );
  }
  return { text: result, moves };
}

/** chmod 600 for an existing registry readable by group or others. */
export function registryModeStep(file: string, mode: number | undefined): ProvisionStep[] {
  if (mode === undefined || (mode & 0o077) === 0) return [];
  return [
    {
      description: `make ${file} readable by root only (mode ${(mode & 0o777).toString(8)} -> 600)`,
      command: systemCommand('chmod', ['600', file]),
    },
  ];
}
