// What root tells a drain about spending: the repo's budgets and rate-limit
// wait bounds from the registry, and what root's ledger says was spent when
// the run started (orchestrate --spend JSON; dispatch builds it). The drain
// cannot read the ledger (root only), so root hands it the totals.
import type { SpendLimits, TaskId } from '../types.js';
import { SPEND_DEFAULTS, type Spent } from './verdict.js';

export interface SpendPolicy {
  readonly limits: SpendLimits;
  /** The UTC day the totals below are for. */
  readonly day: string;
  /** The ledger's totals for the repo on that day when the run started. */
  readonly spentToday: Spent;
  /** The ledger's USD per task (all days) when the run started, for tasks that have any. */
  readonly taskSpentUsd: Readonly<Record<TaskId, number>>;
}

export const NO_SPEND_POLICY: Omit<SpendPolicy, 'day'> = {
  limits: SPEND_DEFAULTS,
  spentToday: { usd: 0, tokens: 0 },
  taskSpentUsd: {},
};

const amount = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value) && value >= 0;
const optionalAmount = (value: unknown) => value === undefined || value === null || amount(value);

/** Pure: --spend JSON to a policy, or what is wrong with it. */
export function parseSpendPolicy(text: string): SpendPolicy | string {
  let value: Record<string, unknown>;
  try {
    value = JSON.parse(text) as Record<string, unknown>;
  } catch {
    return 'is not JSON';
  }
  if (!value || typeof value !== 'object') return 'must be a JSON object';
  const limits = (value.limits ?? {}) as Record<string, unknown>;
  const spent = (value.spentToday ?? { usd: 0, tokens: 0 }) as Record<string, unknown>;
  const tasks = (value.taskSpentUsd ?? {}) as Record<string, unknown>;
  if (typeof value.day !== 'string' || !/^\d{4}-\d{2}-\d{2}$/.test(value.day)) return 'day must be YYYY-MM-DD';
  if (!['dailyUsd', 'dailyTokens', 'taskUsd'].every((key) => optionalAmount(limits[key])))
    return 'limits.dailyUsd, dailyTokens and taskUsd must be numbers >= 0 when set';
  const min = limits.rateLimitWaitMinSec ?? SPEND_DEFAULTS.rateLimitWaitMinSec;
  const max = limits.rateLimitWaitMaxSec ?? SPEND_DEFAULTS.rateLimitWaitMaxSec;
  if (!amount(min) || !amount(max) || min < 1 || max < min)
    return 'limits.rateLimitWaitMinSec must be >= 1 and rateLimitWaitMaxSec >= it';
  if (!amount(spent.usd) || !amount(spent.tokens)) return 'spentToday needs usd and tokens as numbers >= 0';
  if (typeof tasks !== 'object' || Object.values(tasks).some((usd) => !amount(usd)))
    return 'taskSpentUsd must map task ids to numbers >= 0';
  const pick = (key: string) => (amount(limits[key]) ? limits[key] : undefined);
  return {
    limits: {
      dailyUsd: pick('dailyUsd'),
      dailyTokens: pick('dailyTokens'),
      taskUsd: pick('taskUsd'),
      rateLimitWaitMinSec: min,
      rateLimitWaitMaxSec: max,
    },
    day: value.day,
    spentToday: { usd: spent.usd, tokens: spent.tokens },
    taskSpentUsd: tasks as Record<string, number>,
  };
}
