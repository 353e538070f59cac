// Task branches and their worktrees (auto/<id> beside auto/work): cut one
// from auto/work, drop one, list them. Ref-changing git steps run one at a
// time through `refs` (git's own locks would make parallel ones fail).
import * as path from 'node:path';
import type { FsPort } from '../ports.js';
import type { Git } from '../git/git.js';
import { taskWorktree } from '../paths.js';
import { STAGING_BRANCH, STAGING_REF, TASK_BRANCH_PREFIX, taskBranch } from './names.js';
import { deleteBranch, listBranches } from '../git/refs.js';
import { addWorktree, pruneWorktrees, removeWorktree, tryAddWorktree } from '../git/worktree.js';
import { resetHard } from '../git/tree.js';

/** Runs short ref-changing steps one at a time (a Mutex). */
export interface RefsLock {
  run<T>(work: () => Promise<T>): Promise<T>;
}

export interface TaskBranchDeps {
  readonly git: Git;
  readonly ports: { readonly fs: FsPort };
  readonly workspace: string;
  readonly refs: RefsLock;
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

/** Removes a task's worktree and (optionally) its branch; tolerant of either being gone already. */
export async function removeTaskWorktree(deps: TaskBranchDeps, taskId: string, deleteTheBranch: boolean): Promise<void> {
  await deps.refs.run(async () => {
    await dropWorktree(deps, taskWorktree(deps.workspace, taskId));
    if (deleteTheBranch) await deleteBranch(deps.git, deps.workspace, taskBranch(taskId));
  });
}

/**
 * A fresh worktree for a task on auto/<id>, cut from auto/work as it is now
 * (a retry starts over, not from the last attempt). Returns its folder.
 */
export async function cutTaskWorktree(deps: TaskBranchDeps, taskId: string): Promise<string> {
  const dir = taskWorktree(deps.workspace, taskId);
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
