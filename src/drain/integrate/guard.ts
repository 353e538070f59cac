// The integrator's reads for protected-paths.ts: what a task branch changed
// since it forked from auto/work, and whether the runner's .agent/ (and the
// gates script) in the staging index and worktree still equal auto/work
// before the merge.
import type { Git } from '../../git/git.js';
import { protectedRoots } from './protected-paths.js';
import { mergeBase } from '../../git/refs.js';
import {
  changedAgainstHead,
  changedBetween,
  changedSinceMergeBase,
  literalPathspecs,
  treePaths,
} from '../../git/diff.js';

/**
 * Paths the branch changed between its merge base with `onto` and its tip,
 * renames reported as a delete and an add. Without a merge base (unrelated
 * history) every path of the branch counts as changed.
 */
export async function changedSinceFork(git: Git, cwd: string, onto: string, branch: string): Promise<string[]> {
  // The usual case (one merge base) in one git process; the rest as before.
  const changed = await changedSinceMergeBase(git, cwd, onto, branch);
  if (changed !== undefined) return changed;
  const base = await mergeBase(git, cwd, onto, branch);
  if (base === undefined) return treePaths(git, cwd, branch);
  return changedBetween(git, cwd, base, branch);
}

/**
 * Protected paths that differ from HEAD (auto/work before the merge, which
 * is not committed yet) in the index, the worktree, or as untracked (or
 * ignored) files; [] when they are all as before. A replaced directory (say
 * a link in place of .agent/) shows as its tracked files deleted and the
 * link untracked. A configured path with glob characters matches only itself.
 */
export async function protectedPathsDrift(git: Git, cwd: string, gatesScript: string | undefined): Promise<string[]> {
  return [...new Set(await changedAgainstHead(git, cwd, literalPathspecs(protectedRoots(gatesScript))))];
}
