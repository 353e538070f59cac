// Ledger records summed: totals per task, repo, day, model or run, what a
// repo spent on a day, and what each task cost. A session that reported no
// cost (or no tokens) is counted as unknown beside the sum, never as zero.
// Pure.
import type { LedgerRecord } from './ledger.js';
import { type Spent, utcDay, reportTokens } from '../../spend/verdict.js';
import type { SpendLimits } from '../../types.js';
import type { SpendPolicy } from '../../spend/policy.js';

export const LEDGER_GROUPS = ['task', 'repo', 'day', 'model', 'run'] as const;
export type LedgerGroup = (typeof LEDGER_GROUPS)[number];

export interface LedgerTotal {
  readonly key: string;
  readonly sessions: number;
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly cacheReadTokens: number;
  readonly cacheWriteTokens: number;
  /** Sessions that reported no token count at all. */
  readonly unknownTokens: number;
  readonly costUsd: number;
  /** Sessions that reported no cost: the sum leaves them out. */
  readonly unknownCost: number;
  readonly wallMs: number;
  readonly rateLimited: number;
}

const EMPTY: Omit<LedgerTotal, 'key'> = {
  sessions: 0,
  inputTokens: 0,
  outputTokens: 0,
  cacheReadTokens: 0,
  cacheWriteTokens: 0,
  unknownTokens: 0,
  costUsd: 0,
  unknownCost: 0,
  wallMs: 0,
  rateLimited: 0,
};

function hasTokens(record: LedgerRecord): boolean {
  return [record.inputTokens, record.outputTokens, record.cacheReadTokens, record.cacheWriteTokens].some(
    (value) => value !== null,
  );
}

function add(total: LedgerTotal, record: LedgerRecord): LedgerTotal {
  return {
    key: total.key,
    sessions: total.sessions + 1,
    inputTokens: total.inputTokens + (record.inputTokens ?? 0),
    outputTokens: total.outputTokens + (record.outputTokens ?? 0),
    cacheReadTokens: total.cacheReadTokens + (record.cacheReadTokens ?? 0),
    cacheWriteTokens: total.cacheWriteTokens + (record.cacheWriteTokens ?? 0),
    unknownTokens: total.unknownTokens + (hasTokens(record) ? 0 : 1),
    // Summed in micro-dollars so a long ledger does not drift in floating point.
    costUsd: Math.round((total.costUsd + (record.costUsd ?? 0)) * 1e6) / 1e6,
    unknownCost: total.unknownCost + (record.costUsd === null ? 1 : 0),
    wallMs: total.wallMs + record.wallMs,
    rateLimited: total.rateLimited + (record.rateLimited ? 1 : 0),
  };
}

function keyOf(record: LedgerRecord, by: LedgerGroup): string {
  switch (by) {
    case 'task':
      return `${record.repo} ${record.task ?? '(none)'}`;
    case 'repo':
      return record.repo;
    case 'day':
      return utcDay(Date.parse(record.endedAt));
    case 'model':
      return `${record.assistant} ${record.model ?? '(unknown)'}`;
    case 'run':
      return `${record.repo} ${record.run}`;
  }
}

/** Pure: the total of all records. */
export function ledgerTotal(records: readonly LedgerRecord[], key = 'total'): LedgerTotal {
  return records.reduce(add, { key, ...EMPTY });
}

/** Pure: totals per group, in key order. */
export function ledgerTotals(records: readonly LedgerRecord[], by: LedgerGroup): LedgerTotal[] {
  const groups = new Map<string, LedgerTotal>();
  for (const record of records) {
    const key = keyOf(record, by);
    groups.set(key, add(groups.get(key) ?? { key, ...EMPTY }, record));
  }
  return [...groups.values()].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

/** Pure: what counts against daily budgets on a UTC day. */
export function spentOn(records: readonly LedgerRecord[], day: string): Spent {
  const today = records.filter((record) => utcDay(Date.parse(record.endedAt)) === day);
  return { usd: ledgerTotal(today).costUsd, tokens: today.reduce((sum, record) => sum + reportTokens(record), 0) };
}

/** Pure: USD per task over the records given (tasks with any cost only). */
export function taskSpend(records: readonly LedgerRecord[]): Record<string, number> {
  const spend: Record<string, number> = {};
  for (const record of records) {
    if (record.task === null || record.costUsd === null) continue;
    const task = record.task.toUpperCase();
    spend[task] = Math.round(((spend[task] ?? 0) + record.costUsd) * 1e6) / 1e6;
  }
  return spend;
}

/**
 * Task totals handed to a drain: the most recently active ones, so --spend stays far below the kernel's 128 KiB per
 * argument.
 */
export const MAX_TASKS_IN_POLICY = 2000;

/** Pure: what root tells a drain (orchestrate --spend) from the registry and the repo's ledger. */
export function spendPolicyFor(limits: SpendLimits, records: readonly LedgerRecord[], now: number): SpendPolicy {
  const day = utcDay(now);
  if (limits.taskUsd === undefined) return { limits, day, spentToday: spentOn(records, day), taskSpentUsd: {} };
  const spend = taskSpend(records);
  const recent = [
    ...new Set(
      records
        .filter((record) => record.task !== null)
        .map((record) => record.task!.toUpperCase())
        .reverse(),
    ),
  ].slice(0, MAX_TASKS_IN_POLICY);
  const taskSpentUsd = Object.fromEntries(
    recent.filter((task) => spend[task] !== undefined).map((task) => [task, spend[task]!]),
  );
  return { limits, day, spentToday: spentOn(records, day), taskSpentUsd };
}

/** "$1.23", "$1.23 + 2 unknown", "unknown": a cost as people should read it. */
export function describeCost(total: Pick<LedgerTotal, 'costUsd' | 'unknownCost' | 'sessions'>): string {
  if (total.sessions > 0 && total.unknownCost === total.sessions) return 'unknown';
  const sum = `$${total.costUsd.toFixed(total.costUsd < 0.01 && total.costUsd > 0 ? 4 : 2)}`;
  return total.unknownCost ? `${sum} + ${total.unknownCost} unknown` : sum;
}
