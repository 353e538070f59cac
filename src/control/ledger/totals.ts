// Ledger records summed: totals per task, repo, day, model or run, what a
// repo spent on a day, and what each task cost. A session that reported no
// cost (or no tokens) is counted as unknown beside the sum, never as zero.
// Which records' figures count is counting.ts's rule: a run's broker records
// when it has any (the agent's own report kept beside), else its sessions.
// Pure.
import type { LedgerRecord, SessionLedgerRecord } from './ledger.js';
import { countLedger } from './counting.js';
import { type Spent, utcDay, reportTokens } from '../../spend/verdict.js';
import type { SpendLimits } from '../../types.js';
import type { SpendPolicy } from '../../spend/policy.js';

export const LEDGER_GROUPS = ['task', 'repo', 'day', 'model', 'run'] as const;
export type LedgerGroup = (typeof LEDGER_GROUPS)[number];

/** Tokens and USD summed over some records, with the records that said nothing counted beside. */
export interface UsageFigures {
  /** The records summed: sessions the drain reported, or responses the broker metered. */
  readonly records: number;
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly cacheReadTokens: number;
  readonly cacheWriteTokens: number;
  /** Records that carried no token count at all. */
  readonly unknownTokens: number;
  readonly costUsd: number;
  /** Records that carried no cost: the sum leaves them out. */
  readonly unknownCost: number;
}

/** Where a total's figures came from: the agents' reports, the broker's metering, or some runs of each. */
export type FiguresSource = 'agent' | 'broker' | 'both';

/** A group's total. Its figures are the ones that count (for budgets too); `source` says whose they are. */
export interface LedgerTotal extends UsageFigures {
  readonly key: string;
  /** Agent sessions the drains reported, metered runs included. */
  readonly sessions: number;
  readonly wallMs: number;
  readonly rateLimited: number;
  readonly source: FiguresSource;
  /** The broker's records among the figures; null when no run of the group was metered. */
  readonly metered: UsageFigures | null;
  /** What the agents reported for the metered runs: shown beside, never in the figures; null when none. */
  readonly agentReported: UsageFigures | null;
}

const NO_FIGURES: UsageFigures = {
  records: 0,
  inputTokens: 0,
  outputTokens: 0,
  cacheReadTokens: 0,
  cacheWriteTokens: 0,
  unknownTokens: 0,
  costUsd: 0,
  unknownCost: 0,
};

const EMPTY: Omit<LedgerTotal, 'key'> = {
  ...NO_FIGURES,
  sessions: 0,
  wallMs: 0,
  rateLimited: 0,
  source: 'agent',
  metered: null,
  agentReported: null,
};

function hasTokens(record: LedgerRecord): boolean {
  return [record.inputTokens, record.outputTokens, record.cacheReadTokens, record.cacheWriteTokens].some(
    (value) => value !== null,
  );
}

/** Pure: the figures with one more record in them. */
export function addFigures(figures: UsageFigures, record: LedgerRecord): UsageFigures {
  return {
    records: figures.records + 1,
    inputTokens: figures.inputTokens + (record.inputTokens ?? 0),
    outputTokens: figures.outputTokens + (record.outputTokens ?? 0),
    cacheReadTokens: figures.cacheReadTokens + (record.cacheReadTokens ?? 0),
    cacheWriteTokens: figures.cacheWriteTokens + (record.cacheWriteTokens ?? 0),
    unknownTokens: figures.unknownTokens + (hasTokens(record) ? 0 : 1),
    // Summed in micro-dollars so a long ledger does not drift in floating point.
    costUsd: Math.round((figures.costUsd + (record.costUsd ?? 0)) * 1e6) / 1e6,
    unknownCost: figures.unknownCost + (record.costUsd === null ? 1 : 0),
  };
}

/** Tokens of figures, all four kinds: what counts against daily_tokens. */
export const figureTokens = (figures: UsageFigures) => reportTokens(figures);

const figuresOf = (total: LedgerTotal): UsageFigures => ({
  records: total.records,
  inputTokens: total.inputTokens,
  outputTokens: total.outputTokens,
  cacheReadTokens: total.cacheReadTokens,
  cacheWriteTokens: total.cacheWriteTokens,
  unknownTokens: total.unknownTokens,
  costUsd: total.costUsd,
  unknownCost: total.unknownCost,
});

const sourceWith = (total: LedgerTotal, from: 'agent' | 'broker'): FiguresSource =>
  total.records === 0 && total.agentReported === null ? from : total.source === from ? from : 'both';

/** A record whose figures count. */
function addCounted(total: LedgerTotal, record: LedgerRecord): LedgerTotal {
  const figures = addFigures(figuresOf(total), record);
  if (record.source === 'broker')
    return {
      ...total,
      ...figures,
      source: sourceWith(total, 'broker'),
      metered: addFigures(total.metered ?? NO_FIGURES, record),
    };
  return {
    ...total,
    ...figures,
    sessions: total.sessions + 1,
    wallMs: total.wallMs + record.wallMs,
    rateLimited: total.rateLimited + (record.rateLimited ? 1 : 0),
    source: sourceWith(total, 'agent'),
  };
}

/** A session of a metered run: it counts as a session; its figures go beside. */
function addAgentReported(total: LedgerTotal, record: SessionLedgerRecord): LedgerTotal {
  return {
    ...total,
    sessions: total.sessions + 1,
    wallMs: total.wallMs + record.wallMs,
    rateLimited: total.rateLimited + (record.rateLimited ? 1 : 0),
    source: sourceWith(total, 'broker'),
    agentReported: addFigures(total.agentReported ?? NO_FIGURES, record),
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
      // The broker knows the provider, the drain the agent CLI: each names the model by what it knows.
      return `${record.source === 'broker' ? record.provider : record.assistant} ${record.model ?? '(unknown)'}`;
    case 'run':
      return `${record.repo} ${record.run}`;
  }
}

/** Pure: the total of all records. */
export function ledgerTotal(records: readonly LedgerRecord[], key = 'total'): LedgerTotal {
  const { counted, agentReported } = countLedger(records);
  return agentReported.reduce(addAgentReported, counted.reduce(addCounted, { key, ...EMPTY }));
}

/** Pure: totals per group, in key order. */
export function ledgerTotals(records: readonly LedgerRecord[], by: LedgerGroup): LedgerTotal[] {
  const { counted, agentReported } = countLedger(records);
  const groups = new Map<string, LedgerTotal>();
  const group = (record: LedgerRecord) => groups.get(keyOf(record, by)) ?? { key: keyOf(record, by), ...EMPTY };
  for (const record of counted) groups.set(keyOf(record, by), addCounted(group(record), record));
  for (const record of agentReported) groups.set(keyOf(record, by), addAgentReported(group(record), record));
  return [...groups.values()].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

/** Pure: what counts against daily budgets on a UTC day. */
export function spentOn(records: readonly LedgerRecord[], day: string): Spent {
  const today = countLedger(records).counted.filter((record) => utcDay(Date.parse(record.endedAt)) === day);
  const total = today.reduce(addFigures, NO_FIGURES);
  return { usd: total.costUsd, tokens: figureTokens(total) };
}

/** Pure: USD per task over the records given (tasks with any cost only). */
export function taskSpend(records: readonly LedgerRecord[]): Record<string, number> {
  const spend: Record<string, number> = {};
  for (const record of countLedger(records).counted) {
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
export function describeCost(total: Pick<UsageFigures, 'costUsd' | 'unknownCost' | 'records'>): string {
  if (total.records > 0 && total.unknownCost === total.records) return 'unknown';
  const sum = `$${total.costUsd.toFixed(total.costUsd < 0.01 && total.costUsd > 0 ? 4 : 2)}`;
  return total.unknownCost ? `${sum} + ${total.unknownCost} unknown` : sum;
}
