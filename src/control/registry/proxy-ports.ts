// Which ports a repo's proxy may listen on: the one rule, used by registry
// validation, provisioning and doctor. An agent user must never be able to
// bind another repo's proxy port, not even in the moment Squid closes and
// reopens its ports on `squid -k reconfigure`; ports below the kernel's
// net.ipv4.ip_unprivileged_port_start need CAP_NET_BIND_SERVICE, which no
// repo user has. The pool is therefore 700-1023 on a default host, 324
// ports, and every repo takes two (its agent's proxy_port and its runner's
// runner_proxy_port): about 160 repos once the host's own services (a few of
// them listen up there) are skipped. An operator who accepts that more ports need root to
// bind raises the sysctl and tells the registry (proxy_ports_below). Pure.
import type { RegistryRepo } from '../../types.js';

/**
 * The kernel's default net.ipv4.ip_unprivileged_port_start: the registry accepts only ports below it, unless its
 * top-level `proxy_ports_below` says the operator raised the sysctl.
 */
export const PRIVILEGED_PORT_LIMIT = 1024;

/**
 * Every port a repo's table names, each of which must be the only user of its number in the whole registry (and not
 * the push webhook receiver's): the key, how messages name it, and where a resolved repo keeps it.
 */
export const REPO_PORT_KINDS = [
  { key: 'proxy_port', label: 'proxy port', pick: (repo: RegistryRepo) => repo.proxyPort },
  { key: 'runner_proxy_port', label: 'runner proxy port', pick: (repo: RegistryRepo) => repo.runnerProxyPort },
  { key: 'broker_port', label: 'broker port', pick: (repo: RegistryRepo) => repo.broker?.port },
  { key: 'metrics_port', label: 'metrics port', pick: (repo: RegistryRepo) => repo.metricsPort },
] as const;

/** The registry's top-level key that moves the limit up, where the operator raised the sysctl to match. */
export const PROXY_PORTS_BELOW_KEY = 'proxy_ports_below';

/** The sysctl's own ceiling (a port of 65535 would be the only unprivileged one left). */
export const MAX_PROXY_PORTS_BELOW = 65535;

/**
 * Where allocation starts: clear of the well-known service ports most hosts
 * run (22, 25, 53, 80, 443, 631, ...); 700-1023 is mostly unassigned or
 * unused on a server. Ports something already listens on are skipped.
 */
export const FIRST_PROXY_PORT = 700;

/** Why `port` cannot be a proxy port under `limit` (the live sysctl), or undefined when it can. */
export function proxyPortProblem(port: number, limit: number = PRIVILEGED_PORT_LIMIT): string | undefined {
  if (!Number.isInteger(port) || port < 1 || port > 65535) return `${JSON.stringify(port)} is not a TCP port`;
  if (port >= limit)
    return `port ${port} is not below net.ipv4.ip_unprivileged_port_start (${limit}): any user, an agent too, can bind it and cut the repo off from its proxy`;
  return undefined;
}

/** The ports provision may hand out: [first, below). */
export interface ProxyPortPool {
  readonly first: number;
  readonly below: number;
  /** How many ports that is (0 when the limit is at or under the first port). */
  readonly size: number;
}

/**
 * The pool: from FIRST_PROXY_PORT up to below both the live sysctl (`live`: what the kernel enforces) and the
 * registry's limit (`declared`: what the registry accepts; proxy_ports_below, default 1024).
 */
export function proxyPortPool(
  live: number = PRIVILEGED_PORT_LIMIT,
  declared: number = PRIVILEGED_PORT_LIMIT,
): ProxyPortPool {
  const below = Math.min(live, declared);
  return { first: FIRST_PROXY_PORT, below, size: Math.max(0, below - FIRST_PROXY_PORT) };
}

/** The lowest port of the pool that is not in `taken`, or undefined when none is left. */
export function nextProxyPort(taken: ReadonlySet<number>, pool: ProxyPortPool = proxyPortPool()): number | undefined {
  for (let port = pool.first; port < pool.below; port += 1) if (!taken.has(port)) return port;
  return undefined;
}

/** How many ports of the pool are not in `taken`. */
export function proxyPortsLeft(taken: ReadonlySet<number>, pool: ProxyPortPool): number {
  let used = 0;
  for (const port of taken) if (port >= pool.first && port < pool.below) used += 1;
  return pool.size - used;
}
