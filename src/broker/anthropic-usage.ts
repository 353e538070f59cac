// Anthropic's Messages API usage, from what passes through. A stream says it
// twice: message_start carries the input side (and a first output count), and
// each message_delta the counts so far, cumulative, so the last one wins field
// by field over message_start. A non-stream answer is one JSON message with
// its usage. Pure.
import { count, type MeteredUsage, type UsageReducer } from './usage.js';

interface Counts {
  input: number | null;
  output: number | null;
  cacheRead: number | null;
  cacheWrite: number | null;
}

function countsOf(usage: unknown): Partial<Counts> {
  if (!usage || typeof usage !== 'object') return {};
  const value = usage as Record<string, unknown>;
  const pick = (key: string) => (key in value ? count(value[key]) : undefined);
  const counts: Partial<Counts> = {};
  const input = pick('input_tokens');
  const output = pick('output_tokens');
  const cacheRead = pick('cache_read_input_tokens');
  const cacheWrite = pick('cache_creation_input_tokens');
  if (input !== undefined) counts.input = input;
  if (output !== undefined) counts.output = output;
  if (cacheRead !== undefined) counts.cacheRead = cacheRead;
  if (cacheWrite !== undefined) counts.cacheWrite = cacheWrite;
  return counts;
}

const text = (value: unknown) => (typeof value === 'string' && value.length <= 200 ? value : null);

function usageOf(
  counts: Partial<Counts>,
  model: string | null,
  id: string | null,
  usage: MeteredUsage['usage'],
): MeteredUsage {
  return {
    model,
    responseId: id,
    inputTokens: counts.input ?? null,
    outputTokens: counts.output ?? null,
    cacheReadTokens: counts.cacheRead ?? null,
    cacheWriteTokens: counts.cacheWrite ?? null,
    usage,
  };
}

/** The JSON events a stream's usage is in: nothing else is parsed (the text deltas pass by unread). */
const WANTED = new Set(['message_start', 'message_delta']);

export function anthropicUsage(): UsageReducer {
  let started: Partial<Counts> | undefined;
  let delta: Partial<Counts> | undefined;
  let model: string | null = null;
  let id: string | null = null;
  return {
    // One search for both (and message_stop, a few bytes, parsed for nothing).
    markers: ['message_'],
    wants: (name, data) =>
      name !== undefined ? WANTED.has(name) : data.includes('"message_start"') || data.includes('"message_delta"'),
    event(value) {
      if (!value || typeof value !== 'object') return;
      const event = value as Record<string, unknown>;
      if (event.type === 'message_start') {
        const message = (event.message ?? {}) as Record<string, unknown>;
        started = countsOf(message.usage);
        model = text(message.model);
        id = text(message.id);
      } else if (event.type === 'message_delta' && event.usage && typeof event.usage === 'object') {
        // Cumulative: a later delta replaces each field it carries.
        delta = { ...delta, ...countsOf(event.usage) };
      }
    },
    json(value) {
      if (!value || typeof value !== 'object') return undefined;
      const message = value as Record<string, unknown>;
      if (message.type !== 'message' || !message.usage || typeof message.usage !== 'object') return undefined;
      return usageOf(countsOf(message.usage), text(message.model), text(message.id), 'read');
    },
    result() {
      if (!started && !delta) return undefined;
      return usageOf({ ...started, ...delta }, model, id, delta ? 'read' : 'partial');
    },
  };
}
