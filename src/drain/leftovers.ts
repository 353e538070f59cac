// An agent that set its task Done (or Blocked) but forgot to commit leaves
// work in the tree. The runner commits it rather than lose it, and says so.
import type { Git } from '../git/git.js';
import type { TaskId } from '../types.js';

/** Commits everything uncommitted in the tree; returns the new commit, or undefined when clean. */
export async function commitLeftovers(git: Git, worktree: string, taskId: TaskId): Promise<string | undefined> {
  const status = await git.run(worktree, ['status', '--porcelain', '--untracked-files=all']);
  if (!status.trim()) return undefined;
  await git.run(worktree, ['add', '-A']);
  await git.run(worktree, ['commit', '-q', '--no-verify', '-m', `${taskId}: commit what the agent left uncommitted`]);
  return git.value(worktree, ['rev-parse', 'HEAD']);
}
