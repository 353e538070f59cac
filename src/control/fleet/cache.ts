// What fleet read from each repo's git objects (the board's counts, staging
// against the base), kept by root between runs, keyed by the commit ids it
// was read at: commits are immutable, so while auto/work, origin/<base> and
// <base> point where they did, the answer is the same and no git runs. The
// file lives in root's state dir ($STATE/cache/fleet.json, root-only 0700);
// it is still checked entry by entry on load (a malformed entry is dropped,
// a malformed file is an empty cache), and it is only ever a shortcut: a
// miss reads the repo exactly as without it. An entry is a GitView
// (repo-view/git-view.ts), the same record a watcher keeps in watch.json.
import * as path from 'node:path';
import type { FsPort } from '../../ports.js';
import { gitViewMatches, validGitView, type GitView, type RefCommits } from '../repo-view/index.js';
import { fleetCacheFile } from '../../paths.js';
import { ROOT_ONLY_DIR_MODE } from '../state-dirs.js';

const VERSION = 1;
/** A cache file past this is ignored (a fleet of 10,000 repos writes ~5 MB). */
const MAX_CACHE_BYTES = 64 * 1024 * 1024;

/** Pure: the cache file's text to its entries by repo name; empty when it is not a cache this version wrote. */
export function parseFleetCache(text: string | undefined): Map<string, GitView> {
  const entries = new Map<string, GitView>();
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
    const entry = validGitView(value);
    if (entry) entries.set(name, entry);
  }
  return entries;
}

/** The cache for one gather: loaded once, looked up per repo, written once with only the repos gathered. */
export class FleetCache {
  private readonly kept = new Map<string, GitView>();
  private changed = false;

  constructor(private readonly loaded: ReadonlyMap<string, GitView>) {}

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
  lookup(name: string, repoPath: string, baseBranch: string, commits: RefCommits): GitView | undefined {
    const entry = this.loaded.get(name);
    if (!gitViewMatches(entry, repoPath, baseBranch, commits)) return undefined;
    this.kept.set(name, entry);
    return entry;
  }

  store(name: string, entry: GitView): void {
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
