// Git lock files and the gits a gone run left, handled under the drain lock before anything uses git in the
// repository: by the drain, and by the lifecycle commands (promote's fast-forward runs in the checkout). The places
// git locks live: the common git dir's own files (index, HEAD, config, packed-refs), each worktree's
// (worktrees/NAME/index.lock ...), and refs (refs/heads/auto/work.lock ...). Read (the locks, the processes in the
// repository and whether their starters run) -> decide (verdict/git-locks.ts) -> apply (end, remove, or busy).
//
// This runs as the repo user, on the user's own processes: the kernel lets it signal nothing else. A process is
// signalled only while its pid still has the start time it was judged with.
import * as path from 'node:path';
import type { Clock, FsPort, ProcessControl, ProcessPort } from '../../ports.js';
import { endedKey, judgeGitLocks, type GitLockVerdict, type LeftProcess } from '../verdict/index.js';
import { worktreesDir } from '../../paths.js';
import { BusyError } from '../../errors.js';
import { parseStartedBy, stillRunning } from '../../process-identity.js';

export interface GitLockDeps {
  readonly fs: FsPort;
  readonly process: Pick<ProcessPort, 'startTimeOf'>;
  readonly clock: Clock;
  readonly control: Pick<ProcessControl, 'self' | 'processesInRepository' | 'signalGroup' | 'signalProcess'>;
}

/** How long a gone run's git may take to finish by itself, then how long it gets after SIGTERM before SIGKILL. */
export const LEFT_GIT_WAIT_MS = 5000;
export const LEFT_GIT_GRACE_MS = 5000;
/** Rounds of ending what a gone run left (a round finds what the last one's signals did not reach). */
const MAX_ROUNDS = 3;

/** Lock files directly in `dir` (files named *.lock; the drain lock is a directory and is not one). */
async function locksIn(fs: FsPort, dir: string): Promise<string[]> {
  const found: string[] = [];
  for (const name of await fs.list(dir)) {
    if (!name.endsWith('.lock')) continue;
    const stat = await fs.stat(path.join(dir, name));
    if (stat && !stat.isDirectory) found.push(path.join(dir, name));
  }
  return found;
}

/** Lock files anywhere under refs/ (a ref lock sits beside its ref). */
async function refLocks(fs: FsPort, dir: string): Promise<string[]> {
  const found: string[] = [];
  for (const name of await fs.list(dir)) {
    const file = path.join(dir, name);
    const stat = await fs.stat(file);
    if (stat?.isDirectory) found.push(...(await refLocks(fs, file)));
    else if (stat && name.endsWith('.lock')) found.push(file);
  }
  return found;
}

export async function findGitLocks(fs: FsPort, gitCommonDir: string): Promise<string[]> {
  const found = [...(await locksIn(fs, gitCommonDir)), ...(await refLocks(fs, path.join(gitCommonDir, 'refs')))];
  const worktrees = path.join(gitCommonDir, 'worktrees');
  for (const name of await fs.list(worktrees)) found.push(...(await locksIn(fs, path.join(worktrees, name))));
  return found.sort();
}

/** Read: the locks, every process working in the repository, and whether the process that started each still runs. */
async function judgeNow(
  deps: GitLockDeps,
  workspace: string,
  gitCommonDir: string,
  alreadyEnded: ReadonlySet<string>,
): Promise<GitLockVerdict> {
  const locks = await findGitLocks(deps.fs, gitCommonDir);
  // Where a git of this repository works.
  const dirs = [workspace, worktreesDir(workspace), gitCommonDir];
  const self = await deps.control.self();
  const processes = [];
  for (const found of await deps.control.processesInRepository(locks, dirs)) {
    const startedBy = parseStartedBy(found.startedBy);
    const starterRunning = startedBy !== undefined && (await stillRunning(deps.process, startedBy));
    processes.push({ ...found, startedBy, starterRunning });
  }
  return judgeGitLocks({ locks, processes, self: { pid: self.pid, uid: self.uid }, alreadyEnded });
}

/** Signals each that is still the process judged (same pid, same start time), read just before. */
async function signalEach(deps: GitLockDeps, left: readonly LeftProcess[], name: 'SIGTERM' | 'SIGKILL'): Promise<void> {
  for (const one of left) {
    if (!(await stillRunning(deps.process, one))) continue;
    // A git the runner started leads its own process group: the group takes its filter or editor with it.
    if (one.leadsGroup) deps.control.signalGroup(one.pid, name);
    else deps.control.signalProcess(one.pid, name);
  }
}

async function stillThere(deps: GitLockDeps, left: readonly LeftProcess[]): Promise<LeftProcess[]> {
  const still: LeftProcess[] = [];
  for (const one of left) if (await stillRunning(deps.process, one)) still.push(one);
  return still;
}

async function waitWhileAny(deps: GitLockDeps, left: LeftProcess[], ms: number): Promise<LeftProcess[]> {
  const deadline = deps.clock.now() + ms;
  let remaining = await stillThere(deps, left);
  while (remaining.length && deps.clock.now() < deadline) {
    await deps.clock.sleep(Math.min(100, Math.max(1, deadline - deps.clock.now())));
    remaining = await stillThere(deps, remaining);
  }
  return remaining;
}

const seconds = (ms: number) => `${Math.round(ms / 100) / 10}s`;

/** Pure: a note per process ended, a group's members (a git's filter, say) in their leader's. */
function endNotes(
  left: readonly LeftProcess[],
  afterWait: readonly LeftProcess[],
  afterTerm: readonly LeftProcess[],
  waitMs: number,
): string[] {
  const leaders = new Set(left.filter((one) => one.leadsGroup).map((one) => one.pid));
  const inLeadersNote = (one: LeftProcess) => !one.leadsGroup && leaders.has(one.pgid);
  return left
    .filter((one) => !inLeadersNote(one))
    .map((one) => {
      const members = left.filter((other) => inLeadersNote(other) && other.pgid === one.pid);
      const group = members.length
        ? ` and ${members.length} of its process group (${members.map((member) => `${member.name} pid ${member.pid}`).join(', ')})`
        : '';
      const holding = one.file ? `, holding ${one.file}` : '';
      const what = `${one.name || 'a process'} (pid ${one.pid})${group} left in the repository by agent-runner pid ${one.starter}, which is gone${holding}`;
      if (!afterWait.includes(one)) return `${what}: finished by itself`;
      if (!afterTerm.includes(one)) return `ended ${what}: SIGTERM after waiting ${seconds(waitMs)}`;
      return `ended ${what}: SIGKILL, SIGTERM did not end it in ${seconds(LEFT_GIT_GRACE_MS)}`;
    });
}

/** Apply: waits up to waitMs for them to finish, then SIGTERM, then SIGKILL after the grace. */
async function endLeft(deps: GitLockDeps, left: LeftProcess[], waitMs: number): Promise<string[]> {
  const afterWait = await waitWhileAny(deps, left, waitMs);
  await signalEach(deps, afterWait, 'SIGTERM');
  const afterTerm = await waitWhileAny(deps, afterWait, LEFT_GIT_GRACE_MS);
  await signalEach(deps, afterTerm, 'SIGKILL');
  return endNotes(left, afterWait, afterTerm, waitMs);
}

/**
 * Ends what a gone run left working in the repository whose checkout is `workspace`, then removes the stale git
 * locks; returns a note for each. BusyError, naming each holder, when a live process holds (or may hold) a lock: it
 * is never ended. Call it holding the drain lock, after the killed drain's recorded processes were ended.
 */
export async function clearStaleGitLocks(
  deps: GitLockDeps,
  workspace: string,
  gitCommonDir: string,
  waitMs = LEFT_GIT_WAIT_MS,
): Promise<string[]> {
  const notes: string[] = [];
  const ended = new Set<string>();
  let verdict = await judgeNow(deps, workspace, gitCommonDir, ended);
  for (let round = 0; verdict.end.length && round < MAX_ROUNDS; round++) {
    notes.push(...(await endLeft(deps, [...verdict.end], round === 0 ? waitMs : 0)));
    for (const one of verdict.end) ended.add(endedKey(one));
    verdict = await judgeNow(deps, workspace, gitCommonDir, ended);
  }
  // Still new ones after every round: something keeps starting them.
  const reasons = [
    ...verdict.end.map(
      (one) =>
        `${one.name} pid ${one.pid}, left in the repository by agent-runner pid ${one.starter}, which is gone, is still there after ${MAX_ROUNDS} rounds of ending such processes; find what starts them`,
    ),
    ...verdict.busy.map((held) => held.reason),
  ];
  if (reasons.length) throw new BusyError(reasons.join('\n'));
  for (const file of verdict.remove) {
    await deps.fs.remove(file);
    notes.push(`removed git lock ${file} left by a git that was killed (no process holds it)`);
  }
  return notes;
}
