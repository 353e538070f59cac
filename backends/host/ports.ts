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
import { nextProxyPort, proxyPortProblem } from '../../src/control/registry/proxy-ports.js';
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

/** A proxy port for a new or moved repo: privileged under the live limit, in no registry entry, with no listener. */
export function freeProxyPort(
  taken: ReadonlySet<number>,
  state: Pick<PortsState, 'listeners' | 'unprivilegedStart'>,
): number | undefined {
  return nextProxyPort(
    new Set([...taken, ...state.listeners.map((listener) => listener.port)]),
    state.unprivilegedStart,
  );
}

/** Problems with the proxy ports the registry will have, each with its fix; empty when all is well. */
export function proxyPortProblems(repos: readonly { name: string; proxyPort: number }[], state: PortsState): string[] {
  const problems: string[] = [];
  for (const repo of repos) {
    const unprivileged = proxyPortProblem(repo.proxyPort, state.unprivilegedStart);
    if (unprivileged)
      problems.push(
        `repo "${repo.name}": ${unprivileged}; set it back: sysctl -w net.ipv4.ip_unprivileged_port_start=1024 (and drop the override in /etc/sysctl.d)`,
      );
    const holder = foreignHolder(repo.proxyPort, state);
    if (holder)
      problems.push(
        `repo "${repo.name}": proxy port ${repo.proxyPort} is held by ${holder}, not by agent-runner's Squid; stop that service (ss -ltnp 'sport = :${repo.proxyPort}') or move the repo: set repos.${repo.name}.proxy_port to a free port below 1024`,
      );
  }
  return problems;
}
