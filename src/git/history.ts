// History as named verbs: commit counts and logs of merge commits. Thin typed
// wrappers over Git.
import type { Git } from './git.js';

/** How many commits `range` (e.g. "a..b") holds. */
export async function countCommits(git: Git, cwd: string, range: string): Promise<number> {
  return Number((await git.run(cwd, ['rev-list', '--count', range])).trim());
}

/** Commits only `left` has and only `right` has (`rev-list --left-right --count left...right`). */
export async function aheadBehind(
  git: Git,
  cwd: string,
  left: string,
  right: string,
): Promise<{ left: number; right: number }> {
  const counts = (await git.value(cwd, ['rev-list', '--left-right', '--count', `${left}...${right}`])).split(/\s+/);
  return { left: Number(counts[0]), right: Number(counts[1]) };
}

/** The merge commits of `range`, oldest first, as `git log --format=<format>` prints them. */
export function mergeLog(git: Git, cwd: string, range: string, format: string): Promise<string> {
  return git.run(cwd, ['log', '--merges', '--reverse', `--format=${format}`, range]);
}

/**
 * The merge commits on `ref`'s first-parent line whose message holds `text` (fixed, any case), newest first, at most
 * `limit`, as `git log --format=<format>` prints them.
 */
export function firstParentMergesMatching(
  git: Git,
  cwd: string,
  ref: string,
  text: string,
  limit: number,
  format: string,
): Promise<string> {
  return git.run(cwd, [
    'log',
    '--first-parent',
    '--merges',
    '--fixed-strings',
    '--regexp-ignore-case',
    `--grep=${text}`,
    `--format=${format}`,
    '-n',
    String(limit),
    ref,
    '--',
  ]);
}
