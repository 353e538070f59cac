// What spending and rate limits decide, from numbers only: whether a repo is
// over a daily budget, whether a task is over its budget, and how long to
// wait after a rate limit (or to give up on the task). Pure; root's watcher
// and the drain both decide through these.
import type { SpendLimits } from '../types.js';

/** After this many rate-limit waits for one task, it is blocked instead. */
export const MAX_RATE_LIMIT_WAITS = 4;

/**
 * No caps; a rate-limit wait of at least a minute, at most an hour (a CLI that gives no time, or a clock that
 * disagrees, can make a drain neither hammer nor sleep for hours).
 */
export const SPEND_DEFAULTS: SpendLimits = {
  dailyUsd: undefined,
  dailyTokens: undefined,
  taskUsd: undefined,
  rateLimitWaitMinSec: 60,
  rateLimitWaitMaxSec: 3600,
};

export const RATE_LIMIT_BLOCK_REASON = 'rate limited; nothing charged';

/** What was spent: USD of the sessions that reported a cost, tokens of those that reported tokens. */
export interface Spent {
  readonly usd: number;
  readonly tokens: number;
}

/** The day a moment belongs to, for budgets: budgets run per UTC day, the same on every host. */
export function utcDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** The first moment of the next UTC day. */
export function nextUtcDay(ms: number): number {
  const day = new Date(ms);
  return Date.UTC(day.getUTCFullYear(), day.getUTCMonth(), day.getUTCDate() + 1);
}

export const usd = (value: number) => `$${value.toFixed(2)}`;

export type BudgetVerdict = { readonly over: false } | { readonly over: true; readonly reason: string };

/** Pure: whether today's spend is over a daily budget; running tasks finish, nothing new starts. */
/** How every daily-budget reason starts (dailyBudgetVerdict's), also as the broker says it in a refusal. */
const DAILY_REASON_START = 'over its daily ';

/** Pure: whether a budget reason (the drain's or the broker's, which uses the same verdicts) is the daily one. */
export function isDailyBudgetReason(reason: string): boolean {
  return reason.startsWith(DAILY_REASON_START);
}

export function dailyBudgetVerdict(limits: Pick<SpendLimits, 'dailyUsd' | 'dailyTokens'>, spent: Spent): BudgetVerdict {
  if (limits.dailyUsd !== undefined && spent.usd >= limits.dailyUsd) {
    return {
      over: true,
      reason: `${DAILY_REASON_START}budget: ${usd(spent.usd)} of ${usd(limits.dailyUsd)} spent today (UTC); no new task starts until tomorrow`,
    };
  }
  if (limits.dailyTokens !== undefined && spent.tokens >= limits.dailyTokens) {
    return {
      over: true,
      reason: `${DAILY_REASON_START}token budget: ${spent.tokens} of ${limits.dailyTokens} tokens today (UTC); no new task starts until tomorrow`,
    };
  }
  return { over: false };
}

/** Dollars as whole micro-dollars: sums of reported costs compare without float dust (0.1 + 0.2 reaches 0.3). */
const micro = (value: number) => Math.round(value * 1_000_000);

/** Pure: whether a task has cost more than task_usd (over all its sessions, in every run). */
export function taskBudgetVerdict(taskUsd: number | undefined, spentUsd: number): BudgetVerdict {
  if (taskUsd === undefined || micro(spentUsd) < micro(taskUsd)) return { over: false };
  return { over: true, reason: `over its budget: ${usd(spentUsd)} of ${usd(taskUsd)} (task_usd)` };
}

/**
 * Pure: USD a task's next session may spend (to the micro-dollar), for the
 * CLI's budget flag and the runner's stream check; undefined when there is
 * no task_usd. 0 exactly when taskBudgetVerdict says over: nothing starts.
 */
export function taskBudgetLeft(taskUsd: number | undefined, spentUsd: number): number | undefined {
  if (taskUsd === undefined) return undefined;
  return Math.max(0, micro(taskUsd) - micro(spentUsd)) / 1_000_000;
}

/**
 * Pure: why a task stopped at its budget was parked. A session stopped for
 * its budget (by the CLI's flag or the runner) is over it even when the
 * sums land a hair under task_usd.
 */
export function stoppedAtBudget(taskUsd: number | undefined, spentUsd: number): Extract<BudgetVerdict, { over: true }> {
  const verdict = taskBudgetVerdict(taskUsd, spentUsd);
  if (verdict.over) return verdict;
  return {
    over: true,
    reason: `over its budget: ${usd(spentUsd)}${taskUsd === undefined ? '' : ` of ${usd(taskUsd)} (task_usd)`}; the session was stopped at the budget it was given`,
  };
}

/**
 * Pure: why a task whose session the provider broker refused over budget is parked. The broker decides with these
 * same verdicts on what it metered, so its reason is said as the broker's.
 */
export function refusedByBroker(brokerReason: string): Extract<BudgetVerdict, { over: true }> {
  return { over: true, reason: `over its budget: the broker refused the session (${brokerReason})` };
}

export interface RateLimitFacts {
  readonly now: number;
  /** When the CLI says the limit resets (ISO), if it says. */
  readonly resetAt: string | undefined;
  /** Waits this task already had in this drain. */
  readonly waits: number;
  readonly minSec: number;
  readonly maxSec: number;
}

export type RateLimitVerdict =
  | { readonly kind: 'wait'; readonly until: number; readonly why: string }
  | { readonly kind: 'block'; readonly reason: string };

/**
 * Pure: how long to hold new sessions after a rate limit. The CLI's reset
 * time, bounded to [min, max]; no time, or one the clocks disagree on (in
 * the past, or past the max), waits the bound. After MAX_RATE_LIMIT_WAITS
 * waits the task is blocked.
 */
export function rateLimitVerdict(facts: RateLimitFacts): RateLimitVerdict {
  if (facts.waits >= MAX_RATE_LIMIT_WAITS) return { kind: 'block', reason: RATE_LIMIT_BLOCK_REASON };
  const min = facts.minSec * 1000;
  const max = facts.maxSec * 1000;
  const reset = facts.resetAt === undefined ? Number.NaN : Date.parse(facts.resetAt);
  if (Number.isNaN(reset)) return { kind: 'wait', until: facts.now + max, why: 'no reset time given' };
  const wanted = reset - facts.now;
  if (wanted < min)
    return {
      kind: 'wait',
      until: facts.now + min,
      why: wanted < 0 ? `reset ${facts.resetAt} is already past` : `reset ${facts.resetAt}`,
    };
  if (wanted > max)
    return { kind: 'wait', until: facts.now + max, why: `reset ${facts.resetAt} is beyond the longest wait` };
  return { kind: 'wait', until: reset, why: `reset ${facts.resetAt}` };
}

/** The token counts a session report carries; null where the CLI did not say. */
export interface ReportedTokens {
  readonly inputTokens: number | null;
  readonly outputTokens: number | null;
  readonly cacheReadTokens: number | null;
  readonly cacheWriteTokens: number | null;
}

/** Tokens a report counts against daily_tokens: the ones it reported. */
export function reportTokens(report: ReportedTokens): number {
  return (
    (report.inputTokens ?? 0) +
    (report.outputTokens ?? 0) +
    (report.cacheReadTokens ?? 0) +
    (report.cacheWriteTokens ?? 0)
  );
}
