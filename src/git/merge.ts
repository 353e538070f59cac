// Merges as named verbs: merge without committing, merge with a message,
// fast-forward, abort, and the files left conflicted. Thin wrappers over Git.
import type { Git } from './git.js';

export interface MergeAttempt {
  readonly ok: boolean;
  /** git's stderr, for the reason when there are no conflicted files to name. */
  readonly stderr: string;
}

async function attempt(git: Git, cwd: string, args: readonly string[]): Promise<MergeAttempt> {
  const result = await git.try(cwd, args);
  return { ok: result.exitCode === 0, stderr: result.stderr };
}

/** Merges `ref` (always a merge commit) into the index and tree, and stops before committing. */
export function mergeNoCommit(git: Git, cwd: string, ref: string): Promise<MergeAttempt> {
  return attempt(git, cwd, ['merge', '--no-ff', '--no-commit', ref]);
}

/** Merges `ref` as a merge commit with `message`. */
export function mergeWithMessage(git: Git, cwd: string, ref: string, message: string): Promise<MergeAttempt> {
  return attempt(git, cwd, ['merge', '--no-ff', '--no-edit', '-m', message, ref]);
}

/** Moves the checked-out branch (and its tree) forward to `ref`; throws GitError unless it is a fast-forward. */
export async function fastForward(git: Git, cwd: string, ref: string): Promise<void> {
  await git.run(cwd, ['merge', '--quiet', '--ff-only', ref]);
}

/** Abandons a merge in progress; tolerant of there being none. */
export async function abortMerge(git: Git, cwd: string): Promise<void> {
  await git.try(cwd, ['merge', '--abort']);
}

/** Abandons the merge in progress; throws GitError when git cannot. */
export async function abortMergeOrThrow(git: Git, cwd: string): Promise<void> {
  await git.run(cwd, ['merge', '--abort']);
}

/** Whether a merge is in progress (MERGE_HEAD exists). */
export async function mergeInProgress(git: Git, cwd: string): Promise<boolean> {
  return (await git.resolve(cwd, 'MERGE_HEAD')) !== undefined;
}

/** Paths left unmerged by a merge, in git's order. */
export async function conflictedFiles(git: Git, cwd: string): Promise<string[]> {
  return (await git.try(cwd, ['diff', '--name-only', '-z', '--diff-filter=U'])).stdout.split('\0').filter(Boolean);
}
