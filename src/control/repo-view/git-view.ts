// What fleet shows of a repo's git objects (the board's counts, auto/work
// against the base), with the three commits it was read at: auto/work,
// origin/<base> and <base>. Commits are immutable, so while the ref files
// still name those commits the view is still true and no git needs to run.
// Two writers keep one: the repo's watcher, after each tick's board read, in
// its watch.json (root's own file), and fleet's own cache. Both are root's
// files, still checked field by field when read (validGitView); what decides
// whether a view answers is always the repo's ref files, read as untrusted
// data (git/ref-files.ts).
import type { ProcessPort } from '../../ports.js';
import { revListLeftRightCount } from '../../git/outsider.js';
import { isOid } from '../../git/ref-files.js';
import { STAGING_BRANCH, STAGING_REF } from '../../staging/names.js';
import type { BoardSummary, BoardSnapshot } from './board.js';

/** auto/work, origin/<base>, <base>: null for a ref that does not exist. */
export type RefCommits = readonly [string | null, string | null, string | null];

export interface StagingCounts {
  readonly exists: boolean;
  readonly ahead: number;
  readonly behind: number;
}

export interface GitView {
  readonly path: string;
  readonly baseBranch: string;
  readonly commits: RefCommits;
  readonly board: BoardSummary;
  readonly staging: StagingCounts;
}

/** The refs a view is keyed by, in the order of RefCommits. */
export function gitViewRefs(baseBranch: string): [string, string, string] {
  return [STAGING_REF, `refs/remotes/origin/${baseBranch}`, `refs/heads/${baseBranch}`];
}

const isCount = (value: unknown): value is number => Number.isSafeInteger(value) && (value as number) >= 0;
const isStrings = (value: unknown): value is string[] =>
  Array.isArray(value) && value.every((item) => typeof item === 'string');
const isCommit = (value: unknown): value is string | null =>
  value === null || (typeof value === 'string' && isOid(value));

/** Pure: a view as read back from a file, or undefined when it is not one this version writes. */
export function validGitView(value: unknown): GitView | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const entry = value as Record<string, unknown>;
  const board = entry.board as Record<string, unknown> | null | undefined;
  const staging = entry.staging as Record<string, unknown> | null | undefined;
  const commits = entry.commits;
  if (typeof entry.path !== 'string' || typeof entry.baseBranch !== 'string') return undefined;
  if (!Array.isArray(commits) || commits.length !== 3 || !commits.every(isCommit)) return undefined;
  if (
    typeof board !== 'object' ||
    board === null ||
    !isStrings(board.refs) ||
    !isStrings(board.ready) ||
    !isCount(board.parked) ||
    !isCount(board.unreadable) ||
    !isCount(board.total)
  )
    return undefined;
  if (
    typeof staging !== 'object' ||
    staging === null ||
    typeof staging.exists !== 'boolean' ||
    !isCount(staging.ahead) ||
    !isCount(staging.behind)
  )
    return undefined;
  return {
    path: entry.path,
    baseBranch: entry.baseBranch,
    commits: [commits[0], commits[1], commits[2]] as RefCommits,
    board: {
      refs: board.refs,
      ready: board.ready,
      parked: board.parked,
      unreadable: board.unreadable,
      total: board.total,
    },
    staging: { exists: staging.exists, ahead: staging.ahead, behind: staging.behind },
  };
}

/**
 * Pure: whether `view` answers for this repo at these commits. Never when
 * none of the refs exists: that is also how a repo whose .git is gone (or
 * not where it is looked for) reads, and git must say what is wrong.
 */
export function gitViewMatches(
  view: GitView | undefined,
  repoPath: string,
  baseBranch: string,
  commits: RefCommits,
): view is GitView {
  return (
    !!view &&
    commits.some((commit) => commit !== null) &&
    view.path === repoPath &&
    view.baseBranch === baseBranch &&
    view.commits.every((commit, i) => commit === commits[i])
  );
}

/**
 * Staging against the base between the commits a board read saw: none when
 * they are equal, else one rev-list between those commits (not the refs'
 * names, so the counts are exactly those of the commits the view is keyed by,
 * even when a ref moves meanwhile).
 */
export async function stagingBetween(
  process: ProcessPort,
  repoPath: string,
  baseBranch: string,
  commits: RefCommits,
): Promise<StagingCounts> {
  const [staging, originBase, localBase] = commits;
  if (!staging) return { exists: false, ahead: 0, behind: 0 };
  const base = originBase ?? localBase;
  if (base === staging) return { exists: true, ahead: 0, behind: 0 };
  // No base branch at all: rev-list names the missing ref in its error.
  const counts = await process.run(revListLeftRightCount(repoPath, base ?? `refs/heads/${baseBranch}`, staging));
  if (counts.exitCode !== 0)
    throw new Error(`cannot compare ${STAGING_BRANCH} with ${baseBranch}: ${counts.stderr.trim()}`);
  const [behind, ahead] = counts.stdout.trim().split(/\s+/).map(Number);
  return { exists: true, ahead: ahead ?? 0, behind: behind ?? 0 };
}

/**
 * The view of the board a snapshot reads (its summary and the commits that
 * read saw); staging counted only when those commits differ from `previous`'s.
 * Undefined when the snapshot saw no commits (nothing to key the view by).
 */
export async function readGitView(
  process: ProcessPort,
  snapshot: BoardSnapshot,
  repoPath: string,
  baseBranch: string,
  previous: GitView | undefined,
): Promise<GitView | undefined> {
  const board = await snapshot.summary();
  const seen = snapshot.commits;
  if (!seen) return undefined;
  const commits: RefCommits = [seen.staging ?? null, seen.originBase ?? null, seen.localBase ?? null];
  const staging = gitViewMatches(previous, repoPath, baseBranch, commits)
    ? previous.staging
    : await stagingBetween(process, repoPath, baseBranch, commits);
  return { path: repoPath, baseBranch, commits, board, staging };
}
