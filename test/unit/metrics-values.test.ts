// Records -> metric values: what one run record and one ledger day give, and
// the families a repo's facts become. Tables over built records; the text
// format itself is checked by the real promtool (integration/metrics-scrape).
import t from 'tap';
import { gatesOf, type RunRecord } from '../../src/control/runs/record.js';
import {
  addLedgerFacts,
  ledgerFacts,
  metricFamilies,
  NO_LEDGER,
  runFacts,
  type Family,
  type RepoFacts,
  type RunFacts,
} from '../../src/control/metrics/index.js';
import type { SessionLedgerRecord } from '../../src/control/ledger/ledger.js';
import { brokerLedgerRecord } from '../../src/control/ledger/metered.js';
import { priceOf } from '../../src/broker/prices.js';
import { usageRecord } from '../helpers/broker-records.js';

const record = (fields: Partial<RunRecord> = {}): RunRecord => ({
  id: 'run-1',
  repo: 'web',
  trigger: 'watch',
  user: 'agent-web',
  args: ['--drain'],
  status: 'finished',
  startedAt: '2026-12-02T10:00:00.000Z',
  endedAt: '2026-12-02T10:02:30.000Z',
  outcome: 'drained',
  tasks: [],
  ...fields,
});

const task = (id: string, outcome: string) => ({ id, title: id, outcome, durationMs: 1000 }) as never;
const noTasks = { landed: 0, parked: 0, blocked: 0, failed: 0, interrupted: 0 };

t.test('a run record as the metrics count it', async (t) => {
  const rows: [string, Partial<RunRecord>, RunFacts | undefined][] = [
    ['a running run is not counted yet', { status: 'running', outcome: undefined, endedAt: undefined }, undefined],
    ['an empty drain', {}, { outcome: 'drained', seconds: 150, tasks: noTasks, gates: [] }],
    [
      'tasks by outcome; an outcome outside the set is not a label',
      { tasks: [task('TASK-1', 'landed'), task('TASK-2', 'landed'), task('TASK-3', 'parked'), task('X', 'pwned')] },
      { outcome: 'drained', seconds: 150, tasks: { ...noTasks, landed: 2, parked: 1 }, gates: [] },
    ],
    [
      'gate runs with their verdicts and seconds',
      {
        gates: [
          { tasks: ['TASK-1', 'TASK-2'], ok: false, durationMs: 4000 },
          { tasks: ['TASK-1'], ok: true, durationMs: 2500 },
        ],
      },
      {
        outcome: 'drained',
        seconds: 150,
        tasks: noTasks,
        gates: [
          { green: false, seconds: 4 },
          { green: true, seconds: 2.5 },
        ],
      },
    ],
    [
      'an outcome the summary made up is "other"',
      { outcome: 'a\nnew_series{x="1"}' as never },
      { outcome: 'other', seconds: 150, tasks: noTasks, gates: [] },
    ],
    [
      'no outcome: the run ended without a summary',
      { outcome: undefined, status: 'interrupted' },
      { outcome: 'error', seconds: 150, tasks: noTasks, gates: [] },
    ],
    [
      'an end before the start has no duration',
      { endedAt: '2026-12-02T09:00:00.000Z', outcome: 'failed' },
      { outcome: 'failed', seconds: undefined, tasks: noTasks, gates: [] },
    ],
    [
      'no end: no duration',
      { endedAt: undefined, status: 'interrupted', outcome: 'interrupted' },
      { outcome: 'interrupted', seconds: undefined, tasks: noTasks, gates: [] },
    ],
  ];
  for (const [name, fields, expected] of rows) t.same(runFacts(record(fields)), expected, name);
});

t.test("the summary's gate runs as a record keeps them", async (t) => {
  const rows: [string, unknown, ReturnType<typeof gatesOf>][] = [
    ['not a list', { ok: true }, []],
    [
      'good ones kept, task ids checked',
      [
        { tasks: ['TASK-1', '../etc'], ok: true, durationMs: 10 },
        { tasks: 'TASK-2', ok: false, durationMs: 0 },
      ],
      [
        { tasks: ['TASK-1'], ok: true, durationMs: 10 },
        { tasks: [], ok: false, durationMs: 0 },
      ],
    ],
    [
      'a verdict that is not a boolean, a duration out of range: dropped',
      [
        { tasks: [], ok: 'yes', durationMs: 10 },
        { tasks: [], ok: true, durationMs: -1 },
        { tasks: [], ok: true, durationMs: 1e12 },
        { tasks: [], ok: true, durationMs: Number.NaN },
        null,
      ],
      [],
    ],
  ];
  for (const [name, value, expected] of rows) t.same(gatesOf(value), expected, name);
  t.equal(
    gatesOf(Array.from({ length: 5000 }, () => ({ tasks: [], ok: true, durationMs: 1 }))).length,
    1000,
    'bounded',
  );
});

const session = (fields: Partial<SessionLedgerRecord> = {}): SessionLedgerRecord => ({
  v: 1,
  repo: 'web',
  run: 'run-1',
  task: 'TASK-1',
  assistant: 'claude',
  role: 'implement',
  model: 'claude-sonnet-4-5',
  effort: null,
  startedAt: '2026-12-02T10:00:00.000Z',
  endedAt: '2026-12-02T10:01:00.000Z',
  wallMs: 60_000,
  inputTokens: 100,
  outputTokens: 50,
  cacheReadTokens: 0,
  cacheWriteTokens: 0,
  costUsd: 0.25,
  outcome: 'ok',
  rateLimited: false,
  sealedAt: '2026-12-02T10:03:00.000Z',
  ...fields,
});

const metered = (fields: Parameters<typeof usageRecord>[0] = {}) => {
  const result = brokerLedgerRecord(usageRecord(fields), '2026-12-02T10:03:00.000Z', priceOf);
  if (!result.ok) throw new Error(result.reason);
  return result.record;
};

t.test('a ledger day as the metrics count it', async (t) => {
  t.same(ledgerFacts([]), NO_LEDGER, 'nothing');
  t.same(
    ledgerFacts([
      session(),
      session({ run: 'run-2', rateLimited: true, costUsd: null, inputTokens: 7, outputTokens: null }),
    ]),
    {
      inputTokens: 107,
      outputTokens: 50,
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
      costUsd: 0.25,
      unpricedRecords: 1,
      sessions: 2,
      rateLimitedSessions: 1,
      rateLimitedResponses: 0,
    },
    'sessions: a cost not reported is unpriced, never 0',
  );
  const brokered = ledgerFacts([
    session(),
    metered(),
    metered({ status: 429, inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 }),
  ]);
  t.match(
    brokered,
    { inputTokens: 10, outputTokens: 20, cacheReadTokens: 30, cacheWriteTokens: 40, sessions: 1 },
    "a metered run's figures are the broker's; the session's own report is not added (counting.ts)",
  );
  t.equal(brokered.rateLimitedResponses, 1, 'a 429 the broker metered');
  t.ok(brokered.costUsd > 0 && brokered.costUsd !== 0.25, `priced by root (${brokered.costUsd})`);
  t.same(addLedgerFacts(ledgerFacts([session()]), ledgerFacts([session({ costUsd: 0.1 })])), {
    ...ledgerFacts([session(), session({ run: 'run-2', costUsd: 0.1 })]),
  });
});

const facts = (fields: Partial<RepoFacts> = {}): RepoFacts => ({
  repo: 'web',
  nowMs: Date.parse('2026-12-02T12:00:00.000Z'),
  runs: [],
  running: false,
  ledger: NO_LEDGER,
  queued: 0,
  runningAgents: 0,
  watcher: { state: 'idle' },
  lastSuccessfulTickMs: undefined,
  ...fields,
});

/** name{labels} -> value, histograms as their observations' count and sum. */
function values(families: readonly Family[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const family of families) {
    const key = (labels: Readonly<Record<string, string>>) =>
      `${family.name}{${Object.entries(labels)
        .filter(([name]) => name !== 'repo')
        .map(([name, value]) => `${name}=${value}`)
        .join(',')}}`;
    if (family.type !== 'histogram') {
      for (const sample of family.samples) out[key(sample.labels)] = sample.value;
      continue;
    }
    for (const labels of family.zero ?? []) {
      out[`${key(labels)}:count`] = 0;
      out[`${key(labels)}:sum`] = 0;
    }
    for (const sample of family.samples) {
      out[`${key(sample.labels)}:count`] = (out[`${key(sample.labels)}:count`] ?? 0) + 1;
      out[`${key(sample.labels)}:sum`] = (out[`${key(sample.labels)}:sum`] ?? 0) + sample.value;
    }
  }
  return out;
}

t.test("a repo's facts to metric values", async (t) => {
  const landedTwoGatedThree: RunFacts = {
    outcome: 'drained',
    seconds: 600,
    tasks: { ...noTasks, landed: 2, blocked: 1 },
    gates: [
      { green: false, seconds: 30 },
      { green: true, seconds: 20 },
      { green: true, seconds: 10 },
    ],
  };
  const failed: RunFacts = { outcome: 'failed', seconds: undefined, tasks: { ...noTasks, parked: 1 }, gates: [] };
  const idle = values(metricFamilies(facts(), new Set()));
  t.match(
    idle,
    {
      'agent_runner_runs_total{outcome=drained}': 0,
      'agent_runner_tasks_total{outcome=landed}': 0,
      'agent_runner_gate_runs_total{result=green}': 0,
      'agent_runner_drain_duration_seconds{}:count': 0,
      'agent_runner_gate_duration_seconds{result=red}:count': 0,
      'agent_runner_tokens_total{kind=input}': 0,
      'agent_runner_queue_depth{}': 0,
      'agent_runner_run_in_progress{}': 0,
      'agent_runner_held{}': 0,
      'agent_runner_metrics_source_up{source=ledger}': 1,
    },
    'every fixed series is there from the start, at 0',
  );
  t.notOk('agent_runner_gate_runs_per_landing{}' in idle, 'no ratio before a landing');
  t.notOk('agent_runner_last_successful_tick_timestamp_seconds{}' in idle, 'no tick yet: no value, not 0');

  const busy = values(
    metricFamilies(
      facts({
        runs: [landedTwoGatedThree, failed],
        running: true,
        queued: 3,
        runningAgents: 2,
        ledger: { ...NO_LEDGER, inputTokens: 500, costUsd: 1.5, rateLimitedSessions: 2, rateLimitedResponses: 4 },
        watcher: {
          state: 'running',
          rateLimitUntil: '2026-12-02T12:30:00.000Z',
          hold: { until: '2026-12-02T12:30:00.000Z' },
        },
        lastSuccessfulTickMs: Date.parse('2026-12-02T11:59:00.000Z'),
      }),
      new Set(['agents']),
    ),
  );
  t.match(busy, {
    'agent_runner_runs_total{outcome=drained}': 1,
    'agent_runner_runs_total{outcome=failed}': 1,
    'agent_runner_tasks_total{outcome=landed}': 2,
    'agent_runner_tasks_total{outcome=parked}': 1,
    'agent_runner_tasks_total{outcome=blocked}': 1,
    'agent_runner_gate_runs_total{result=green}': 2,
    'agent_runner_gate_runs_total{result=red}': 1,
    'agent_runner_gate_runs_per_landing{}': 1.5,
    'agent_runner_drain_duration_seconds{}:count': 1,
    'agent_runner_drain_duration_seconds{}:sum': 600,
    'agent_runner_gate_duration_seconds{result=green}:sum': 30,
    'agent_runner_gate_duration_seconds{result=red}:count': 1,
    'agent_runner_tokens_total{kind=input}': 500,
    'agent_runner_cost_usd_total{}': 1.5,
    'agent_runner_rate_limit_waits_total{}': 2,
    'agent_runner_provider_rate_limited_responses_total{}': 4,
    'agent_runner_queue_depth{}': 3,
    'agent_runner_running_agents{}': 2,
    'agent_runner_run_in_progress{}': 1,
    'agent_runner_held{}': 1,
    'agent_runner_rate_limit_until_timestamp_seconds{}': Date.parse('2026-12-02T12:30:00.000Z') / 1000,
    'agent_runner_last_successful_tick_timestamp_seconds{}': Date.parse('2026-12-02T11:59:00.000Z') / 1000,
    'agent_runner_metrics_source_up{source=agents}': 0,
    'agent_runner_metrics_source_up{source=runs}': 1,
  });

  const lifted = values(
    metricFamilies(facts({ watcher: { state: 'idle', hold: { until: '2026-12-02T11:00:00.000Z' } } }), new Set()),
  );
  t.equal(lifted['agent_runner_held{}'], 0, 'a hold whose time has passed holds nothing');

  const noLedger = values(
    metricFamilies(facts({ ledger: undefined, queued: undefined }), new Set(['ledger', 'queue'])),
  );
  t.notOk('agent_runner_tokens_total{kind=input}' in noLedger, 'an unreadable ledger is absent, not 0');
  t.notOk('agent_runner_queue_depth{}' in noLedger, 'an unreadable queue is absent, not 0');
  t.equal(noLedger['agent_runner_metrics_source_up{source=ledger}'], 0);

  const names = metricFamilies(facts(), new Set()).map((family) => family.name);
  t.same(
    names.filter((name) => !/^agent_runner_[a-z_]+$/.test(name)),
    [],
    'every name is agent_runner_*',
  );
  t.same(
    metricFamilies(facts(), new Set())
      .filter((family) => family.type === 'counter' && !family.name.endsWith('_total'))
      .map((family) => family.name),
    [],
    'every counter ends in _total',
  );
});
