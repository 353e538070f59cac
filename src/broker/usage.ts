// Metering a response as it streams through, unchanged: the bytes go to the
// agent as they come and a copy is read on the side. A server-sent-event body
// is split into events and only the events that carry usage are parsed
// (eventsource-parser); a JSON body is kept (up to a bound) and parsed at its end.
// The provider's reducer (anthropic-usage.ts, openai-usage.ts) says which
// events and what they mean. Pure: bytes in, figures out.
import { createParser, type EventSourceParser } from 'eventsource-parser';
import type { MeteredUsage, Provider } from './types.js';

export type { MeteredUsage };

export const NO_USAGE: MeteredUsage = {
  model: null,
  responseId: null,
  inputTokens: null,
  outputTokens: null,
  cacheReadTokens: null,
  cacheWriteTokens: null,
  usage: 'none',
};

/** A provider's reading of its own events and bodies. */
export interface UsageReducer {
  /** Text that every event worth parsing holds (its name or its type): other events are skipped unparsed. */
  readonly markers: readonly string[];
  /** Whether an event (by its name, or its data when it has none) is worth parsing. */
  wants(name: string | undefined, data: string): boolean;
  /** A parsed event the reducer wanted. */
  event(value: unknown): void;
  /** A whole JSON body; undefined when it is not the provider's answer shape. */
  json(value: unknown): MeteredUsage | undefined;
  /** What the events said, undefined when none said anything. */
  result(): MeteredUsage | undefined;
}

/** Larger counts are not believable: recorded as unknown. */
const MAX_COUNT = 1e12;

export function count(value: unknown): number | null {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= MAX_COUNT ? value : null;
}

/** A JSON answer longer than this is passed through unmetered (answers are kilobytes; this is a bound, not a size). */
export const MAX_METERED_JSON_BYTES = 32 * 1024 * 1024;

export interface Meter {
  /** Whether the body is read as server-sent events. */
  readonly stream: boolean;
  feed(chunk: Uint8Array): void;
  /** The usage read, once the body has ended or was cut. */
  finish(): MeteredUsage;
}

/** SSE's event ends: a blank line after LF, CRLF or CR line ends. */
const BOUNDARIES = [Buffer.from('\n\n'), Buffer.from('\r\n\r\n'), Buffer.from('\r\r')];
/** An event this long without its end is not the providers' framing: from then on every byte is parsed. */
const MAX_CARRY = 1024 * 1024;

/** Where the event holding `at` starts: after the last boundary before it (a marker holds no line end). */
function eventStart(bytes: Buffer, at: number, boundaries: readonly Buffer[]): number {
  let start = 0;
  for (const end of boundaries) {
    const found = bytes.lastIndexOf(end, at);
    if (found !== -1) start = Math.max(start, found + end.length);
  }
  return start;
}

/** Where the event holding `at` ends: at the first boundary after it, or the end of `bytes`. */
function eventEnd(bytes: Buffer, at: number, boundaries: readonly Buffer[]): number {
  let stop = bytes.length;
  for (const end of boundaries) {
    const found = bytes.indexOf(end, at);
    if (found !== -1) stop = Math.min(stop, found);
  }
  return stop;
}

/** Just past the last boundary in `bytes` and which one it was, or undefined. */
function pastLastBoundary(bytes: Buffer, boundaries: readonly Buffer[]): { past: number; end: Buffer } | undefined {
  let last: { past: number; end: Buffer } | undefined;
  for (const end of boundaries) {
    const found = bytes.lastIndexOf(end);
    if (found !== -1 && (!last || found + end.length > last.past)) last = { past: found + end.length, end };
  }
  return last;
}

/**
 * A stream is split at its event boundaries (a native byte search), and only the events holding one of the
 * reducer's markers are handed to the event-stream parser: the text deltas, nearly all of a long answer, pass by
 * unparsed. A marker in an event's text only costs that event's parse; the reducer still judges it by name.
 */
function sseMeter(reducer: UsageReducer): Meter {
  const markers = reducer.markers.map((marker) => Buffer.from(marker, 'utf8'));
  const parser: EventSourceParser = createParser({
    onEvent(event) {
      if (!reducer.wants(event.event, event.data)) return;
      try {
        reducer.event(JSON.parse(event.data));
      } catch {
        // Not JSON: nothing to read in it.
      }
    },
  });
  const decoder = new TextDecoder();
  let carry: Buffer | undefined;
  let everything = false;
  // A provider frames a whole stream one way: once a boundary is seen, only that one is searched for. A stream that
  // mixes them is still read right (the parser splits what was taken for one event), if more slowly.
  let boundaries: readonly Buffer[] = BOUNDARIES;
  const parseMarked = (bytes: Buffer) => {
    const events: [number, number][] = [];
    for (const marker of markers)
      for (let at = bytes.indexOf(marker); at !== -1; at = bytes.indexOf(marker, at + marker.length)) {
        const range: [number, number] = [eventStart(bytes, at, boundaries), eventEnd(bytes, at, boundaries)];
        if (!events.some(([start]) => start === range[0])) events.push(range);
      }
    events.sort((a, b) => a[0] - b[0]);
    // Each event whole, ended by a blank line of its own: the parser never carries state from one to the next.
    for (const [start, end] of events) parser.feed(`${bytes.subarray(start, end).toString('utf8')}\n\n`);
  };
  return {
    stream: true,
    feed(chunk) {
      if (everything) return void parser.feed(decoder.decode(chunk, { stream: true }));
      const bytes = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
      const last = pastLastBoundary(bytes, boundaries);
      if (!last) {
        carry = carry ? Buffer.concat([carry, bytes]) : Buffer.from(bytes);
        if (carry.length > MAX_CARRY) {
          everything = true;
          parser.feed(decoder.decode(carry, { stream: true }));
          carry = undefined;
        }
        return;
      }
      boundaries = [last.end];
      parseMarked(carry ? Buffer.concat([carry, bytes.subarray(0, last.past)]) : bytes.subarray(0, last.past));
      carry = last.past < bytes.length ? Buffer.from(bytes.subarray(last.past)) : undefined;
    },
    finish() {
      // A last event without its blank line still counts: a lost total is worse than a lenient read.
      if (everything) parser.feed(`${decoder.decode()}\n\n`);
      else if (carry) parseMarked(carry);
      return reducer.result() ?? NO_USAGE;
    },
  };
}

function jsonMeter(reducer: UsageReducer, maxBytes: number): Meter {
  const chunks: Uint8Array[] = [];
  let size = 0;
  return {
    stream: false,
    feed(chunk) {
      size += chunk.byteLength;
      if (size <= maxBytes) chunks.push(chunk);
      else chunks.length = 0;
    },
    finish() {
      if (size === 0 || size > maxBytes) return NO_USAGE;
      try {
        return reducer.json(JSON.parse(Buffer.concat(chunks).toString('utf8'))) ?? NO_USAGE;
      } catch {
        return NO_USAGE;
      }
    },
  };
}

const ignoring: Meter = { stream: false, feed: () => undefined, finish: () => NO_USAGE };

/**
 * Pure: the meter for a response of `provider` with this content type. An event stream or JSON is read; anything
 * else (and an encoded body, which the broker never asks for) is passed through unread.
 */
export function meterFor(
  reducer: UsageReducer,
  contentType: string | undefined,
  contentEncoding: string | undefined,
  maxJsonBytes = MAX_METERED_JSON_BYTES,
): Meter {
  if (contentEncoding !== undefined && contentEncoding.trim().toLowerCase() !== 'identity') return ignoring;
  const type = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  if (type === 'text/event-stream') return sseMeter(reducer);
  if (type === 'application/json' || type.endsWith('+json')) return jsonMeter(reducer, maxJsonBytes);
  return ignoring;
}

export type ReducerFactory = () => UsageReducer;
export type Reducers = Readonly<Record<Provider, ReducerFactory>>;
