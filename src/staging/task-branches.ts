// Task branches and their worktrees (auto/<id> beside auto/work): cut one
// from auto/work, drop one, list them. Ref-changing git steps run one at a
// time through `refs` (git's own locks would make parallel ones fail).
import * as path from 'node:path';
import type { FsPort } from '../ports.js';
import type { Git } from '../git/git.js';
import { taskWorktree } from '../paths.js';
import { STAGING_BRANCH, STAGING_REF, TASK_BRANCH_PREFIX, taskBranch } from './names.js';
import { deleteBranch, listBranches } from '../git/refs.js';
import { addWorktree, moveWorktree, pruneWorktrees, removeWorktree, tryAddWorktree } from '../git/worktree.js';
import { checkoutNewBranch, cleanEverythingUntracked, resetHard } from '../git/tree.js';

/** Runs short ref-changing steps one at a time (a Mutex). */
export interface RefsLock {
  run<T>(work: () => Promise<T>): Promise<T>;
}

export interface TaskBranchDeps {
  readonly git: Git;
  readonly ports: { readonly fs: FsPort };
  readonly workspace: string;
  readonly refs: RefsLock;
  /**
   * A drain's worktrees of finished tasks, kept to be the next task's; without it, a finished task's worktree is
   * removed at once.
   */
  readonly spares?: SpareWorktrees;
}

/** A finished task's worktree, still on its branch, waiting to be the next task's. */
interface Spare {
  readonly taskId: string;
  /** Delete its branch once the worktree is someone else's (a parked task's branch stays). */
  readonly deleteBranch: boolean;
}

/**
 * The worktrees of a drain's finished tasks. Cutting a task a fresh worktree
 * writes every file of the repository (and removing one deletes them all);
 * a finished task's worktree, moved to the new task's folder and switched to
 * its branch, writes only the files that differ, and `clean -ffdx` removes
 * whatever the last agent left that git does not track: the new task starts
 * from the same tree either way. A drain gives them all back at its end
 * (releaseSpares); after a crash, recovery removes them with their branches
 * like any leftover.
 */
export class SpareWorktrees {
  private readonly spares: Spare[] = [];

  add(spare: Spare): void {
    const known = this.spares.findIndex((entry) => entry.taskId === spare.taskId);
    if (known >= 0) this.spares.splice(known, 1);
    this.spares.push(spare);
  }

  /** The task's own earlier worktree when it has one (it must not stay a spare while the task runs again), else any. */
  take(taskId?: string): Spare | undefined {
    const own = this.spares.findIndex((spare) => spare.taskId === taskId);
    return own >= 0 ? this.spares.splice(own, 1)[0] : this.spares.pop();
  }
}

/** The task branches in the workspace (every auto/* but auto/work). */
export async function listTaskBranches(git: Git, workspace: string): Promise<string[]> {
  return (await listBranches(git, workspace, TASK_BRANCH_PREFIX)).filter((name) => name !== STAGING_BRANCH);
}

/** The worktree and its folder gone; git's bookkeeping pruned only when git could not remove it itself. */
async function dropWorktree(deps: Omit<TaskBranchDeps, 'refs'>, dir: string): Promise<void> {
  if (!(await deps.ports.fs.stat(dir))) return;
  if (await removeWorktree(deps.git, deps.workspace, dir)) return;
  await deps.ports.fs.remove(dir);
  await pruneWorktrees(deps.git, deps.workspace);
}

/**
 * Removes a task's worktree and (optionally) its branch; tolerant of either
 * being gone already. With spares, the worktree is kept for the next task
 * instead, and the branch goes when it is reused or released.
 */
export async function removeTaskWorktree(
  deps: TaskBranchDeps,
  taskId: string,
  deleteTheBranch: boolean,
): Promise<void> {
  if (deps.spares && (await deps.ports.fs.stat(taskWorktree(deps.workspace, taskId)))?.isDirectory) {
    deps.spares.add({ taskId, deleteBranch: deleteTheBranch });
    return;
  }
  await deps.refs.run(async () => {
    await dropWorktree(deps, taskWorktree(deps.workspace, taskId));
    if (deleteTheBranch) await deleteBranch(deps.git, deps.workspace, taskBranch(taskId));
  });
}

/** Removes every spare worktree (and the branches that were to go): the end of a drain. */
export async function releaseSpares(deps: TaskBranchDeps): Promise<void> {
  const direct = { ...deps, spares: undefined };
  for (let spare = deps.spares?.take(); spare; spare = deps.spares?.take())
    await removeTaskWorktree(direct, spare.taskId, spare.deleteBranch);
}

/**
 * A spare worktree moved to `dir` and switched to the task's branch, cut from
 * auto/work as it is now; false (the spare removed) when git would not.
 */
async function reuseSpare(deps: TaskBranchDeps, spare: Spare, taskId: string, dir: string): Promise<boolean> {
  const from = taskWorktree(deps.workspace, spare.taskId);
  const switched = await deps.refs.run(async () => {
    if (from !== dir) {
      await dropWorktree(deps, dir);
      if (!(await moveWorktree(deps.git, deps.workspace, from, dir))) return false;
    }
    if (!(await checkoutNewBranch(deps.git, dir, taskBranch(taskId), STAGING_REF))) return false;
    if (spare.deleteBranch && spare.taskId !== taskId)
      await deleteBranch(deps.git, deps.workspace, taskBranch(spare.taskId));
    return true;
  });
  if (switched) return true;
  // The folder may have moved before git refused: removed from there first, so the old branch is free to go.
  await deps.refs.run(() => dropWorktree(deps, dir));
  await removeTaskWorktree({ ...deps, spares: undefined }, spare.taskId, spare.deleteBranch);
  return false;
}

/**
 * A fresh worktree for a task on auto/<id>, cut from auto/work as it is now
 * (a retry starts over, not from the last attempt). Returns its folder.
 */
export async function cutTaskWorktree(deps: TaskBranchDeps, taskId: string): Promise<string> {
  const dir = taskWorktree(deps.workspace, taskId);
  const spare = deps.spares?.take(taskId);
  // Outside the lock, like a fresh checkout: what the last agent left that git does not track.
  // A tree git cannot clean is not reused: the fresh path below removes it first.
  if (spare && (await reuseSpare(deps, spare, taskId, dir)) && (await cleanEverythingUntracked(deps.git, dir)))
    return dir;
  // Only the cheap ref and bookkeeping part runs under the lock.
  const add = { dir, commitish: STAGING_REF, branch: taskBranch(taskId), noCheckout: true };
  await deps.refs.run(async () => {
    await dropWorktree(deps, dir);
    await deps.ports.fs.mkdirp(path.dirname(dir), 0o700);
    if ((await tryAddWorktree(deps.git, deps.workspace, add)).exitCode !== 0) {
      // A registration whose folder is gone blocks the add: prune it and try once more.
      await pruneWorktrees(deps.git, deps.workspace);
      await addWorktree(deps.git, deps.workspace, add);
    }
  });
  // The checkout itself, in parallel with other tasks' work.
  await resetHard(deps.git, dir, 'HEAD');
  return dir;
}
