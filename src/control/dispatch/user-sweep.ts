// Ending a run: every process of the repo's user goes. The user belongs to
// this repo alone, so this is exactly the run's leftovers (setsid children,
// double-forked daemons, anything an agent started), and it needs no record
// the user could forge. Root does not pick the targets: the signal is sent
// AS the user, `kill -TERM -- -1`, then `kill -KILL -- -1` after a grace.
// kill(-1) from uid U reaches only processes U may signal (real or saved uid
// U), so the kernel guarantees that no root process and no other repo's
// process is hit, whatever the user wrote anywhere. Then /proc tells whether
// anything of the uid survived (a zombie holds nothing but its pid and is
// not counted).
import type { Clock, ProcessControl, ProcessPort, UserProcess } from '../../ports.js';
import type { Command } from '../../types.js';
import { dropPrivileges, type UserAccount } from '../repo-user/index.js';
import { SYSTEM_PATH } from '../../system-path.js';

/** After SIGKILL: how long the kernel gets to finish the processes off. */
const KILL_SETTLE_MS = 3_000;
const POLL_MS = 100;

/** Pure: `kill -SIG -- -1` as the user (procps kill wants the signal in this form). */
export function signalEveryProcessAsUser(user: Pick<UserAccount, 'uid' | 'gid'>, signal: 'TERM' | 'KILL'): Command {
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
  /** Processes of the user when the sweep began. */
  readonly found: number;
  /** Whether SIGKILL was needed (something outlived SIGTERM and the grace). */
  readonly killed: boolean;
  /** Still there after SIGKILL: something the user cannot signal holds them (should never happen). */
  readonly survivors: readonly UserProcess[];
}

/** Ends every process of `user`: SIGTERM, up to graceMs for them to exit, SIGKILL, then checks /proc. */
export async function endUserProcesses(
  deps: SweepDeps,
  user: Pick<UserAccount, 'uid' | 'gid'>,
  graceMs: number,
): Promise<SweepResult> {
  const living = async () => (await deps.control.processesOfUser(user.uid)).filter((entry) => !entry.zombie);
  const waitUntilGone = async (ms: number): Promise<UserProcess[]> => {
    const deadline = deps.clock.now() + ms;
    let left = await living();
    while (left.length && deps.clock.now() < deadline) {
      await deps.clock.sleep(POLL_MS);
      left = await living();
    }
    return left;
  };
  const found = (await living()).length;
  if (found === 0) return { found, killed: false, survivors: [] };
  await deps.process.run(signalEveryProcessAsUser(user, 'TERM'));
  if ((await waitUntilGone(graceMs)).length === 0) return { found, killed: false, survivors: [] };
  let survivors: UserProcess[] = [];
  // One SIGKILL reaches every process of the uid (a fork racing it is killed too);
  // a second round only covers the report's own doubt.
  for (let round = 0; round < 2; round++) {
    await deps.process.run(signalEveryProcessAsUser(user, 'KILL'));
    survivors = await waitUntilGone(KILL_SETTLE_MS);
    if (!survivors.length) break;
  }
  return { found, killed: true, survivors };
}

/** Pure: a sweep for the log and the run record. */
export function describeSweep(result: SweepResult): string {
  if (result.found === 0) return 'no process of the user was left';
  const how = result.killed ? 'SIGTERM, then SIGKILL' : 'SIGTERM';
  const left = result.survivors.length
    ? `; still running: ${result.survivors.map((entry) => `${entry.pid} (${entry.name})`).join(', ')}`
    : '';
  return `ended ${result.found} leftover process${result.found === 1 ? '' : 'es'} of the user with ${how}${left}`;
}

export interface RunEndDeps extends SweepDeps {
  readonly process: Pick<ProcessPort, 'run'>;
}

/**
 * After a run (or a crashed one found by the watcher): stop its unit(s)
 * under systemd (systemd ends everything in the cgroup), then sweep the
 * user's processes either way.
 */
export async function endRunProcesses(
  deps: RunEndDeps,
  unitToStop: Command | undefined,
  user: Pick<UserAccount, 'uid' | 'gid'>,
  graceMs: number,
): Promise<SweepResult> {
  // A unit already gone (its last process exited) is not an error.
  if (unitToStop) await deps.process.run(unitToStop);
  return endUserProcesses(deps, user, graceMs);
}
