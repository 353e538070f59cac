// Refs as named verbs: resolve, ancestry, merge bases, branches and guarded
// ref updates. Thin typed wrappers over Git; callers never spell argv.
import type { Git } from './git.js';

/** The commit a ref points at, or undefined when the ref does not exist. */
export function resolveCommit(git: Git, cwd: string, ref: string): Promise<string | undefined> {
  return git.resolve(cwd, ref);
}

/** Whether `ancestor` is contained in `descendant`. */
export function isAncestor(git: Git, cwd: string, ancestor: string, descendant: string): Promise<boolean> {
  return git.isAncestor(cwd, ancestor, descendant);
}

/** The best common ancestor of two commits, or undefined when they share no history. */
export async function mergeBase(git: Git, cwd: string, left: string, right: string): Promise<string | undefined> {
  const result = await git.try(cwd, ['merge-base', left, right]);
  return result.exitCode === 0 ? result.stdout.trim() : undefined;
}

/** The branch HEAD is on (short name), or '' for a detached HEAD. */
export async function currentBranch(git: Git, cwd: string): Promise<string> {
  return (await git.try(cwd, ['symbolic-ref', '--quiet', '--short', 'HEAD'])).stdout.trim();
}

/**
 * Puts HEAD back on `branch` without touching the index or the tree: only
 * for a detached HEAD already at the branch's tip with a clean tree.
 */
export async function attachHead(git: Git, cwd: string, branch: string): Promise<void> {
  await git.run(cwd, ['symbolic-ref', 'HEAD', headRef(branch)]);
}

/** Short names of the local branches under `prefix` (e.g. "auto/"). */
export async function listBranches(git: Git, cwd: string, prefix: string): Promise<string[]> {
  const out = await git.run(cwd, ['for-each-ref', '--format=%(refname:short)', `refs/heads/${prefix}`]);
  return out
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean);
}

/** Creates branch `name` at `at`, without upstream tracking; `force` moves an existing one. */
export async function createBranch(
  git: Git,
  cwd: string,
  name: string,
  at: string,
  options: { force?: boolean } = {},
): Promise<void> {
  await git.run(cwd, ['branch', ...(options.force ? ['--force'] : []), '--no-track', name, at]);
}

/** Deletes a local branch, merged or not; whether it was there to delete. */
export async function deleteBranch(git: Git, cwd: string, name: string): Promise<boolean> {
  return (await git.try(cwd, ['branch', '-D', name])).exitCode === 0;
}

/** Moves `ref` to `to`; with `expected`, only if it is still there (compare-and-swap). */
export async function updateRef(git: Git, cwd: string, ref: string, to: string, expected?: string): Promise<void> {
  await git.run(cwd, ['update-ref', ref, to, ...(expected ? [expected] : [])]);
}

/** The full ref of a local branch. */
export function headRef(branch: string): string {
  return `refs/heads/${branch}`;
}

/** The full ref of a remote-tracking branch. */
export function remoteRef(remote: string, branch: string): string {
  return `refs/remotes/${remote}/${branch}`;
}

/** Pure: a full ref's short name ("refs/remotes/origin/main" -> "origin/main"). */
export function shortRefName(ref: string): string {
  return ref.replace(/^refs\/(heads|remotes)\//, '');
}
