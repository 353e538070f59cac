// Whether the watcher may start a run for a repo now, as far as spending
// goes: not while the assistant's rate limit has not reset, not while the
// repo is over a daily budget (until the next UTC day). Read -> decide:
// holdFor is pure; spendHold reads today's ledger, and only when a run
// would otherwise start, so an idle tick reads nothing.
import type { FsPort } from '../../ports.js';
import type { RegistryRepo, SpendLimits } from '../../types.js';
import { dailyBudgetVerdict, nextUtcDay, SPEND_DEFAULTS, utcDay, type Spent } from '../../spend/verdict.js';
import { readLedger } from './ledger.js';
import { spentOn } from './totals.js';

export interface Hold {
  readonly reason: string;
  /** ISO: when the hold lifts by itself. */
  readonly until: string;
}

/** "HH:MM UTC" of an ISO time. */
export function clockTime(iso: string): string {
  return `${iso.slice(11, 16)} UTC`;
}

/** Pure: the hold from a rate-limit reset the drain reported and today's spend. */
export function holdFor(input: {
  readonly now: number;
  readonly rateLimitUntil: string | undefined;
  readonly limits: SpendLimits;
  readonly spentToday: Spent;
}): Hold | undefined {
  const reset = input.rateLimitUntil === undefined ? Number.NaN : Date.parse(input.rateLimitUntil);
  if (!Number.isNaN(reset) && reset > input.now) {
    const until = new Date(reset).toISOString();
    return { reason: `waiting for rate limit until ${clockTime(until)}`, until };
  }
  const daily = dailyBudgetVerdict(input.limits, input.spentToday);
  if (daily.over) return { reason: daily.reason, until: new Date(nextUtcDay(input.now)).toISOString() };
  return undefined;
}

/** Reads today's ledger (only when a daily budget is set) and decides. */
export async function spendHold(
  fs: FsPort,
  state: string,
  repo: RegistryRepo,
  now: number,
  rateLimitUntil: string | undefined,
): Promise<Hold | undefined> {
  const limits = repo.spend ?? SPEND_DEFAULTS;
  const budgeted = limits.dailyUsd !== undefined || limits.dailyTokens !== undefined;
  const spentToday = budgeted
    ? spentOn(await readLedger(fs, state, repo.name, utcDay(now)), utcDay(now))
    : { usd: 0, tokens: 0 };
  return holdFor({ now, rateLimitUntil, limits, spentToday });
}
