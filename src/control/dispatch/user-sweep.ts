// Ending a run: every process of the repo's user goes. The user belongs to
// this repo alone, so this is exactly the run's leftovers (setsid children,
// double-forked daemons, anything an agent started), and it needs no record
// the user could forge. Root does not pick the targets: the signals are sent
// AS the user, `kill -SIG -- -1`. kill(-1) from uid U reaches only processes
// U may signal (real or saved uid U), so the kernel guarantees that no root
// process and no other repo's process is hit, whatever the user wrote
// anywhere; and a process can leave uid U only with privileges the user has
// not got (no_new_privs), so "no process of U in /proc" is "nothing left".
//
// What /proc can and cannot be trusted for: a scan lists the pids, then
// reads each one, so a process that forks and exits in a loop is at a new
// pid by the time its old one is read, and a scan can see nothing while it
// runs. kill(-1) is atomic against fork (the kernel delivers it to a child
// being forked too). So the first scan only decides whether SIGTERM and its
// grace are worth it; then, whatever it saw, the user's processes are frozen
// (SIGSTOP: a stopped process neither forks nor moves, so a scan of them is
// exact), counted, and killed, round after round until /proc shows none,
// within a bound. A zombie holds
// nothing but its pid and is not counted; a leader whose other threads run
// on is (src/io/proc.ts).
import type { Clock, ProcessControl, ProcessPort, UserProcess } from '../../ports.js';
import type { Command } from '../../types.js';
import { dropPrivileges, type UserAccount } from '../repo-user/index.js';
import { SYSTEM_PATH } from '../../system-path.js';

/** After SIGKILL: how long the kernel gets to finish the processes off before the next round. */
const KILL_SETTLE_MS = 3_000;
/** Rounds of SIGSTOP and SIGKILL stop after this long: what is left then is reported, not waited for. */
const KILL_BOUND_MS = 10_000;
const POLL_MS = 50;

export type SweepSignal = 'TERM' | 'STOP' | 'KILL';

/** Pure: `kill -SIG -- -1` as the user (procps kill wants the signal in this form). */
export function signalEveryProcessAsUser(user: Pick<UserAccount, 'uid' | 'gid'>, signal: SweepSignal): Command {
  // kill(-1) as root would signal every process on the host.
  if (!Number.isInteger(user.uid) || user.uid <= 0)
    throw new Error(
      `refusing to signal every process of uid ${user.uid}: only a repo user's own processes are ever swept`,
    );
  return dropPrivileges(user, {
    program: 'kill',
    args: [`-${signal}`, '--', '-1'],
    env: { PATH: SYSTEM_PATH },
    cwd: '/',
  });
}

export interface SweepDeps {
  readonly process: Pick<ProcessPort, 'run'>;
  readonly control: Pick<ProcessControl, 'processesOfUser'>;
  readonly clock: Clock;
}

export interface SweepResult {
  /** Processes of the user the sweep met: when it began, or frozen later if more (one the first scan missed). */
  readonly found: number;
  /** Whether SIGTERM was sent: the first scan saw a process of the user. */
  readonly termed: boolean;
  /** Whether SIGKILL ended something (a process outlived SIGTERM and the grace, or the scan missed it). */
  readonly killed: boolean;
  /** Still there after the last round: something the user cannot signal holds them, or they sleep in the kernel. */
  readonly survivors: readonly UserProcess[];
  /** Why a signal could not be sent (the kill command failed): the survivors are then only what /proc showed. */
  readonly failure?: string;
}

/**
 * Ends every process of `user`: SIGTERM and up to graceMs for them to exit
 * when any is seen; then, always, SIGSTOP and a scan of the frozen uid, and
 * while it finds any, SIGKILL and a wait, round after round until /proc
 * shows none or KILL_BOUND_MS has passed.
 */
export async function endUserProcesses(
  deps: SweepDeps,
  user: Pick<UserAccount, 'uid' | 'gid'>,
  graceMs: number,
): Promise<SweepResult> {
  const living = async () => (await deps.control.processesOfUser(user.uid)).filter((entry) => !entry.zombie);
  const waitUntilGone = async (deadline: number): Promise<UserProcess[]> => {
    let left = await living();
    while (left.length && deps.clock.now() < deadline) {
      await deps.clock.sleep(POLL_MS);
      left = await living();
    }
    return left;
  };
  const failures: string[] = [];
  const signal = async (name: SweepSignal) => {
    const result = await deps.process.run(signalEveryProcessAsUser(user, name));
    if (result.exitCode !== 0)
      failures.push(`kill -${name} -1 as uid ${user.uid} exited ${result.exitCode}: ${result.stderr.trim()}`);
  };
  const seen = (await living()).length;
  if (seen) {
    await signal('TERM');
    await waitUntilGone(deps.clock.now() + graceMs);
  }
  let frozen = 0;
  let survivors: UserProcess[] = [];
  const bound = deps.clock.now() + KILL_BOUND_MS;
  for (;;) {
    await signal('STOP');
    const stopped = await living();
    // Nothing of the uid can fork or move once stopped, so this scan is exact: empty means nothing is left.
    if (!stopped.length && !failures.length) break;
    frozen = Math.max(frozen, stopped.length);
    await signal('KILL');
    survivors = await waitUntilGone(Math.min(bound, deps.clock.now() + KILL_SETTLE_MS));
    if (!survivors.length || deps.clock.now() >= bound) break;
  }
  return {
    found: Math.max(seen, frozen),
    termed: seen > 0,
    killed: frozen > 0,
    survivors,
    ...(failures.length ? { failure: [...new Set(failures)].join('; ') } : {}),
  };
}

/** Pure: a sweep for the log and the run record. */
export function describeSweep(result: SweepResult): string {
  const failure = result.failure ? `; could not signal the user's processes: ${result.failure}` : '';
  if (result.found === 0 && !result.survivors.length) return `no process of the user was left${failure}`;
  const how = !result.killed ? 'SIGTERM' : result.termed ? 'SIGTERM, then SIGSTOP and SIGKILL' : 'SIGSTOP and SIGKILL';
  const left = result.survivors.length
    ? `; still running: ${result.survivors.map((entry) => `${entry.pid} (${entry.name})`).join(', ')}`
    : '';
  return `ended ${result.found} leftover process${result.found === 1 ? '' : 'es'} of the user with ${how}${left}${failure}`;
}

export interface RunEndDeps extends SweepDeps {
  readonly process: Pick<ProcessPort, 'run'>;
}

/**
 * After a run (or a crashed one found by the watcher): stop its unit(s)
 * under systemd (systemd ends everything in the cgroup), then sweep the
 * processes of each of the repo's users (the runner, the agent, the gate)
 * either way, all at once: each sweep signals as its own uid only.
 */
export async function endRunProcesses(
  deps: RunEndDeps,
  unitToStop: Command | undefined,
  users: Pick<UserAccount, 'uid' | 'gid'> | readonly Pick<UserAccount, 'uid' | 'gid'>[],
  graceMs: number,
): Promise<SweepResult> {
  // A unit already gone (its last process exited) is not an error.
  if (unitToStop) await deps.process.run(unitToStop);
  const each = Array.isArray(users) ? users : [users as Pick<UserAccount, 'uid' | 'gid'>];
  const unique = each.filter((user, i) => each.findIndex((other) => other.uid === user.uid) === i);
  return mergeSweeps(await Promise.all(unique.map((user) => endUserProcesses(deps, user, graceMs))));
}

/** Pure: the sweeps of several users as one result. */
export function mergeSweeps(results: readonly SweepResult[]): SweepResult {
  const failures = results.flatMap((result) => (result.failure ? [result.failure] : []));
  return {
    found: results.reduce((sum, result) => sum + result.found, 0),
    termed: results.some((result) => result.termed),
    killed: results.some((result) => result.killed),
    survivors: results.flatMap((result) => result.survivors),
    ...(failures.length ? { failure: failures.join('; ') } : {}),
  };
}
