// A container's log into the task's transcript, each line once. The log is requested with timestamps, so every line
// starts with its RFC 3339 time; when the stream drops, it is asked again from that time. The API server reads
// sinceTime in whole seconds, so the new stream starts with lines already written: the cursor (the last time written
// and how many lines carried exactly that time) skips them. The stream ending is not the log ending: only the
// caller knows the container is done (the Job's outcome), and then one last request takes what is left.
import type { Clock } from '../../../src/ports.js';
import { KubeRequestError, type KubeJobs } from '../port.js';

/** Where the log stands: the last line's time (nanoseconds since the epoch) and the lines written at that time. */
export interface LogCursor {
  readonly at: bigint;
  readonly linesAt: number;
}

export const LOG_START: LogCursor = { at: -1n, linesAt: 0 };

const STAMPED = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:\d{2}) ?(.*)$/s;

/** "2026-12-06T04:00:01.2Z text" -> the time in nanoseconds and the text; undefined for a line without a time. */
export function parseStampedLine(line: string): { readonly at: bigint; readonly text: string } | undefined {
  const match = STAMPED.exec(line);
  if (!match) return undefined;
  const [, seconds = '', fraction = '', zone = 'Z', text = ''] = match;
  const ms = Date.parse(`${seconds}${zone}`);
  if (Number.isNaN(ms)) return undefined;
  return { at: BigInt(ms) * 1_000_000n + BigInt(fraction.padEnd(9, '0')), text };
}

/** Pure: whether a line at `at` is new past the cursor, and the cursor after it. `seenAt` counts lines at `at`. */
export function advance(
  cursor: LogCursor,
  at: bigint,
  seenAt: number,
): { readonly fresh: boolean; readonly cursor: LogCursor } {
  if (at < cursor.at) return { fresh: false, cursor };
  if (at === cursor.at && seenAt <= cursor.linesAt) return { fresh: false, cursor };
  return { fresh: true, cursor: { at, linesAt: at === cursor.at ? cursor.linesAt + 1 : 1 } };
}

/** The whole second of the cursor, RFC 3339: the sinceTime that loses nothing. */
export function sinceTimeOf(cursor: LogCursor): string | undefined {
  if (cursor.at < 0n) return undefined;
  const seconds = cursor.at / 1_000_000_000n;
  return new Date(Number(seconds) * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

export interface LogFollowOptions {
  readonly jobs: KubeJobs;
  readonly pod: string;
  readonly container: string;
  readonly clock: Clock;
  /** Each new line, without its time. */
  readonly onLine: (text: string, at: bigint) => void;
  /** A stream that broke or was refused; the follower asks again after retryMs. */
  readonly onTrouble?: (error: Error) => void;
  readonly retryMs?: number;
}

export interface LogFollower {
  /** The container has ended: read what is left, then stop. Resolves when the last line is written. */
  finish(): Promise<void>;
  /** Stop now (a kill): what was not read stays unread. */
  stop(): Promise<void>;
  readonly cursor: () => LogCursor;
  /** How many streams were opened (1 with no drop). */
  readonly streams: () => number;
}

export function followLog(options: LogFollowOptions): LogFollower {
  let cursor = LOG_START;
  let streams = 0;
  let finishing = false;
  let stopped = false;
  let stopCurrent: (() => void) | undefined;

  /** One stream to its end: true when it ended cleanly. */
  async function streamOnce(): Promise<boolean> {
    let partial = '';
    let lastAt: bigint | undefined;
    let countAt = 0;
    const take = (line: string) => {
      const parsed = parseStampedLine(line);
      if (!parsed) return;
      countAt = parsed.at === lastAt ? countAt + 1 : 1;
      lastAt = parsed.at;
      const step = advance(cursor, parsed.at, countAt);
      cursor = step.cursor;
      if (step.fresh) options.onLine(parsed.text, parsed.at);
    };
    const since = sinceTimeOf(cursor);
    const stream = await options.jobs.followLog(
      { pod: options.pod, container: options.container, ...(since ? { sinceTime: since } : {}) },
      (text) => {
        const lines = (partial + text).split('\n');
        partial = lines.pop() ?? '';
        for (const line of lines) take(line);
      },
    );
    streams += 1;
    stopCurrent = () => stream.stop();
    if (stopped) stream.stop();
    const ended = await stream.ended;
    stopCurrent = undefined;
    // A cut line is taken again, whole, by the next request.
    if (ended.error) {
      // Our own stop aborts the request: not trouble.
      if (!stopped) options.onTrouble?.(ended.error);
      return false;
    }
    if (partial) take(partial);
    return true;
  }

  const loop = (async () => {
    while (!stopped) {
      let clean = false;
      try {
        clean = await streamOnce();
      } catch (error) {
        // The pod is gone (the Job controller deletes a Job's pods past its deadline; a delete takes them): once the
        // container has ended, nothing more can be read, and asking again would never end.
        if (finishing && error instanceof KubeRequestError && error.status === 404) break;
        options.onTrouble?.(error instanceof Error ? error : new Error(String(error)));
      }
      // Read once more after the container ended: a clean end seen before then may have been a drop.
      if (clean && finishing) break;
      if (!clean && !stopped) await options.clock.sleep(options.retryMs ?? 1000);
    }
  })();

  return {
    async finish() {
      finishing = true;
      await loop;
    },
    async stop() {
      stopped = true;
      stopCurrent?.();
      await loop;
    },
    cursor: () => cursor,
    streams: () => streams,
  };
}

/** Where a pod's lines go in the task's transcript: `output` events, redacted by the Transcript as every line is. */
export function transcriptLine(transcript: { write(event: Record<string, unknown>): void }, pod: string) {
  return (text: string): void => transcript.write({ event: 'output', stream: 'pod', pod, line: text });
}
