// Metering a response as it streams through, unchanged: the bytes go to the
// agent as they come and a copy is read on the side. A server-sent-event body
// is split into events (eventsource-parser) and only the events that carry
// usage are parsed; a JSON body is kept (up to a bound) and parsed at its end.
// The provider's reducer (anthropic-usage.ts, openai-usage.ts) says which
// events and what they mean. Pure: bytes in, figures out.
import { createParser, type EventSourceParser } from 'eventsource-parser';
import type { Provider, UsageReading } from './types.js';

/** What one response said it cost. Token counts null where it did not say. */
export interface MeteredUsage {
  readonly model: string | null;
  readonly responseId: string | null;
  readonly inputTokens: number | null;
  readonly outputTokens: number | null;
  readonly cacheReadTokens: number | null;
  readonly cacheWriteTokens: number | null;
  readonly usage: UsageReading;
}

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

function sseMeter(reducer: UsageReducer): Meter {
  const decoder = new TextDecoder();
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
  return {
    stream: true,
    feed(chunk) {
      parser.feed(decoder.decode(chunk, { stream: true }));
    },
    finish() {
      parser.feed(decoder.decode());
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
