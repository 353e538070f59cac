// <state>/repos/NAME/watch.json: what the watcher of a repo is doing, for
// fleet and the dashboard. Rewritten atomically on every change and as a
// heartbeat while a run goes on.
import type { FsPort } from '../../ports.js';
import { watchStatusFile } from '../../paths.js';
import { ensureRepoStateDir } from '../state-dirs.js';
import type { GitView } from '../repo-view/index.js';

export interface WatchStatus {
  readonly repo: string;
  readonly state: 'starting' | 'idle' | 'running' | 'stopping' | 'stopped';
  readonly pid: number;
  readonly runId?: string;
  readonly jobId?: string;
  /** ISO times. */
  readonly runStartedAt?: string;
  readonly lastTick?: string;
  readonly heartbeat: string;
  readonly lastResult?: {
    readonly runId: string;
    readonly outcome: string;
    readonly exitCode: number | null | undefined;
    readonly endedAt: string | undefined;
  };
  /** Why no run starts now (a rate limit, a daily budget) and until when (ledger/hold.ts). */
  readonly hold?: { readonly reason: string; readonly until: string };
  /** The last rate-limit reset a drain reported (ISO): no run starts before it. */
  readonly rateLimitUntil?: string;
  /** The last problem that made a tick skip the repo (bad config, missing user, unreadable board). */
  readonly lastError?: { readonly at: string; readonly message: string };
  /**
   * The board's counts and staging against the base at the commits the last
   * tick's board read saw: fleet shows them without starting git while the
   * repo's ref files still name those commits (repo-view/git-view.ts).
   */
  readonly view?: GitView;
  /**
   * The repo user and its home as the watcher found them at its start: where fleet reads the drains run by hand
   * (their history is in that home), without asking the account database for every repo.
   */
  readonly runner?: { readonly user: string; readonly home: string };
}

export async function writeWatchStatus(fs: FsPort, state: string, status: WatchStatus): Promise<void> {
  await ensureRepoStateDir(fs, state, status.repo);
  await fs.writeAtomic(watchStatusFile(state, status.repo), `${JSON.stringify(status, null, 2)}\n`, 0o600);
}

export async function readWatchStatus(fs: FsPort, state: string, repo: string): Promise<WatchStatus | undefined> {
  const text = await fs.readTextIfExists(watchStatusFile(state, repo));
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text) as WatchStatus;
  } catch {
    return undefined;
  }
}
