// A repo's run history: the runs root dispatched (by hand, the watcher or a
// queued job; src/control/runs/record.ts) and the drains the workspace itself kept
// (drain/history.ts), which also covers drains a person ran with
// orchestrate. A dispatched run is both; it is listed once, with what root
// recorded and the tasks of whichever record has them. Pure.
import type { RunRecord, RunUsage } from './record.js';
import type { DrainSummary, TaskSummary } from '../../drain/types.js';
import { describeCost, figureTokens, ledgerTotal, type LedgerRecord } from '../ledger/index.js';

export interface HistoryEntry {
  readonly id: string;
  /** dispatch, watch, job, or orchestrate (a drain run by hand, without root). */
  readonly trigger: 'dispatch' | 'watch' | 'job' | 'orchestrate';
  readonly jobId: string | null;
  readonly status: 'running' | 'finished' | 'interrupted';
  readonly outcome: string;
  readonly startedAt: string;
  readonly endedAt: string | null;
  readonly exitCode: number | null;
  readonly detail: string | null;
  readonly counts: {
    readonly landed: number;
    readonly parked: number;
    readonly blocked: number;
    readonly failed: number;
  };
  /**
   * Tokens of the run's agent sessions as root sealed them into the ledger; null when not known (a drain run by hand,
   * an older run).
   */
  readonly tokens: number | null;
  /** What the sessions cost ("$0.42", "$0.42 + 1 unknown", "unknown"); null when not known. */
  readonly cost: string | null;
  /** Whose the tokens and cost are: the broker's metering of the run, or the agents' reports; null when not known. */
  readonly source: 'broker' | 'agent' | null;
  /** For a metered run, what its agents reported (never in tokens and cost above); null otherwise. */
  readonly agentReported: { readonly tokens: number | null; readonly cost: string } | null;
  /** Why the run stopped starting tasks (a daily budget), when it did. */
  readonly budgetStop: string | null;
  readonly tasks: readonly TaskSummary[];
}

/** The figures of a run's record as people read them: its own, and for a metered run the agents' beside. */
function usageEntry(usage: RunUsage | undefined): Pick<HistoryEntry, 'tokens' | 'cost' | 'source' | 'agentReported'> {
  if (!usage) return { tokens: null, cost: null, source: null, agentReported: null };
  const reported = usage.metered?.agentReported;
  return {
    // Nothing reported a token: unknown, not 0.
    tokens: usage.tokens > 0 ? usage.tokens : null,
    cost: describeCost({ ...usage, records: usage.metered ? usage.metered.responses : usage.sessions }),
    source: usage.metered ? 'broker' : 'agent',
    agentReported: reported
      ? {
          tokens: reported.tokens > 0 ? reported.tokens : null,
          cost: describeCost({ ...reported, records: usage.sessions }),
        }
      : null,
  };
}

const TRIGGER = { manual: 'dispatch', watch: 'watch', job: 'job' } as const;

/**
 * The one word for how a run started, in runs, fleet and the dashboard alike: dispatch (bin/dispatch by hand),
 * watch (its watcher), job (a queued job), orchestrate (a drain run by hand in the checkout, without root).
 */
export type RunStartedBy = HistoryEntry['trigger'];

/** Pure: a run record's trigger as that word. */
export function startedBy(trigger: RunRecord['trigger']): RunStartedBy {
  return TRIGGER[trigger] ?? 'dispatch';
}

/**
 * Pure: a run's figures from root's ledger, for a run whose record carries none (a drain run by hand that root
 * priced, an older record): the same sums `ledger --by run` prints. Undefined when the ledger has nothing of it.
 */
function ledgerEntry(
  records: readonly LedgerRecord[],
): Pick<HistoryEntry, 'tokens' | 'cost' | 'source' | 'agentReported'> | undefined {
  if (!records.length) return undefined;
  const total = ledgerTotal(records);
  const tokens = figureTokens(total);
  const reported = total.agentReported;
  return {
    tokens: tokens > 0 ? tokens : null,
    cost: describeCost(total),
    source: total.metered ? 'broker' : 'agent',
    agentReported: reported
      ? { tokens: figureTokens(reported) > 0 ? figureTokens(reported) : null, cost: describeCost(reported) }
      : null,
  };
}

/** Pure: the priced entry: its record's own figures, else the ledger's for its run. */
function priced(
  entry: Omit<HistoryEntry, 'tokens' | 'cost' | 'source' | 'agentReported'>,
  usage: RunUsage | undefined,
  ledger: ReadonlyMap<string, LedgerRecord[]>,
): HistoryEntry {
  return { ...entry, ...((usage ? undefined : ledgerEntry(ledger.get(entry.id) ?? [])) ?? usageEntry(usage)) };
}

function counts(tasks: readonly TaskSummary[]): HistoryEntry['counts'] {
  const n = (outcome: string) => tasks.filter((task) => task.outcome === outcome).length;
  return { landed: n('landed'), parked: n('parked'), blocked: n('blocked'), failed: n('failed') };
}

/** Newest first; `limit` entries at most. `ledger`: root's ledger records of the repo, to price runs by. */
export function mergeRunHistory(
  records: readonly RunRecord[],
  drains: readonly DrainSummary[],
  limit = Infinity,
  ledger: readonly LedgerRecord[] = [],
): HistoryEntry[] {
  const drainById = new Map(drains.map((drain) => [drain.runId, drain]));
  const byRun = new Map<string, LedgerRecord[]>();
  for (const record of ledger) byRun.set(record.run, [...(byRun.get(record.run) ?? []), record]);
  const entries: HistoryEntry[] = [];
  for (const record of records) {
    const drain = drainById.get(record.id);
    drainById.delete(record.id);
    const tasks = record.tasks?.length ? record.tasks : (drain?.tasks ?? []);
    const entry = {
      id: record.id,
      trigger: startedBy(record.trigger),
      jobId: record.jobId ?? null,
      status: record.status,
      outcome: record.status === 'running' ? 'running' : (record.outcome ?? drain?.outcome ?? record.status),
      startedAt: record.startedAt,
      endedAt: record.endedAt ?? null,
      exitCode: record.exitCode ?? null,
      detail: record.detail ?? drain?.failure ?? null,
      counts: counts(tasks),
      budgetStop: record.budgetStop ?? null,
      tasks,
    };
    entries.push(priced(entry, record.usage, byRun));
  }
  for (const drain of drainById.values()) {
    const entry = {
      id: drain.runId,
      trigger: 'orchestrate' as const,
      jobId: null,
      status: drain.outcome === 'interrupted' ? ('interrupted' as const) : ('finished' as const),
      outcome: drain.outcome,
      startedAt: drain.startedAt,
      endedAt: drain.endedAt,
      exitCode: null,
      detail: drain.failure ?? null,
      counts: counts(drain.tasks),
      budgetStop: null,
      tasks: drain.tasks,
    };
    entries.push(priced(entry, undefined, byRun));
  }
  return entries
    .sort((a, b) => (a.startedAt < b.startedAt ? 1 : a.startedAt > b.startedAt ? -1 : a.id < b.id ? 1 : -1))
    .slice(0, limit);
}

/** What `runs` prints and the dashboard's runs tab shows. */
export interface RunHistory {
  readonly target: string;
  readonly runs: readonly HistoryEntry[];
  /** What could not be read (the user's records, say); the rest is still listed. */
  readonly errors: readonly string[];
}
