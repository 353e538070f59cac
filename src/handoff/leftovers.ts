// An agent that set its task Done (or Blocked) but forgot to commit leaves
// work in the tree. The runner commits it rather than lose it, and says so.
import type { Git } from '../git/git.js';
import type { TaskId } from '../types.js';
import { commitIndex, isDirty, stageAll } from '../git/tree.js';
import { resolveCommit } from '../git/refs.js';

/** Commits everything uncommitted in the tree; returns the new commit, or undefined when clean. */
export async function commitLeftovers(git: Git, worktree: string, taskId: TaskId): Promise<string | undefined> {
  if (!(await isDirty(git, worktree, 'all'))) return undefined;
  await stageAll(git, worktree);
  await commitIndex(git, worktree, `${taskId}: commit what the agent left uncommitted`);
  return resolveCommit(git, worktree, 'HEAD');
}
