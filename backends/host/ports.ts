// Proxy ports on the host: who listens where, and whether a port is free or
// ours. Read (through the wrapper: the host, or a test's namespace) ->
// decide (pure) -> the planner and doctor act on it.
//
// Platform limits: `ss -ltnp` names a socket's processes only when they are
// visible from here (same pid namespace); a socket with no visible process is
// reported as held by an unknown process. net.ipv4.ip_unprivileged_port_start
// is per network namespace, so it is read where the ports are.
import { squidPidFile } from '../../src/paths.js';
import type { FsPort, ProcessPort } from '../../src/ports.js';
import { FailedError } from '../../src/errors.js';
import {
  MAX_PROXY_PORTS_BELOW,
  nextProxyPort,
  PRIVILEGED_PORT_LIMIT,
  PROXY_PORTS_BELOW_KEY,
  proxyPortPool,
  proxyPortProblem,
  proxyPortsLeft,
  type ProxyPortPool,
} from '../../src/control/registry/proxy-ports.js';
import { describeFailure, onHost, systemCommand, type CommandWrapper } from './exec.js';

export interface PortHolder {
  readonly command: string;
  readonly pid: number;
}

export interface Listener {
  readonly address: string;
  readonly port: number;
  /** Empty when the holding process is not visible from here. */
  readonly holders: readonly PortHolder[];
}

export interface PortsState {
  /** net.ipv4.ip_unprivileged_port_start where the proxy listens. */
  readonly unprivilegedStart: number;
  /** Every listening TCP socket (IPv4 and IPv6, any address). */
  readonly listeners: readonly Listener[];
  /** Our Squid: the pid in its pid file and every descendant. Empty when it is not running. */
  readonly squidPids: readonly number[];
}

/** Parses `ss -H -ltnp` output. */
export function parseListeners(text: string): Listener[] {
  const listeners: Listener[] = [];
  for (const line of text.split('\n')) {
    const fields = line.trim().split(/\s+/);
    if (fields.length < 5 || fields[0] !== 'LISTEN') continue;
    const local = fields[3]!;
    const colon = local.lastIndexOf(':');
    const port = Number(local.slice(colon + 1));
    if (colon < 0 || !Number.isInteger(port)) continue;
    const holders = [...line.matchAll(/\("((?:[^"\\]|\\.)*)",pid=(\d+),fd=\d+\)/g)].map((match) => ({
      command: match[1]!,
      pid: Number(match[2]),
    }));
    listeners.push({ address: local.slice(0, colon), port, holders });
  }
  return listeners;
}

/** The live sysctl, read where the wrapper runs. */
async function readUnprivilegedStart(process: ProcessPort, wrap: CommandWrapper = onHost): Promise<number> {
  const result = await process.run(wrap(systemCommand('cat', ['/proc/sys/net/ipv4/ip_unprivileged_port_start'])));
  const value = Number(result.stdout.trim());
  if (result.exitCode !== 0 || !/^\d+$/.test(result.stdout.trim()))
    throw new FailedError(`cannot read net.ipv4.ip_unprivileged_port_start (${describeFailure(result)})`);
  return value;
}

async function readListeners(process: ProcessPort, wrap: CommandWrapper = onHost): Promise<Listener[]> {
  const result = await process.run(wrap(systemCommand('ss', ['-H', '-l', '-t', '-n', '-p'])));
  if (result.exitCode !== 0)
    throw new FailedError(`cannot list listening sockets with ss (${describeFailure(result)}); install iproute2`);
  return parseListeners(result.stdout);
}

/** The pid in Squid's pid file and all its descendants (the kid that holds the ports, its helpers). */
async function readSquidPids(fs: FsPort, squidStateDir: string): Promise<number[]> {
  const text = (await fs.readTextIfExists(squidPidFile(squidStateDir)))?.trim();
  if (!text || !/^\d+$/.test(text)) return [];
  const pids: number[] = [];
  const queue = [Number(text)];
  while (queue.length && pids.length < 1000) {
    const pid = queue.shift()!;
    // A pid file can outlive its Squid, and the pid be reused: the master must be a squid.
    if (pids.length === 0 && (await fs.readTextIfExists(`/proc/${pid}/comm`))?.trim() !== 'squid') return [];
    if ((await fs.readTextIfExists(`/proc/${pid}/stat`)) === undefined) continue;
    pids.push(pid);
    const children = (await fs.readTextIfExists(`/proc/${pid}/task/${pid}/children`)) ?? '';
    for (const child of children.trim().split(/\s+/)) if (/^\d+$/.test(child)) queue.push(Number(child));
  }
  return pids;
}

export async function readPortsState(
  deps: { process: ProcessPort; fs: FsPort; wrap?: CommandWrapper },
  squidStateDir: string,
): Promise<PortsState> {
  const wrap = deps.wrap ?? onHost;
  return {
    unprivilegedStart: await readUnprivilegedStart(deps.process, wrap),
    listeners: await readListeners(deps.process, wrap),
    squidPids: await readSquidPids(deps.fs, squidStateDir),
  };
}

// ---------------------------------------------------------------- decisions (pure)

/** "python3 (pid 41)", or what is known when the holder is not visible. */
export function describeHolders(listeners: readonly Listener[]): string {
  const named = listeners.flatMap((listener) =>
    listener.holders.map((holder) => `${holder.command} (pid ${holder.pid})`),
  );
  const unknown = listeners
    .filter((listener) => listener.holders.length === 0)
    .map((listener) => `an unknown process on ${listener.address}`);
  return [...new Set([...named, ...unknown])].join(', ');
}

/**
 * Who holds `port` if it is not our Squid: undefined when nothing listens
 * there or only our Squid does; otherwise the holders, described.
 */
export function foreignHolder(port: number, state: Pick<PortsState, 'listeners' | 'squidPids'>): string | undefined {
  const ours = new Set(state.squidPids);
  const foreign = state.listeners.filter(
    (listener) =>
      listener.port === port &&
      (listener.holders.length === 0 || listener.holders.some((holder) => !ours.has(holder.pid))),
  );
  return foreign.length ? describeHolders(foreign) : undefined;
}

/** Whether our Squid listens on 127.0.0.1:port, and only it. */
export function squidOwns(port: number, state: Pick<PortsState, 'listeners' | 'squidPids'>): boolean {
  return (
    foreignHolder(port, state) === undefined &&
    state.listeners.some((listener) => listener.port === port && listener.address === '127.0.0.1')
  );
}

/** The pool's use: how many ports are left, who holds the others, and both limits it comes from. */
export interface ProxyPortBudget {
  readonly pool: ProxyPortPool;
  /** Ports of the pool neither a registry entry nor a listener holds. */
  readonly left: number;
  /** Ports of the pool held by registry entries. */
  readonly byRepos: number;
  /** Further ports of the pool something else listens on (skipped, never handed out). */
  readonly byOthers: number;
  /** The live net.ipv4.ip_unprivileged_port_start. */
  readonly live: number;
  /** The registry's proxy_ports_below (1024 unless raised). */
  readonly declared: number;
}

/** Pure: the pool under the live sysctl and the registry's limit, and how much of it `taken` and the listeners use. */
export function proxyPortBudget(
  taken: ReadonlySet<number>,
  state: Pick<PortsState, 'listeners' | 'unprivilegedStart'>,
  declared: number = PRIVILEGED_PORT_LIMIT,
): ProxyPortBudget {
  const pool = proxyPortPool(state.unprivilegedStart, declared);
  const inPool = (port: number) => port >= pool.first && port < pool.below;
  const repos = new Set([...taken].filter(inPool));
  const others = new Set(
    state.listeners.map((listener) => listener.port).filter((port) => inPool(port) && !repos.has(port)),
  );
  return {
    pool,
    left: proxyPortsLeft(new Set([...repos, ...others]), pool),
    byRepos: repos.size,
    byOthers: others.size,
    live: state.unprivilegedStart,
    declared,
  };
}

/** A proxy port for a new or moved repo: privileged under both limits, in no registry entry, with no listener. */
export function freeProxyPort(
  taken: ReadonlySet<number>,
  state: Pick<PortsState, 'listeners' | 'unprivilegedStart'>,
  declared: number = PRIVILEGED_PORT_LIMIT,
): number | undefined {
  return nextProxyPort(
    new Set([...taken, ...state.listeners.map((listener) => listener.port)]),
    proxyPortPool(state.unprivilegedStart, declared),
  );
}

/** Each repo holds two ports of the pool: its agent's proxy_port and its runner's runner_proxy_port. */
export const PORTS_PER_REPO = 2;

/**
 * Pure: "322 of 324 proxy ports left (700-1023): room for 161 more repos at 2 ports each ...", with what holds the rest
 * and, when limits disagree, which.
 */
export function describePortBudget(budget: ProxyPortBudget): string {
  const { pool, left } = budget;
  const range = pool.size
    ? `${pool.first}-${pool.below - 1}`
    : `none: the limit ${pool.below} is not above ${pool.first}`;
  const held = [
    ...(budget.byRepos ? [`${budget.byRepos} by repos`] : []),
    ...(budget.byOthers ? [`${budget.byOthers} by other listeners`] : []),
  ];
  const limits =
    budget.live === budget.declared
      ? `below net.ipv4.ip_unprivileged_port_start ${budget.live}`
      : budget.live < budget.declared
        ? `below net.ipv4.ip_unprivileged_port_start ${budget.live}, though ${PROXY_PORTS_BELOW_KEY} is ${budget.declared}`
        : `below ${PROXY_PORTS_BELOW_KEY} ${budget.declared}, though net.ipv4.ip_unprivileged_port_start is ${budget.live}`;
  const repos = Math.floor(left / PORTS_PER_REPO);
  return `${left} of ${pool.size} proxy port${pool.size === 1 ? '' : 's'} left (${range}, ${limits}${held.length ? `; held: ${held.join(', ')}` : ''}): room for ${repos} more repo${repos === 1 ? '' : 's'} at ${PORTS_PER_REPO} ports each (the agent's and the runner's)`;
}

/**
 * Pure: how to get more proxy ports. The kernel's limit and the registry's must both move: the sysctl makes the
 * ports privileged, proxy_ports_below lets the registry use them. Or the repo goes to another host.
 */
export function morePortsFix(budget: ProxyPortBudget, registryFile: string): string {
  const elsewhere = 'or provision the repo on another host (docs/operations.md, "How many repos a host holds")';
  const persist = (value: number) =>
    `sysctl -w net.ipv4.ip_unprivileged_port_start=${value} and make it last (echo net.ipv4.ip_unprivileged_port_start=${value} > /etc/sysctl.d/60-agent-runner-ports.conf)`;
  if (budget.live > budget.declared)
    return `the kernel already keeps ports below ${budget.live} for root: add ${PROXY_PORTS_BELOW_KEY} = ${budget.live} at the top of ${registryFile}; ${elsewhere}`;
  if (budget.live < budget.declared && budget.declared === PRIVILEGED_PORT_LIMIT)
    return `net.ipv4.ip_unprivileged_port_start is ${budget.live}, under the kernel's default ${PRIVILEGED_PORT_LIMIT}, so ports ${budget.live}-${PRIVILEGED_PORT_LIMIT - 1} are open to every user: ${sysctlBackFix()}; ${elsewhere}`;
  if (budget.live < budget.declared)
    return `${registryFile} says ${PROXY_PORTS_BELOW_KEY} = ${budget.declared} but the kernel's limit is ${budget.live}: ${persist(budget.declared)}; ${elsewhere}`;
  const next = Math.min(MAX_PROXY_PORTS_BELOW, budget.declared + 1024);
  return `where you accept that on this host every port below ${next} needs root to bind (a service that binds one as another user then fails), ${persist(next)} and add ${PROXY_PORTS_BELOW_KEY} = ${next} at the top of ${registryFile}; ${elsewhere}`;
}

/** Problems with the proxy ports (of both kinds) the registry will have, each with its fix; empty when all is well. */
export function proxyPortProblems(
  repos: readonly { name: string; proxyPort: number; runnerProxyPort?: number }[],
  state: PortsState,
  declared: number = PRIVILEGED_PORT_LIMIT,
): string[] {
  const problems: string[] = [];
  for (const repo of repos) {
    const ports = [
      { port: repo.proxyPort, key: 'proxy_port', label: 'proxy port' },
      ...(repo.runnerProxyPort === undefined
        ? []
        : [{ port: repo.runnerProxyPort, key: 'runner_proxy_port', label: 'runner proxy port' }]),
    ];
    for (const { port, key, label } of ports) {
      const unprivileged = proxyPortProblem(port, state.unprivilegedStart);
      if (unprivileged) problems.push(`repo "${repo.name}": ${unprivileged}; ${sysctlBackFix(declared)}`);
      const holder = foreignHolder(port, state);
      if (holder)
        problems.push(
          `repo "${repo.name}": ${label} ${port} is held by ${holder}, not by agent-runner's Squid; stop that service (ss -ltnp 'sport = :${port}') or move the repo: set repos.${repo.name}.${key} to a free port below ${Math.min(declared, state.unprivilegedStart)}`,
        );
    }
  }
  return problems;
}

/** Pure: the fix for a live sysctl under the registry's limit (lowered by hand, or raised and lost on a reboot). */
export function sysctlBackFix(declared: number = PRIVILEGED_PORT_LIMIT): string {
  return declared === PRIVILEGED_PORT_LIMIT
    ? `set it back: sysctl -w net.ipv4.ip_unprivileged_port_start=${PRIVILEGED_PORT_LIMIT} (and drop the override in /etc/sysctl.d)`
    : `set it to what ${PROXY_PORTS_BELOW_KEY} in the registry says: sysctl -w net.ipv4.ip_unprivileged_port_start=${declared}, and make it last in /etc/sysctl.d/`;
}
