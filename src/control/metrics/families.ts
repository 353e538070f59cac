// Every metric a watcher serves, named once, and the pure step from a repo's
// facts to their values. Counters are sums over root's records on disk (run
// records, the ledger), so they go on rising across scrapes and across a
// watcher restart; gauges say how things are now. Names follow Prometheus:
// `agent_runner_` first, base units (seconds, tokens), `_total` on counters,
// the registry's repo name as the `repo` label. Pure.
import {
  NO_LEDGER,
  RUN_OUTCOMES,
  TASK_OUTCOMES,
  type LedgerFacts,
  type RunFacts,
  type TaskOutcomeLabel,
} from './facts.js';

/** What a scrape reads: any source may be unreadable, and says so in agent_runner_metrics_source_up. */
export const SOURCES = ['runs', 'ledger', 'queue', 'agents'] as const;
export type Source = (typeof SOURCES)[number];

/** The watcher's own state, as its status holds it (control/watch/status.ts). */
export interface WatcherView {
  readonly state: string;
  /** The last rate-limit reset a drain reported (ISO). */
  readonly rateLimitUntil?: string;
  /** Why no run starts now, and until when (ISO). */
  readonly hold?: { readonly until: string };
}

export interface RepoFacts {
  readonly repo: string;
  readonly nowMs: number;
  /** Every finished run the watcher has seen, from the records on disk and those pruned since it read them. */
  readonly runs: readonly RunFacts[];
  /** A run of the repo is in progress (a record says running). */
  readonly running: boolean;
  readonly ledger: LedgerFacts | undefined;
  readonly queued: number | undefined;
  readonly runningAgents: number | undefined;
  readonly watcher: WatcherView;
  /** When a tick last read the registry, the queue and the board and acted without an error (ms). */
  readonly lastSuccessfulTickMs: number | undefined;
}

export type Labels = Readonly<Record<string, string>>;
export interface Sample {
  readonly labels: Labels;
  readonly value: number;
}

export interface Family {
  readonly name: string;
  readonly help: string;
  readonly type: 'counter' | 'gauge' | 'histogram';
  readonly labelNames: readonly string[];
  readonly buckets?: readonly number[];
  /** Counter and gauge values; for a histogram, one sample per observation. */
  readonly samples: readonly Sample[];
  /** Label sets a histogram shows even with no observation yet. */
  readonly zero?: readonly Labels[];
}

/** Drains take minutes to hours. */
export const DRAIN_BUCKETS = [10, 30, 60, 120, 300, 600, 1200, 1800, 3600, 7200, 14400];
/** A gate script runs for seconds to tens of minutes. */
export const GATE_BUCKETS = [1, 5, 15, 30, 60, 120, 300, 600, 1200, 3600];

const sum = (values: readonly number[]) => values.reduce((total, value) => total + value, 0);
const seconds = (iso: string | undefined) => {
  const at = iso === undefined ? Number.NaN : Date.parse(iso);
  return Number.isFinite(at) ? at / 1000 : undefined;
};

function counter(name: string, help: string, labelNames: readonly string[], samples: readonly Sample[]): Family {
  return { name, help, type: 'counter', labelNames, samples };
}

function gauge(name: string, help: string, labelNames: readonly string[], samples: readonly Sample[]): Family {
  return { name, help, type: 'gauge', labelNames, samples };
}

/** A gauge with one sample when the value is known, none when it is not. */
function known(name: string, help: string, repo: string, value: number | undefined): Family {
  return gauge(name, help, ['repo'], value === undefined ? [] : [{ labels: { repo }, value }]);
}

function runFamilies(repo: string, runs: readonly RunFacts[]): Family[] {
  const tasksBy = (outcome: TaskOutcomeLabel) => sum(runs.map((run) => run.tasks[outcome]));
  const gates = runs.flatMap((run) => run.gates);
  const results = [
    { result: 'green', gates: gates.filter((gate) => gate.green) },
    { result: 'red', gates: gates.filter((gate) => !gate.green) },
  ];
  const landed = tasksBy('landed');
  return [
    counter(
      'agent_runner_runs_total',
      'Runs of the repo that ended, by outcome (root run records).',
      ['repo', 'outcome'],
      RUN_OUTCOMES.map((outcome) => ({
        labels: { repo, outcome },
        value: runs.filter((run) => run.outcome === outcome).length,
      })),
    ),
    counter(
      'agent_runner_tasks_total',
      'Tasks the runs ended, by outcome: landed on auto/work, parked, blocked, failed, interrupted.',
      ['repo', 'outcome'],
      TASK_OUTCOMES.map((outcome) => ({ labels: { repo, outcome }, value: tasksBy(outcome) })),
    ),
    counter(
      'agent_runner_gate_runs_total',
      'Runs of the gate script by the integrator, by result (a red batch is bisected with more runs).',
      ['repo', 'result'],
      results.map(({ result, gates }) => ({ labels: { repo, result }, value: gates.length })),
    ),
    known(
      'agent_runner_gate_runs_per_landing',
      'Gate runs per landed task over the runs counted (absent until a task landed).',
      repo,
      landed > 0 ? gates.length / landed : undefined,
    ),
    {
      name: 'agent_runner_drain_duration_seconds',
      help: 'How long each run took, start to end (root run records).',
      type: 'histogram',
      labelNames: ['repo'],
      buckets: DRAIN_BUCKETS,
      samples: runs.flatMap((run) => (run.seconds === undefined ? [] : [{ labels: { repo }, value: run.seconds }])),
      zero: [{ repo }],
    },
    {
      name: 'agent_runner_gate_duration_seconds',
      help: 'How long each gate run took, by result.',
      type: 'histogram',
      labelNames: ['repo', 'result'],
      buckets: GATE_BUCKETS,
      samples: results.flatMap(({ result, gates }) =>
        gates.map((gate) => ({ labels: { repo, result }, value: gate.seconds })),
      ),
      zero: results.map(({ result }) => ({ repo, result })),
    },
  ];
}

function ledgerFamilies(repo: string, ledger: LedgerFacts): Family[] {
  const one = (value: number) => [{ labels: { repo }, value }];
  return [
    counter(
      'agent_runner_tokens_total',
      'Model tokens the repo used, by kind (root ledger).',
      ['repo', 'kind'],
      [
        { labels: { repo, kind: 'input' }, value: ledger.inputTokens },
        { labels: { repo, kind: 'output' }, value: ledger.outputTokens },
        { labels: { repo, kind: 'cache_read' }, value: ledger.cacheReadTokens },
        { labels: { repo, kind: 'cache_write' }, value: ledger.cacheWriteTokens },
      ],
    ),
    counter(
      'agent_runner_cost_usd_total',
      'What the repo spent on models in US dollars (root ledger; records without a price are not in it).',
      ['repo'],
      one(ledger.costUsd),
    ),
    counter(
      'agent_runner_unpriced_records_total',
      'Ledger records that carried no cost: their spend is unknown, not zero.',
      ['repo'],
      one(ledger.unpricedRecords),
    ),
    counter('agent_runner_agent_sessions_total', 'Agent sessions the drains reported.', ['repo'], one(ledger.sessions)),
    counter(
      'agent_runner_rate_limit_waits_total',
      'Agent sessions that hit a rate limit; the drain waited it out without charging an attempt.',
      ['repo'],
      one(ledger.rateLimitedSessions),
    ),
    counter(
      'agent_runner_provider_rate_limited_responses_total',
      'Provider responses with HTTP 429 that the broker metered.',
      ['repo'],
      one(ledger.rateLimitedResponses),
    ),
  ];
}

function nowFamilies(facts: RepoFacts): Family[] {
  const { repo, watcher, nowMs } = facts;
  const holdUntil = seconds(watcher.hold?.until);
  return [
    known('agent_runner_queue_depth', 'Jobs queued for the repo (enqueue), not yet started.', repo, facts.queued),
    known('agent_runner_running_agents', 'Agents of the repo running now.', repo, facts.runningAgents),
    known(
      'agent_runner_run_in_progress',
      '1 while a run of the repo is in progress, else 0.',
      repo,
      facts.running ? 1 : 0,
    ),
    known(
      'agent_runner_held',
      '1 while the watcher holds new runs (a rate limit or a daily budget), else 0.',
      repo,
      holdUntil !== undefined && holdUntil * 1000 > nowMs ? 1 : 0,
    ),
    known(
      'agent_runner_rate_limit_until_timestamp_seconds',
      'When the last rate limit a drain reported lifts (Unix time).',
      repo,
      seconds(watcher.rateLimitUntil),
    ),
    known(
      'agent_runner_last_successful_tick_timestamp_seconds',
      'When the watcher last ticked without an error (Unix time); no ticks while a run is in progress.',
      repo,
      facts.lastSuccessfulTickMs === undefined ? undefined : facts.lastSuccessfulTickMs / 1000,
    ),
  ];
}

/** Pure: every metric of a repo from its facts; which sources could be read is said beside. */
export function metricFamilies(facts: RepoFacts, unreadable: ReadonlySet<Source>): Family[] {
  return [
    ...runFamilies(facts.repo, facts.runs),
    ...ledgerFamilies(facts.repo, facts.ledger ?? NO_LEDGER).map((family) =>
      facts.ledger === undefined ? { ...family, samples: [] } : family,
    ),
    ...nowFamilies(facts),
    gauge(
      'agent_runner_metrics_source_up',
      'Whether this scrape could read a source of the figures (1) or not (0: the journal says why).',
      ['repo', 'source'],
      SOURCES.map((source) => ({ labels: { repo: facts.repo, source }, value: unreadable.has(source) ? 0 : 1 })),
    ),
  ];
}
