// OpenAI's Responses API usage, from what passes through. A stream says it
// once, at its end: response.completed (or response.incomplete or
// response.failed, which are billed too) carries the response with its usage;
// response.created names the model first. A non-stream answer is the response
// object itself. input_tokens counts the cached tokens as well; the record
// keeps them apart, as Anthropic reports them (input excludes cache reads), so
// input + output + cache read is the provider's total. Pure.
import { count, type MeteredUsage, type UsageReducer } from './usage.js';

const TERMINAL = new Set(['response.completed', 'response.incomplete', 'response.failed']);
const WANTED = new Set(['response.created', ...TERMINAL]);

const text = (value: unknown) => (typeof value === 'string' && value.length <= 200 ? value : null);

function usageOf(response: Record<string, unknown>, reading: MeteredUsage['usage']): MeteredUsage {
  const usage = (response.usage && typeof response.usage === 'object' ? response.usage : {}) as Record<string, unknown>;
  const details = (usage.input_tokens_details ?? {}) as Record<string, unknown>;
  const input = count(usage.input_tokens);
  const cached = details && typeof details === 'object' ? count(details.cached_tokens) : null;
  return {
    model: text(response.model),
    responseId: text(response.id),
    inputTokens: input === null ? null : Math.max(0, input - (cached ?? 0)),
    outputTokens: count(usage.output_tokens),
    cacheReadTokens: cached,
    cacheWriteTokens: null,
    usage: reading,
  };
}

const hasUsage = (response: Record<string, unknown>) =>
  !!response.usage &&
  typeof response.usage === 'object' &&
  count((response.usage as Record<string, unknown>).input_tokens) !== null;

export function openaiUsage(): UsageReducer {
  let created: Record<string, unknown> | undefined;
  let ended: Record<string, unknown> | undefined;
  return {
    markers: [...WANTED],
    wants: (name, data) =>
      name !== undefined
        ? WANTED.has(name)
        : data.includes('"response.created"') || [...TERMINAL].some((type) => data.includes(`"${type}"`)),
    event(value) {
      if (!value || typeof value !== 'object') return;
      const event = value as Record<string, unknown>;
      const response = event.response;
      if (!response || typeof response !== 'object') return;
      if (event.type === 'response.created') created = response as Record<string, unknown>;
      else if (typeof event.type === 'string' && TERMINAL.has(event.type)) ended = response as Record<string, unknown>;
    },
    json(value) {
      if (!value || typeof value !== 'object') return undefined;
      const response = value as Record<string, unknown>;
      if (response.object !== 'response' || !hasUsage(response)) return undefined;
      return usageOf(response, 'read');
    },
    result() {
      if (ended && hasUsage(ended)) return usageOf(ended, 'read');
      const seen = ended ?? created;
      if (!seen) return undefined;
      return usageOf({ model: seen.model, id: seen.id }, 'partial');
    },
  };
}
