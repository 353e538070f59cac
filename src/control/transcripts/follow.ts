// Tailing and following one transcript through the workspace-files reader:
// what `agent-runner logs [-f]` prints and the dashboard's live tail shows.
// Following polls the file's size (the untrusted walk has no inotify) and
// reads it again only when it grew; a file that shrank was replaced, and is
// read from its start.
import type { Clock, FsPort } from '../../ports.js';
import { UsageError } from '../../errors.js';
import { listTranscripts, type TranscriptEntry, type WorkspaceFiles } from '../repo-view/index.js';
import { completeLines, pickTranscript } from './view.js';

/** A transcript larger than this is not read whole; `logs` says so. */
export const MAX_TRANSCRIPT_BYTES = 64 * 1024 * 1024;
/** How much a transcript may grow between its stat and its read. */
const GROWTH_ALLOWANCE = 1024 * 1024;

export async function findTranscript(
  fs: FsPort,
  where: WorkspaceFiles,
  task: string | undefined,
  label: string,
): Promise<TranscriptEntry> {
  const entry = pickTranscript(await listTranscripts(fs, where), task);
  if (!entry)
    throw new UsageError(
      `no transcript${task ? ` of ${task}` : ''} for ${label}: no agent has run${task ? ' on that task' : ''} there yet`,
    );
  return entry;
}

/** The raw lines of a transcript (complete lines only). */
export async function readTranscriptLines(
  fs: FsPort,
  where: WorkspaceFiles,
  entry: TranscriptEntry,
): Promise<string[]> {
  // Bounded by what the file holds now (plus what may come while reading), not by the cap: reads come often.
  const size = (await fs.statUntrusted(where.root, entry.relative))?.size ?? 0;
  if (size > MAX_TRANSCRIPT_BYTES)
    throw new UsageError(
      `${entry.name} is ${size} bytes, more than the ${MAX_TRANSCRIPT_BYTES} logs reads; open the file itself`,
    );
  const text = await fs.readUntrusted(
    where.root,
    entry.relative,
    Math.min(MAX_TRANSCRIPT_BYTES, size + GROWTH_ALLOWANCE),
  );
  return completeLines(text ?? '');
}

export interface FollowOptions {
  readonly pollMs: number;
  /** Called with every complete line, old ones first (from `skip` on). */
  onLines(lines: readonly string[]): void;
  readonly signal: AbortSignal;
  /** How many of the existing lines to skip (the tail already printed). */
  readonly skip: number;
}

/** Follows until the signal aborts. */
export async function followTranscript(
  fs: FsPort,
  clock: Clock,
  where: WorkspaceFiles,
  entry: TranscriptEntry,
  options: FollowOptions,
): Promise<void> {
  let seen = options.skip;
  let size = -1;
  while (!options.signal.aborted) {
    const stat = await fs.statUntrusted(where.root, entry.relative);
    const now = stat?.isFile ? stat.size : 0;
    if (now !== size) {
      if (now < size) seen = 0;
      size = now;
      const lines = now ? await readTranscriptLines(fs, where, entry) : [];
      if (lines.length > seen) options.onLines(lines.slice(seen));
      seen = Math.max(seen, lines.length);
    }
    await sleepUnlessAborted(clock, options.pollMs, options.signal);
  }
}

function sleepUnlessAborted(clock: Clock, ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = clock.setTimer(ms, done);
    function done() {
      timer?.cancel();
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}
