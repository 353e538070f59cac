// Task branches in the runner's repository (auto/<id> beside auto/work: only
// ever what an agent handed over and the runner accepted), and the worktrees
// a repository run before the agent had its own repository may still hold:
// list them, drop one. Ref-changing git steps run one at a time through
// `refs` (git's own locks would make parallel ones fail).
import type { FsPort } from '../ports.js';
import type { Git } from '../git/git.js';
import { taskWorktree } from '../paths.js';
import { STAGING_BRANCH, TASK_BRANCH_PREFIX, taskBranch } from './names.js';
import { deleteBranch, listBranches } from '../git/refs.js';
import { pruneWorktrees, removeWorktree } from '../git/worktree.js';

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
export async function removeTaskWorktree(
  deps: TaskBranchDeps,
  taskId: string,
  deleteTheBranch: boolean,
): Promise<void> {
  await deps.refs.run(async () => {
    await dropWorktree(deps, taskWorktree(deps.workspace, taskId));
    if (deleteTheBranch) await deleteBranch(deps.git, deps.workspace, taskBranch(taskId));
  });
}
