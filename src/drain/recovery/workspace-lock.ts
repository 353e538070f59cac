// One drain per repository: the lock in the repository's common git dir
// (paths.ts repoDrainLock), taken through the one lock abstraction
// (src/lock.ts over the LockPort) by a drain and by the lifecycle commands
// that change the staging branch. Being in the repository, it holds across
// state dirs and across the worktrees a drain could be started from. A lock
// whose holder is gone (or whose pid now belongs to another process) is taken
// over at once, so a crash never wedges the repo; a live holder is busy (exit 75).
import type { Clock, HeldLock, LockHolder, LockPort, ProcessPort } from '../../ports.js';
import type { Git } from '../../git/git.js';
import { acquireLock } from '../../lock.js';
import { repoDrainLock } from '../../paths.js';
import { commonGitDir } from '../../git/worktree.js';

export interface WorkspaceLockDeps {
  readonly locks: LockPort;
  readonly process: Pick<ProcessPort, 'startTimeOf'>;
  readonly clock: Clock;
}

function busyMessage(file: string, holder: LockHolder | undefined): string {
  if (!holder) return `${file} is held by a process that has not recorded itself yet; wait for it to finish`;
  return `${file} is held by pid ${holder.pid} (${holder.command}) since ${holder.since}; wait for it to finish`;
}

/** Takes the lock at `file` for `purpose`, or throws BusyError naming the holder. */
export async function acquireWorkspaceLock(deps: WorkspaceLockDeps, file: string, purpose: string): Promise<HeldLock> {
  return acquireLock(deps, file, {
    command: purpose,
    wait: false,
    what: file,
    busyMessage: (holder) => busyMessage(file, holder),
  });
}

export interface RepoLock {
  readonly lock: HeldLock;
  /** The repository's common git dir, where the lock lives. */
  readonly gitCommonDir: string;
}

/** Takes the repository's drain lock for the checkout at `workspace`. */
export async function acquireRepoLock(
  deps: WorkspaceLockDeps,
  git: Git,
  workspace: string,
  purpose: string,
): Promise<RepoLock> {
  const gitCommonDir = await commonGitDir(git, workspace);
  return { lock: await acquireWorkspaceLock(deps, repoDrainLock(gitCommonDir), purpose), gitCommonDir };
}
