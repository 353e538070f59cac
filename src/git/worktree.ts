// Worktrees as named verbs: add, drop, prune. Thin typed wrappers over Git.
import type { Git } from './git.js';
import { commonGitDirArgs } from './plumbing.js';

export interface AddWorktree {
  /** The folder of the new worktree. */
  readonly dir: string;
  /** What to check out: a branch name, or with `branch` the start point. */
  readonly commitish: string;
  /** Create (or reset, -B) this branch at `commitish` and check it out. */
  readonly branch?: string;
  /** Register only; the files are checked out later (resetHard to HEAD). */
  readonly noCheckout?: boolean;
}

function addArgs(add: AddWorktree): string[] {
  return [
    'worktree',
    'add',
    '--quiet',
    ...(add.noCheckout ? ['--no-checkout'] : []),
    ...(add.branch ? ['-B', add.branch] : []),
    add.dir,
    add.commitish,
  ];
}

/** Adds a worktree; throws GitError when git refuses. */
export async function addWorktree(git: Git, cwd: string, add: AddWorktree): Promise<void> {
  await git.run(cwd, addArgs(add));
}

/** Removes a worktree even with changes or a lock in it; whether git could. */
export async function removeWorktree(git: Git, cwd: string, dir: string): Promise<boolean> {
  return (await git.try(cwd, ['worktree', 'remove', '--force', '--force', dir])).exitCode === 0;
}

/** Moves a worktree's folder (git's bookkeeping follows it); whether git could. */
export async function moveWorktree(git: Git, cwd: string, from: string, to: string): Promise<boolean> {
  return (await git.try(cwd, ['worktree', 'move', from, to])).exitCode === 0;
}

/** Forgets worktrees whose folders are gone (tolerant: bookkeeping only). */
export async function pruneWorktrees(git: Git, cwd: string): Promise<void> {
  await git.try(cwd, ['worktree', 'prune']);
}

/** Forgets worktrees whose folders are gone; throws GitError when git fails. */
export async function pruneWorktreesOrThrow(git: Git, cwd: string): Promise<void> {
  await git.run(cwd, ['worktree', 'prune']);
}

/** The git dir every worktree of the repository shares (absolute). */
export function commonGitDir(git: Git, cwd: string): Promise<string> {
  return git.value(cwd, commonGitDirArgs());
}
