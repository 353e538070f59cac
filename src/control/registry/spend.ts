// The registry's spend keys: budgets checked against the ledger (daily_usd,
// daily_tokens, task_usd; unset means no cap) and the bounds of a rate-limit
// wait (rate_limit_wait_min_sec, rate_limit_wait_max_sec). Parsed here, one
// key at a time, for the registry's key table (keys.ts); applied by the
// watcher (control/spend-gate.ts) and the drain (spend/verdict.ts).
import type { SpendLimits } from '../../types.js';
import { SPEND_DEFAULTS } from '../../spend/verdict.js';

export { SPEND_DEFAULTS } from '../../spend/verdict.js';

export const SPEND_KEYS = {
  daily_usd: 'USD a repo may spend per day (UTC) before no new task starts',
  daily_tokens: 'tokens (input, output and cache) a repo may use per day (UTC)',
  task_usd: 'USD one task may cost before it is stopped and parked',
  rate_limit_wait_min_sec: 'shortest wait after a rate limit (default 60)',
  rate_limit_wait_max_sec: 'longest wait after a rate limit (default 3600)',
} as const;

export type SpendKey = keyof typeof SPEND_KEYS;

export type SpendFields = { -readonly [K in keyof SpendLimits]?: SpendLimits[K] };

const FIELD: Readonly<Record<SpendKey, keyof SpendLimits>> = {
  daily_usd: 'dailyUsd',
  daily_tokens: 'dailyTokens',
  task_usd: 'taskUsd',
  rate_limit_wait_min_sec: 'rateLimitWaitMinSec',
  rate_limit_wait_max_sec: 'rateLimitWaitMaxSec',
};

/** Checks one spend key; on success sets it in `fields`, otherwise calls bad(problem, fix). */
export function readSpendKey(
  key: SpendKey,
  value: unknown,
  fields: SpendFields,
  bad: (problem: string, fix: string) => void,
): void {
  const number = typeof value === 'number' && Number.isFinite(value) ? value : undefined;
  switch (key) {
    case 'daily_usd':
    case 'task_usd':
      if (number === undefined || number <= 0 || number > 1_000_000)
        return bad(
          `must be a number of dollars above 0, got ${JSON.stringify(value)}`,
          `e.g. ${key} = ${key === 'daily_usd' ? 50 : 5}; remove the key for no cap`,
        );
      fields[FIELD[key] as 'dailyUsd' | 'taskUsd'] = number;
      return;
    case 'daily_tokens':
      if (number === undefined || !Number.isSafeInteger(number) || number <= 0)
        return bad(
          `must be a whole number of tokens above 0, got ${JSON.stringify(value)}`,
          'e.g. daily_tokens = 20000000; remove the key for no cap',
        );
      fields.dailyTokens = number;
      return;
    case 'rate_limit_wait_min_sec':
    case 'rate_limit_wait_max_sec':
      if (number === undefined || !Number.isInteger(number) || number < 1 || number > 86_400)
        return bad(
          `must be whole seconds 1-86400, got ${JSON.stringify(value)}`,
          `e.g. ${key} = ${key.includes('min') ? 60 : 3600}`,
        );
      fields[FIELD[key] as 'rateLimitWaitMinSec' | 'rateLimitWaitMaxSec'] = number;
      return;
  }
}

/** Pure: a repo's spend limits: its own, else [defaults], else SPEND_DEFAULTS; the max wait is never below the min. */
export function resolveSpend(repo: SpendFields, defaults: SpendFields): SpendLimits {
  const pick = <K extends keyof SpendLimits>(key: K): SpendLimits[K] =>
    repo[key] ?? defaults[key] ?? SPEND_DEFAULTS[key];
  const min = pick('rateLimitWaitMinSec');
  return {
    dailyUsd: pick('dailyUsd'),
    dailyTokens: pick('dailyTokens'),
    taskUsd: pick('taskUsd'),
    rateLimitWaitMinSec: min,
    rateLimitWaitMaxSec: Math.max(min, pick('rateLimitWaitMaxSec')),
  };
}

/** A repo section's spend keys as written, so re-provisioning never drops them. */
export type RawSpend = Partial<Record<SpendKey, number>>;

export function rawSpend(raw: Readonly<Record<string, unknown>>): RawSpend | undefined {
  const kept: RawSpend = {};
  for (const key of Object.keys(SPEND_KEYS) as SpendKey[]) {
    const value = raw[key];
    if (typeof value === 'number') kept[key] = value;
  }
  return Object.keys(kept).length ? kept : undefined;
}

export function renderSpendLines(spend: RawSpend | undefined): string[] {
  if (!spend) return [];
  return (Object.keys(SPEND_KEYS) as SpendKey[])
    .filter((key) => spend[key] !== undefined)
    .map((key) => `${key} = ${spend[key]}`);
}
