// Which ports a repo's proxy may listen on: the one rule, used by registry
// validation, provisioning and doctor. An agent user must never be able to
// bind another repo's proxy port, not even in the moment Squid closes and
// reopens its ports on `squid -k reconfigure`; ports below the kernel's
// net.ipv4.ip_unprivileged_port_start need CAP_NET_BIND_SERVICE, which no
// repo user has. Pure.

/** The kernel's default net.ipv4.ip_unprivileged_port_start: the registry accepts only ports below it. */
export const PRIVILEGED_PORT_LIMIT = 1024;

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

/** The lowest port from FIRST_PROXY_PORT below `limit` that is not in `taken`, or undefined when none is left. */
export function nextProxyPort(taken: ReadonlySet<number>, limit: number = PRIVILEGED_PORT_LIMIT): number | undefined {
  for (let port = FIRST_PROXY_PORT; port < Math.min(limit, PRIVILEGED_PORT_LIMIT); port += 1)
    if (!taken.has(port)) return port;
  return undefined;
}
