// The budget a broker holds a repo to: what root's ledger said was spent when
// the broker took the repo on (spend/policy.ts SpendPolicy, the figures a
// drain is handed), plus what the broker has metered since. A request that
// would start past daily_usd, daily_tokens or task_usd is refused before it
// is forwarded; one already streaming finishes. The decisions are
// spend/verdict.ts's, the ones the drain makes. USD needs a price per model:
// `usdOf` gives it, or nothing (then only the ledger's USD and the token
// figures count). Pure apart from the tally it keeps.
import { dailyBudgetVerdict, reportTokens, taskBudgetVerdict, utcDay } from '../spend/verdict.js';
import type { SpendPolicy } from '../spend/policy.js';
import type { BudgetPolicy, UsageRecord, UsageSink } from './types.js';

/** USD of one metered response, when a price is known for its model. */
export type PriceOf = (record: UsageRecord) => number | undefined;

interface DayTally {
  usd: number;
  tokens: number;
}

/** What this broker metered per UTC day and per task, fed by its usage sink. */
export interface MeteredSpend extends UsageSink {
  today(day: string): { readonly usd: number; readonly tokens: number };
  taskUsd(task: string): number;
}

export function meteredSpend(
  usdOf: PriceOf,
  dayOf: (iso: string) => string = (iso) => utcDay(Date.parse(iso)),
): MeteredSpend {
  const days = new Map<string, DayTally>();
  const tasks = new Map<string, number>();
  return {
    seal(record) {
      const day = dayOf(record.endedAt);
      const tally = days.get(day) ?? { usd: 0, tokens: 0 };
      const usd = usdOf(record) ?? 0;
      tally.usd += usd;
      tally.tokens += reportTokens(record);
      days.set(day, tally);
      tasks.set(record.task, (tasks.get(record.task) ?? 0) + usd);
    },
    today: (day) => ({ ...(days.get(day) ?? { usd: 0, tokens: 0 }) }),
    taskUsd: (task) => tasks.get(task) ?? 0,
  };
}

/**
 * The policy: the ledger's figures at `snapshot` (its day's totals count only on that day) plus the metered ones.
 * The refusal's reason is the drain's own wording ("over its budget: ...").
 */
export function spendBudget(snapshot: SpendPolicy, metered: MeteredSpend): BudgetPolicy {
  return ({ grant, now }) => {
    const day = utcDay(now);
    const ledger = day === snapshot.day ? snapshot.spentToday : { usd: 0, tokens: 0 };
    const since = metered.today(day);
    const daily = dailyBudgetVerdict(snapshot.limits, {
      usd: ledger.usd + since.usd,
      tokens: ledger.tokens + since.tokens,
    });
    if (daily.over) return { allow: false, reason: daily.reason };
    const task = taskBudgetVerdict(
      snapshot.limits.taskUsd,
      (snapshot.taskSpentUsd[grant.task] ?? 0) + metered.taskUsd(grant.task),
    );
    if (task.over) return { allow: false, reason: task.reason };
    return { allow: true };
  };
}

/** No budget: every request may start (a broker with no caps configured). */
export const NO_BUDGET: BudgetPolicy = () => ({ allow: true });
