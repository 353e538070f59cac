// Provisioning's part of the port and registry-file rules. Pure.
//
// A registry written before proxy ports had to be privileged may still hold
// ports from 1024 up, and one written before the runner had a proxy of its
// own has no runner_proxy_port, and a repo a key file was given to has no
// broker_port yet. Provision does not refuse such a registry
// (every repo would have to be fixed by hand before any could be
// provisioned): it moves each of those ports to a free privileged one,
// allocates the missing ones, and says so in the step line. Running agents of
// a moved repo lose their proxy until their next run.
import { parse } from 'smol-toml';
import type { ProvisionStep } from './provision-step.js';
import { PRIVILEGED_PORT_LIMIT } from '../../src/control/registry/proxy-ports.js';
import { describePortBudget, freeProxyPort, morePortsFix, proxyPortBudget, type PortsState } from './ports.js';
import { systemCommand } from './exec.js';
import { UsageError } from '../../src/errors.js';
import { rawDeclaresBroker } from '../../src/control/registry/broker.js';

/** registry.toml holds every repo's user, ports, allowlist and env: root only. */
export const REGISTRY_MODE = 0o600;

/** The ports to write into one repo's section. */
export interface RepoPorts {
  readonly proxyPort?: number;
  readonly runnerProxyPort?: number;
  readonly brokerPort?: number;
}

type Rewrite = (text: string, repo: string, ports: RepoPorts) => string;
type RawRepos = Record<string, Record<string, unknown>>;

const PORT_KEYS = [
  { key: 'proxy_port', field: 'proxyPort', label: 'proxy port' },
  { key: 'runner_proxy_port', field: 'runnerProxyPort', label: 'runner proxy port' },
  { key: 'broker_port', field: 'brokerPort', label: 'broker port' },
] as const;

function rawRepos(text: string): RawRepos | undefined {
  return rawDocument(text)?.repos;
}

function rawDocument(text: string): { repos: RawRepos; defaults: Record<string, unknown> | undefined } | undefined {
  try {
    const document = parse(text) as Record<string, unknown>;
    return {
      repos: (document.repos ?? {}) as RawRepos,
      defaults: document.defaults as Record<string, unknown> | undefined,
    };
  } catch {
    return undefined;
  }
}

/** Every port of the pool in the text as written (proxy, runner proxy and broker ports), valid or not. */
export function rawProxyPorts(text: string): number[] {
  return Object.values(rawRepos(text) ?? {}).flatMap((repo) =>
    PORT_KEYS.map(({ key }) => repo?.[key]).filter((port): port is number => Number.isInteger(port)),
  );
}

/**
 * The registry text with every repo's ports in order: a port the registry's limit refuses moved, a missing
 * runner_proxy_port allocated (from the same pool as proxy_port), a missing broker_port allocated for a repo a key file
 * applies to, and one line per change.
 */
export function movedProxyPorts(
  text: string,
  ports: Pick<PortsState, 'listeners' | 'unprivilegedStart'>,
  rewrite: Rewrite,
  limit: { readonly declared: number; readonly file: string } = {
    declared: PRIVILEGED_PORT_LIMIT,
    file: 'registry.toml',
  },
): { text: string; moves: string[] } {
  const document = rawDocument(text);
  if (!document) return { text, moves: [] };
  const { repos, defaults } = document;
  const taken = new Set(rawProxyPorts(text));
  const moves: string[] = [];
  let result = text;
  for (const [name, repo] of Object.entries(repos)) {
    const changed: { -readonly [K in keyof RepoPorts]: number } = {};
    for (const { key, field, label } of PORT_KEYS) {
      const port = repo?.[key];
      const missing =
        port === undefined &&
        (key === 'runner_proxy_port' || (key === 'broker_port' && rawDeclaresBroker(repo, defaults)));
      if (!missing && (!Number.isInteger(port) || (port as number) < limit.declared)) continue;
      const next = freeProxyPort(taken, ports, limit.declared);
      if (next === undefined) {
        const budget = proxyPortBudget(taken, ports, limit.declared);
        const what = missing
          ? `repo "${name}" has no ${label} yet and no free privileged port is left for one`
          : `repo "${name}": ${label} ${String(port)} can be bound by any user and no free privileged port is left to move it to`;
        throw new UsageError(`${what}: ${describePortBudget(budget)}. Fix: ${morePortsFix(budget, limit.file)}`);
      }
      taken.add(next);
      changed[field] = next;
      moves.push(
        missing
          ? key === 'broker_port'
            ? `broker port of repo ${name}: ${next} (its agents reach their model through the broker there)`
            : `runner proxy port of repo ${name}: ${next} (the runner reaches the git host through it, nothing else)`
          : `${label} of repo ${name} moves from ${String(port)} to ${next} (ports from ${limit.declared} up can be bound by any user, an agent too)`,
      );
    }
    if (Object.keys(changed).length) result = rewrite(result, name, changed);
  }
  return { text: result, moves };
}

/**
 * The two ports of a new repo (the agent's, then the runner's): privileged, free on the host, in no registry entry;
 * refused with the fix when fewer than two are left.
 */
export function newRepoPorts(
  name: string,
  text: string,
  ports: Pick<PortsState, 'listeners' | 'unprivilegedStart'>,
  file: string,
  declared: number,
): { proxyPort: number; runnerProxyPort: number } {
  const taken = new Set(rawProxyPorts(text));
  const proxyPort = freeProxyPort(taken, ports, declared);
  const runnerProxyPort =
    proxyPort === undefined ? undefined : freeProxyPort(new Set([...taken, proxyPort]), ports, declared);
  if (proxyPort === undefined || runnerProxyPort === undefined) {
    const budget = proxyPortBudget(taken, ports, declared);
    const what =
      proxyPort === undefined
        ? 'no proxy port is left'
        : "only one proxy port is left, and a repo takes two (its agent's and its runner's)";
    throw new UsageError(
      `${file}: ${what} for repo "${name}": ${describePortBudget(budget)}; a proxy port must be below net.ipv4.ip_unprivileged_port_start so that no agent can bind it. Fix: ${morePortsFix(budget, file)}`,
    );
  }
  return { proxyPort, runnerProxyPort };
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
