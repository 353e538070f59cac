// A repo's spending for fleet and the dashboard: today's total from the
// ledger (one small day file), its budgets, and what holds new runs (a rate
// limit, a daily budget) while that still holds.
import type { RegistryRepo } from '../../types.js';
import { SPEND_DEFAULTS, utcDay } from '../../spend/verdict.js';
import { type LedgerRecord, describeCost, ledgerTotal, spentOn, holdFor } from '../ledger/index.js';
import type { WatchStatus } from '../watch/index.js';

export interface FleetSpend {
  readonly today: {
    readonly usd: number;
    readonly unknownCost: number;
    readonly tokens: number;
    readonly sessions: number;
    readonly text: string;
  };
  readonly dailyUsd: number | null;
  readonly dailyTokens: number | null;
  readonly taskUsd: number | null;
  /** "waiting for rate limit until HH:MM UTC", "over its daily budget: ...", or null. */
  readonly hold: string | null;
}

/** Pure: the fleet's spend entry from today's records and the watcher's status. */
export function fleetSpend(
  repo: RegistryRepo,
  today: readonly LedgerRecord[],
  now: number,
  status: WatchStatus | undefined,
): FleetSpend {
  const limits = repo.spend ?? SPEND_DEFAULTS;
  const total = ledgerTotal(today);
  const spent = spentOn(today, utcDay(now));
  const hold = holdFor({ now, rateLimitUntil: status?.rateLimitUntil, limits, spentToday: spent });
  return {
    today: {
      usd: total.costUsd,
      unknownCost: total.unknownCost,
      tokens: spent.tokens,
      sessions: total.sessions,
      text: total.records ? describeCost(total) : '$0.00',
    },
    dailyUsd: limits.dailyUsd ?? null,
    dailyTokens: limits.dailyTokens ?? null,
    taskUsd: limits.taskUsd ?? null,
    hold: hold?.reason ?? null,
  };
}
