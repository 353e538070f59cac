// The integrator's reads for protected-paths.ts: what a task branch changed
// since it forked from auto/work, and whether the runner's .agent/ (and the
// gates script) in the staging index and worktree still equal auto/work
// before the merge. Plumbing only, so no diff.* config of the repo applies.
import type { Git } from '../git/git.js';
import { protectedRoots } from './protected-paths.js';

const nulSeparated = (text: string): string[] => text.split('\0').filter(Boolean);

/** Literal pathspecs: a configured path with glob characters matches only itself. */
const literal = (roots: readonly string[]): string[] => roots.map((root) => `:(literal)${root}`);

/**
 * Paths the branch changed between its merge base with `onto` and its tip,
 * renames reported as a delete and an add. Without a merge base (unrelated
 * history) every path of the branch counts as changed.
 */
export async function changedSinceFork(git: Git, cwd: string, onto: string, branch: string): Promise<string[]> {
  const base = await git.try(cwd, ['merge-base', onto, branch]);
  if (base.exitCode !== 0) return nulSeparated(await git.run(cwd, ['ls-tree', '-r', '-z', '--name-only', '--full-tree', branch]));
  return nulSeparated(await git.run(cwd, ['diff-tree', '-r', '-z', '--no-renames', '--name-only', base.stdout.trim(), branch]));
}

/**
 * Protected paths that differ from commit `before` in the index, the
 * worktree, or as untracked (or ignored) files; [] when they are all as
 * before. A replaced directory (say a link in place of .agent/) shows as its
 * tracked files deleted.
 */
export async function protectedPathsDrift(git: Git, cwd: string, before: string, gatesScript: string | undefined): Promise<string[]> {
  const specs = literal(protectedRoots(gatesScript));
  const staged = nulSeparated(await git.run(cwd, ['diff-index', '--cached', '-z', '--no-renames', '--name-only', before, '--', ...specs]));
  // Stat data a merge left stale would list unchanged files as changed.
  await git.try(cwd, ['update-index', '-q', '--refresh']);
  const worktree = nulSeparated(await git.run(cwd, ['diff-index', '-z', '--no-renames', '--name-only', before, '--', ...specs]));
  const untracked = nulSeparated(await git.run(cwd, ['ls-files', '-z', '--others', '--', ...specs]));
  return [...new Set([...staged, ...worktree, ...untracked])];
}
