// What the metrics are made of: the facts one run record and one ledger day
// give, taken from root's own records (run records, the ledger) and the
// watcher's state. Every label value comes from a fixed set: a record's text
// is partly the repo user's (orchestrate's summary), and a free-form label
// would let it mint series without end. Pure.
import type { RunRecord } from '../runs/index.js';
import type { LedgerRecord } from '../ledger/index.js';
import { ledgerTotal } from '../ledger/index.js';

export const RUN_OUTCOMES = ['drained', 'nothing-to-do', 'failed', 'interrupted', 'error', 'other'] as const;
export type RunOutcomeLabel = (typeof RUN_OUTCOMES)[number];

export const TASK_OUTCOMES = ['landed', 'parked', 'blocked', 'failed', 'interrupted'] as const;
export type TaskOutcomeLabel = (typeof TASK_OUTCOMES)[number];

/** A finished run as the metrics count it. */
export interface RunFacts {
  readonly outcome: RunOutcomeLabel;
  /** Start to end of the drain; undefined when either time is missing or they disagree. */
  readonly seconds: number | undefined;
  readonly tasks: Readonly<Record<TaskOutcomeLabel, number>>;
  readonly gates: readonly { readonly green: boolean; readonly seconds: number }[];
}

/** Tokens and USD of some ledger records, by the ledger's own counting rule (control/ledger/counting.ts). */
export interface LedgerFacts {
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly cacheReadTokens: number;
  readonly cacheWriteTokens: number;
  readonly costUsd: number;
  /** Records that carried no cost: left out of costUsd, never counted as 0. */
  readonly unpricedRecords: number;
  readonly sessions: number;
  /** Agent sessions that hit a rate limit and waited it out (no attempt charged). */
  readonly rateLimitedSessions: number;
  /** Provider responses the broker metered with HTTP 429. */
  readonly rateLimitedResponses: number;
}

export const NO_LEDGER: LedgerFacts = {
  inputTokens: 0,
  outputTokens: 0,
  cacheReadTokens: 0,
  cacheWriteTokens: 0,
  costUsd: 0,
  unpricedRecords: 0,
  sessions: 0,
  rateLimitedSessions: 0,
  rateLimitedResponses: 0,
};

const isOneOf = <T extends string>(set: readonly T[], value: unknown): value is T =>
  typeof value === 'string' && (set as readonly string[]).includes(value);

/** Pure: the facts of a run record; undefined while it is still running (its figures are not final). */
export function runFacts(record: RunRecord): RunFacts | undefined {
  if (record.status === 'running') return undefined;
  const tasks = Object.fromEntries(TASK_OUTCOMES.map((outcome) => [outcome, 0])) as Record<TaskOutcomeLabel, number>;
  for (const task of Array.isArray(record.tasks) ? (record.tasks as unknown[]) : []) {
    const outcome = (task as { outcome?: unknown } | null)?.outcome;
    if (isOneOf(TASK_OUTCOMES, outcome)) tasks[outcome] += 1;
  }
  const started = Date.parse(record.startedAt);
  const ended = record.endedAt === undefined ? Number.NaN : Date.parse(record.endedAt);
  return {
    outcome: isOneOf(RUN_OUTCOMES, record.outcome) ? record.outcome : record.outcome === undefined ? 'error' : 'other',
    seconds:
      Number.isFinite(started) && Number.isFinite(ended) && ended >= started ? (ended - started) / 1000 : undefined,
    tasks,
    gates: (Array.isArray(record.gates) ? record.gates : [])
      .filter((gate) => typeof gate.ok === 'boolean' && Number.isFinite(gate.durationMs) && gate.durationMs >= 0)
      .map((gate) => ({ green: gate.ok, seconds: gate.durationMs / 1000 })),
  };
}

/** Pure: the facts of some ledger records (one day's file). */
export function ledgerFacts(records: readonly LedgerRecord[]): LedgerFacts {
  const total = ledgerTotal(records);
  return {
    inputTokens: total.inputTokens,
    outputTokens: total.outputTokens,
    cacheReadTokens: total.cacheReadTokens,
    cacheWriteTokens: total.cacheWriteTokens,
    costUsd: total.costUsd,
    unpricedRecords: total.unknownCost,
    sessions: total.sessions,
    rateLimitedSessions: total.rateLimited,
    rateLimitedResponses: records.filter((record) => record.source === 'broker' && record.status === 429).length,
  };
}

/** Pure: facts summed (days of a ledger); USD in micro-dollars, as the ledger sums it. */
export function addLedgerFacts(a: LedgerFacts, b: LedgerFacts): LedgerFacts {
  return {
    inputTokens: a.inputTokens + b.inputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
    cacheReadTokens: a.cacheReadTokens + b.cacheReadTokens,
    cacheWriteTokens: a.cacheWriteTokens + b.cacheWriteTokens,
    costUsd: Math.round((a.costUsd + b.costUsd) * 1e6) / 1e6,
    unpricedRecords: a.unpricedRecords + b.unpricedRecords,
    sessions: a.sessions + b.sessions,
    rateLimitedSessions: a.rateLimitedSessions + b.rateLimitedSessions,
    rateLimitedResponses: a.rateLimitedResponses + b.rateLimitedResponses,
  };
}
