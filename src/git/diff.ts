// Which paths changed, as named verbs (plumbing where it can be, so no
// diff.* config of the repo applies): between commits, against HEAD in the
// index and the tree, and every path of a tree. Renames count as a delete and an add. NUL-separated
// output, so any file name survives.
import type { Git } from './git.js';

const nulSeparated = (text: string): string[] => text.split('\0').filter(Boolean);

/** Pure: pathspecs that match only themselves (no glob characters apply). */
export function literalPathspecs(paths: readonly string[]): string[] {
  return paths.map((entry) => `:(literal)${entry}`);
}

/** Paths that differ between two commits. */
export async function changedBetween(git: Git, cwd: string, from: string, to: string): Promise<string[]> {
  return nulSeparated(await git.run(cwd, ['diff-tree', '-r', '-z', '--no-renames', '--name-only', from, to]));
}

/**
 * Paths that differ between the merge base of `onto` and `to`, and `to`, in
 * one git process; undefined when git cannot say so (no merge base, or more
 * than one), for the caller to find the base itself.
 */
export async function changedSinceMergeBase(
  git: Git,
  cwd: string,
  onto: string,
  to: string,
): Promise<string[] | undefined> {
  const result = await git.try(cwd, ['diff-tree', '-r', '-z', '--no-renames', '--name-only', '--merge-base', onto, to]);
  return result.exitCode === 0 ? nulSeparated(result.stdout) : undefined;
}

/** Every file path of the tree at `commitish`. */
export async function treePaths(git: Git, cwd: string, commitish: string): Promise<string[]> {
  return nulSeparated(await git.run(cwd, ['ls-tree', '-r', '-z', '--name-only', '--full-tree', commitish]));
}

/**
 * Paths under `pathspecs` that differ from HEAD in the index or the
 * worktree, or exist untracked or ignored: one `git status`, which compares
 * content where the index's stat data is stale (a merge leaves it so).
 */
export async function changedAgainstHead(git: Git, cwd: string, pathspecs: readonly string[]): Promise<string[]> {
  const entries = nulSeparated(
    await git.run(cwd, [
      'status',
      '--porcelain=v1',
      '-z',
      '--no-renames',
      '--untracked-files=all',
      '--ignored=matching',
      '--',
      ...pathspecs,
    ]),
  );
  // Each entry is "XY path": two status letters and a space.
  return entries.map((entry) => entry.slice(3));
}
