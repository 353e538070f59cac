// When a provider's 429 says its limit lifts: retry-after-ms, retry-after (seconds or an HTTP date), else the
// latest of the provider's own reset headers (Anthropic: anthropic-ratelimit-*-reset, RFC 3339; OpenAI:
// x-ratelimit-reset-*, durations such as "6m0s" or "20ms"). The drain bounds the wait (spend/verdict.ts
// rateLimitVerdict); this only reads what was said. Pure.
import { headerValue } from './headers.js';
import type { HeaderPairs } from './types.js';

export interface RateLimitReading {
  readonly retryAfterSec: number | null;
  readonly resetAt: string | null;
}

/** Longer than a day is not a rate limit anyone waits for; read as unsaid. */
const MAX_WAIT_MS = 24 * 3600 * 1000;

function retryAfterMs(pairs: HeaderPairs, now: number): number | undefined {
  const ms = headerValue(pairs, 'retry-after-ms');
  if (ms !== undefined && /^\d+(\.\d+)?$/.test(ms.trim())) return Number(ms.trim());
  const after = headerValue(pairs, 'retry-after')?.trim();
  if (after === undefined || after === '') return undefined;
  if (/^\d+(\.\d+)?$/.test(after)) return Number(after) * 1000;
  const date = Date.parse(after);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** "1s", "6m0s", "20ms", "1h2m3.5s" to milliseconds. */
export function durationMs(text: string): number | undefined {
  const trimmed = text.trim();
  if (!/^(\d+(\.\d+)?(h|ms|m|s))+$/.test(trimmed)) return undefined;
  const unit: Record<string, number> = { h: 3_600_000, m: 60_000, s: 1000, ms: 1 };
  let total = 0;
  for (const match of trimmed.matchAll(/(\d+(?:\.\d+)?)(h|ms|m|s)/g)) total += Number(match[1]) * unit[match[2]!]!;
  return total;
}

function providerResetMs(pairs: HeaderPairs, now: number): number | undefined {
  const waits = pairs.flatMap(([name, value]) => {
    if (/^anthropic-ratelimit-.*-reset$/.test(name)) {
      const at = Date.parse(value.trim());
      return Number.isNaN(at) ? [] : [at - now];
    }
    if (/^x-ratelimit-reset-/.test(name)) return durationMs(value) ?? [];
    return [];
  });
  return waits.length ? Math.max(...waits) : undefined;
}

/** Pure: what a 429's headers say of when to try again. */
export function readRateLimit(pairs: HeaderPairs, now: number): RateLimitReading {
  const after = retryAfterMs(pairs, now);
  const wait = after ?? providerResetMs(pairs, now);
  const believable = wait !== undefined && wait >= 0 && wait <= MAX_WAIT_MS;
  return {
    retryAfterSec: after !== undefined && believable ? after / 1000 : null,
    resetAt: believable ? new Date(now + wait).toISOString() : null,
  };
}
