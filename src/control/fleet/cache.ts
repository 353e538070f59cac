// What fleet read from each repo's git objects (the board's counts, staging
// against the base), kept by root between runs, keyed by the commit ids it
// was read at: commits are immutable, so while auto/work, origin/<base> and
// <base> point where they did, the answer is the same and no git runs. The
// file lives in root's state dir ($STATE/cache/fleet.json, root-only 0700);
// it is still checked entry by entry on load (a malformed entry is dropped,
// a malformed file is an empty cache), and it is only ever a shortcut: a
// miss reads the repo exactly as without it.
import * as path from 'node:path';
import type { FsPort } from '../../ports.js';
import type { BoardSummary } from '../repo-view/index.js';
import { fleetCacheFile } from '../../paths.js';
import { ROOT_ONLY_DIR_MODE } from '../state-dirs.js';
import { isOid } from '../../git/ref-files.js';

/** auto/work, origin/<base>, <base>: null for a ref that does not exist. */
export type RefCommits = readonly [string | null, string | null, string | null];

export interface FleetCacheEntry {
  readonly path: string;
  readonly baseBranch: string;
  readonly commits: RefCommits;
  readonly board: BoardSummary;
  readonly staging: { readonly exists: boolean; readonly ahead: number; readonly behind: number };
}

const VERSION = 1;
/** A cache file past this is ignored (a fleet of 10,000 repos writes ~5 MB). */
const MAX_CACHE_BYTES = 64 * 1024 * 1024;

const isCount = (value: unknown): value is number => Number.isSafeInteger(value) && (value as number) >= 0;
const isStrings = (value: unknown): value is string[] =>
  Array.isArray(value) && value.every((item) => typeof item === 'string');
const isCommit = (value: unknown): value is string | null =>
  value === null || (typeof value === 'string' && isOid(value));

/** Pure: one entry as loaded, or undefined when it is not one this version wrote. */
export function validEntry(value: unknown): FleetCacheEntry | undefined {
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

/** Pure: the cache file's text to its entries by repo name; empty when it is not a cache this version wrote. */
export function parseFleetCache(text: string | undefined): Map<string, FleetCacheEntry> {
  const entries = new Map<string, FleetCacheEntry>();
  if (text === undefined || text.length > MAX_CACHE_BYTES) return entries;
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    return entries;
  }
  if (typeof data !== 'object' || data === null) return entries;
  const { version, repos } = data as { version?: unknown; repos?: unknown };
  if (version !== VERSION || typeof repos !== 'object' || repos === null || Array.isArray(repos)) return entries;
  for (const [name, value] of Object.entries(repos)) {
    const entry = validEntry(value);
    if (entry) entries.set(name, entry);
  }
  return entries;
}

/**
 * Pure: whether `entry` answers for this repo at these commits. Never when
 * none of the refs exists: that is also how a repo whose .git is gone (or
 * not where it is looked for) reads, and git must say what is wrong.
 */
export function entryMatches(
  entry: FleetCacheEntry | undefined,
  repoPath: string,
  baseBranch: string,
  commits: RefCommits,
): entry is FleetCacheEntry {
  return (
    !!entry &&
    commits.some((commit) => commit !== null) &&
    entry.path === repoPath &&
    entry.baseBranch === baseBranch &&
    entry.commits.every((commit, i) => commit === commits[i])
  );
}

/** The cache for one gather: loaded once, looked up per repo, written once with only the repos gathered. */
export class FleetCache {
  private readonly kept = new Map<string, FleetCacheEntry>();
  private changed = false;

  constructor(private readonly loaded: ReadonlyMap<string, FleetCacheEntry>) {}

  static async load(fs: FsPort, state: string): Promise<FleetCache> {
    let text: string | undefined;
    try {
      text = await fs.readTextIfExists(fleetCacheFile(state));
    } catch {
      text = undefined; // unreadable: an empty cache, every repo read from git
    }
    return new FleetCache(parseFleetCache(text));
  }

  /** The cached answer for the repo at these commits, kept for the next write; undefined on a miss. */
  lookup(name: string, repoPath: string, baseBranch: string, commits: RefCommits): FleetCacheEntry | undefined {
    const entry = this.loaded.get(name);
    if (!entryMatches(entry, repoPath, baseBranch, commits)) return undefined;
    this.kept.set(name, entry);
    return entry;
  }

  store(name: string, entry: FleetCacheEntry): void {
    this.kept.set(name, entry);
    this.changed = true;
  }

  /**
   * Writes the entries of this gather (repos no longer registered drop out);
   * nothing when nothing changed, or when there is no state dir yet (fleet,
   * a read, does not create it).
   */
  async save(fs: FsPort, state: string): Promise<void> {
    if (!this.changed && this.kept.size === this.loaded.size) return;
    if (!(await fs.stat(state))) return;
    const file = fleetCacheFile(state);
    await fs.mkdirp(path.dirname(file), ROOT_ONLY_DIR_MODE);
    await fs.writeAtomic(file, JSON.stringify({ version: VERSION, repos: Object.fromEntries(this.kept) }), 0o600);
  }
}
