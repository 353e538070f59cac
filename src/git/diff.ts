// Which paths changed, as named verbs over plumbing (no diff.* config of the
// repo applies): between commits, in the index, in the tree, untracked, and
// every path of a tree. Renames count as a delete and an add. NUL-separated
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

/** Every file path of the tree at `commitish`. */
export async function treePaths(git: Git, cwd: string, commitish: string): Promise<string[]> {
  return nulSeparated(await git.run(cwd, ['ls-tree', '-r', '-z', '--name-only', '--full-tree', commitish]));
}

/** Paths whose staged content differs from `commit`, limited to `pathspecs`. */
export async function stagedChanges(git: Git, cwd: string, commit: string, pathspecs: readonly string[]): Promise<string[]> {
  return nulSeparated(await git.run(cwd, ['diff-index', '--cached', '-z', '--no-renames', '--name-only', commit, '--', ...pathspecs]));
}

/** Paths whose worktree content differs from `commit`, limited to `pathspecs`. */
export async function worktreeChanges(git: Git, cwd: string, commit: string, pathspecs: readonly string[]): Promise<string[]> {
  return nulSeparated(await git.run(cwd, ['diff-index', '-z', '--no-renames', '--name-only', commit, '--', ...pathspecs]));
}

/** Untracked files (ignored ones included), limited to `pathspecs`. */
export async function untrackedFiles(git: Git, cwd: string, pathspecs: readonly string[]): Promise<string[]> {
  return nulSeparated(await git.run(cwd, ['ls-files', '-z', '--others', '--', ...pathspecs]));
}
