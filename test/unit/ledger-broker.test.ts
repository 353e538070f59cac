// The broker's records in root's ledger: each metered response checked and
// priced as root seals it, malformed lines refused on read, and the one
// counting rule (a metered run's figures are the broker's, its agents'
// report beside) in every total, budget figure, run record and the ledger
// command's table and JSON.
import t from 'tap';
import * as path from 'node:path';
import {
  appendBrokerUsage,
  appendLedger,
  readLedger,
  sealRun,
  type RunToSeal,
} from '../../src/control/ledger/ledger.js';
import { brokerLedgerRecord, type BrokerLedgerRecord } from '../../src/control/ledger/metered.js';
import { countLedger } from '../../src/control/ledger/counting.js';
import {
  ledgerTotal,
  ledgerTotals,
  spendPolicyFor,
  spentOn,
  taskSpend,
  type LedgerTotal,
} from '../../src/control/ledger/totals.js';
import { ledgerReport, renderLedger } from '../../src/control/ledger/report.js';
import { sealRunUsage } from '../../src/control/dispatch/usage.js';
import { mergeRunHistory } from '../../src/control/runs/history.js';
import { renderRunHistory } from '../../src/cli/runs.js';
import type { RunRecord } from '../../src/control/runs/record.js';
import { fleetSpend } from '../../src/control/fleet/spend.js';
import type { RegistryRepo } from '../../src/types.js';
import { priceOf } from '../../src/broker/prices.js';
import type { UsageRecord } from '../../src/broker/types.js';
import type { SessionReport } from '../../src/drain/types.js';
import { SPEND_DEFAULTS } from '../../src/spend/verdict.js';
import { realFs } from '../../src/io/real-ports.js';
import { usageRecord } from '../helpers/broker-records.js';
import { tempDir } from '../helpers/temp.js';
import { cli } from '../helpers/in-process-cli.js';

const SEALED_AT = '2026-12-02T10:00:05.000Z';
const RUN: RunToSeal = {
  repo: 'web',
  runId: 'run-1',
  startedAt: '2026-12-02T09:00:00.000Z',
  endedAt: '2026-12-02T10:30:00.000Z',
  summary: undefined,
  sealedAt: '2026-12-02T10:30:01.000Z',
};

function built(fields: Partial<UsageRecord> = {}): BrokerLedgerRecord {
  const result = brokerLedgerRecord(usageRecord(fields), SEALED_AT, priceOf);
  if (!result.ok) throw new Error(`refused: ${result.reason}`);
  return result.record;
}

function aReport(change: Partial<SessionReport> = {}): SessionReport {
  return {
    taskId: 'TASK-1',
    assistant: 'claude',
    role: 'implement',
    model: 'claude-sonnet-4-5',
    effort: null,
    startedAt: '2026-12-02T09:05:00.000Z',
    endedAt: '2026-12-02T09:50:00.000Z',
    wallMs: 2_700_000,
    inputTokens: 1,
    outputTokens: 2,
    cacheReadTokens: 3,
    cacheWriteTokens: 4,
    costUsd: 0.01,
    outcome: 'ok',
    rateLimited: false,
    ...change,
  };
}

const drained = (sessions: SessionReport[], run: Partial<RunToSeal> = {}) =>
  sealRun({ ...RUN, ...run, summary: { runId: RUN.runId, outcome: 'drained', tasks: [], sessions } });

// claude-sonnet-4-5 at $3/$15 per million, cache read $0.30, cache write $3.75:
// 10 in, 20 out, 30 cache read, 40 cache write = 0.00003 + 0.0003 + 0.000009 + 0.00015.
const SONNET_USD = 0.000489;

t.test("a metered response is sealed with the grant's task, its tokens and root's list-price USD", async (t) => {
  t.same(built({ session: 'sess-7' }), {
    v: 1,
    source: 'broker',
    repo: 'web',
    run: 'run-1',
    task: 'TASK-1',
    session: 'sess-7',
    provider: 'anthropic',
    model: 'claude-sonnet-4-5',
    status: 200,
    usage: 'read',
    startedAt: '2026-12-02T09:59:59.000Z',
    endedAt: '2026-12-02T10:00:00.000Z',
    inputTokens: 10,
    outputTokens: 20,
    cacheReadTokens: 30,
    cacheWriteTokens: 40,
    costUsd: SONNET_USD,
    sealedAt: SEALED_AT,
  });
});

t.test('every field the broker sends is checked: out of range is unknown, never zero', async (t) => {
  const rows: [string, Record<string, unknown>, Partial<BrokerLedgerRecord>][] = [
    ['a model without a price has no cost, not $0', { model: 'llama-3-70b' }, { costUsd: null, inputTokens: 10 }],
    ['no model at all has no cost', { model: null }, { model: null, costUsd: null }],
    [
      'a response whose usage could not be read has no cost',
      { usage: 'none', inputTokens: null, outputTokens: null, cacheReadTokens: null, cacheWriteTokens: null },
      { costUsd: null, inputTokens: null, outputTokens: null, usage: 'none' },
    ],
    ['null tokens stay null', { outputTokens: null }, { outputTokens: null, inputTokens: 10 }],
    [
      'tokens out of range are unknown, and with no count left the cost is unknown too',
      { inputTokens: -5, outputTokens: 1e13, cacheReadTokens: 'many', cacheWriteTokens: Number.NaN },
      { inputTokens: null, outputTokens: null, cacheReadTokens: null, cacheWriteTokens: null, costUsd: null },
    ],
    [
      'an absurd count is left out of the price, the others priced',
      { inputTokens: 1e13, outputTokens: 1_000_000, cacheReadTokens: 0, cacheWriteTokens: 0 },
      { inputTokens: null, outputTokens: 1_000_000, costUsd: 15 },
    ],
    [
      'a priced model with counted tokens is priced from those tokens',
      { model: 'gpt-5', provider: 'openai', inputTokens: 1_000_000, outputTokens: 0, cacheReadTokens: 0 },
      { provider: 'openai', costUsd: 1.25 },
    ],
    ['a grant that named no task', { task: '-' }, { task: null }],
    ['a task that is not a task id', { task: '../../etc/passwd' }, { task: null }],
    ['control characters in a model name', { model: 'claude\u001b[2J' }, { model: null, costUsd: null }],
    ['a session header of odd characters', { session: 'a b;c' }, { session: null }],
    ['a status that is not HTTP', { status: 42 }, { status: null }],
    [
      "a provider's error answer without usage is not billed: zero, not unknown",
      {
        status: 429,
        usage: 'none',
        inputTokens: null,
        outputTokens: null,
        cacheReadTokens: null,
        cacheWriteTokens: null,
      },
      { status: 429, inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, costUsd: 0 },
    ],
    [
      'a successful answer without usage stays unknown',
      {
        status: 200,
        usage: 'none',
        inputTokens: null,
        outputTokens: null,
        cacheReadTokens: null,
        cacheWriteTokens: null,
      },
      { status: 200, inputTokens: null, outputTokens: null, costUsd: null },
    ],
    ['an unknown usage reading', { usage: 'all of it' }, { usage: 'none', costUsd: null }],
    [
      'an end after root sealed it is the seal time',
      { endedAt: '2030-01-01T00:00:00.000Z', startedAt: '2030-01-01T00:00:00.000Z' },
      { endedAt: SEALED_AT, startedAt: SEALED_AT },
    ],
    [
      'an end longer ago than a grant lives is the seal time (no writing into old days)',
      { endedAt: '2026-11-01T00:00:00.000Z' },
      { endedAt: SEALED_AT },
    ],
    [
      'a start after the end is the end',
      { startedAt: '2026-12-02T10:00:01.000Z' },
      { startedAt: '2026-12-02T10:00:00.000Z' },
    ],
    ['a time that is not one', { endedAt: 'yesterday' }, { endedAt: SEALED_AT }],
  ];
  for (const [name, change, expected] of rows) {
    const record = built(change as Partial<UsageRecord>);
    t.same(
      Object.fromEntries(Object.keys(expected).map((key) => [key, record[key as keyof BrokerLedgerRecord]])),
      expected,
      name,
    );
  }
});

t.test('a record that cannot be put on a run of this repo is refused whole', async (t) => {
  const rows: [string, Record<string, unknown>, string][] = [
    ['a repo that is no repo name', { repo: 'Web/../x' }, 'repo "Web/../x" is not a repo name'],
    ['a run id that is not one', { run: '../run' }, 'run "../run" is not a run id'],
    ['an unknown provider', { provider: 'gemini' }, 'provider "gemini" is not one the broker serves'],
  ];
  for (const [name, change, reason] of rows)
    t.same(
      brokerLedgerRecord(usageRecord(change as Partial<UsageRecord>), SEALED_AT, priceOf),
      { ok: false, reason },
      name,
    );
});

t.test('appendBrokerUsage writes one line to its day file; another repo is not written', async (t) => {
  const state = tempDir(t, 'ledger-broker-');
  const written = await appendBrokerUsage(realFs, state, 'web', usageRecord(), SEALED_AT);
  t.same(written, { ok: true, record: built() });
  t.same(await appendBrokerUsage(realFs, state, 'web', usageRecord({ repo: 'api' }), SEALED_AT), {
    ok: false,
    reason: 'a usage record from the broker of repo web names repo api; not recorded',
  });
  t.same(await appendBrokerUsage(realFs, state, 'web', usageRecord({ run: '' }), SEALED_AT), {
    ok: false,
    reason: 'a usage record from the broker of repo web: run "" is not a run id',
  });
  t.same(await readLedger(realFs, state, 'web'), [built()]);
  t.same(await readLedger(realFs, state, 'api'), []);
});

t.test('reading the ledger: both kinds come back, a malformed broker line is refused', async (t) => {
  const state = tempDir(t, 'ledger-read-');
  const sessions = drained([aReport()]);
  await appendLedger(realFs, state, 'web', [...sessions, built()]);
  const good = built();
  const bad: [string, Record<string, unknown>][] = [
    ['a cost as text', { costUsd: '0.5' }],
    ['a negative cost', { costUsd: -1 }],
    ['tokens as text', { inputTokens: '10' }],
    ['absurd tokens', { outputTokens: 1e15 }],
    ['an unknown provider', { provider: 'gemini' }],
    ['a repo that is no repo name', { repo: '../x' }],
    ['a task that is not one', { task: '../../x' }],
    ['a time not as root writes it', { endedAt: 'Tue, 02 Dec 2026 10:00:00 GMT' }],
    ['an unknown usage reading', { usage: 'some' }],
    ['a field root never writes', { note: 'hi' }],
    ['a field missing', { costUsd: undefined }],
    ['an unknown source', { source: 'agent' }],
  ];
  const file = path.join(state, 'repos/web/ledger/2026-12-02.jsonl');
  for (const [, change] of bad) await realFs.appendLine(file, JSON.stringify({ ...good, ...change }));
  t.same(
    await readLedger(realFs, state, 'web'),
    [...sessions, good],
    `refused: ${bad.map(([name]) => name).join('; ')}`,
  );
});

/** The totals' figures as a row: what the tests compare. */
const figures = (total: LedgerTotal) => ({
  sessions: total.sessions,
  records: total.records,
  tokens: total.inputTokens + total.outputTokens + total.cacheReadTokens + total.cacheWriteTokens,
  costUsd: total.costUsd,
  unknownCost: total.unknownCost,
  unknownTokens: total.unknownTokens,
  source: total.source,
  agentReported: total.agentReported && {
    records: total.agentReported.records,
    costUsd: total.agentReported.costUsd,
    unknownCost: total.agentReported.unknownCost,
  },
});

t.test("the one counting rule: a metered run's figures are the broker's, its agents' report beside", async (t) => {
  const metered = [built(), built({ responseId: 'msg_2', outputTokens: 120 })];
  const meteredUsd = Math.round((SONNET_USD + SONNET_USD + (100 * 15) / 1e6) * 1e6) / 1e6;
  const rows: [string, Parameters<typeof ledgerTotal>[0], ReturnType<typeof figures>][] = [
    [
      'a run without broker records is counted as before',
      drained([aReport(), aReport({ costUsd: null })]),
      {
        sessions: 2,
        records: 2,
        tokens: 20,
        costUsd: 0.01,
        unknownCost: 1,
        unknownTokens: 0,
        source: 'agent',
        agentReported: null,
      },
    ],
    [
      'a run killed mid-way (the "no report" record) plus its broker records: the broker sums',
      [...metered, ...sealRun(RUN)],
      {
        sessions: 1,
        records: 2,
        tokens: 100 + 200,
        costUsd: meteredUsd,
        unknownCost: 0,
        unknownTokens: 0,
        source: 'broker',
        agentReported: { records: 1, costUsd: 0, unknownCost: 1 },
      },
    ],
    [
      'a drain that reports zero tokens while the broker metered more: the broker figures',
      [
        ...drained([aReport({ inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, costUsd: 0 })]),
        ...metered,
      ],
      {
        sessions: 1,
        records: 2,
        tokens: 300,
        costUsd: meteredUsd,
        unknownCost: 0,
        unknownTokens: 0,
        source: 'broker',
        agentReported: { records: 1, costUsd: 0, unknownCost: 0 },
      },
    ],
    [
      'a drain that reports more than the broker metered is shown beside, never added',
      [...drained([aReport({ costUsd: 9 })]), ...metered],
      {
        sessions: 1,
        records: 2,
        tokens: 300,
        costUsd: meteredUsd,
        unknownCost: 0,
        unknownTokens: 0,
        source: 'broker',
        agentReported: { records: 1, costUsd: 9, unknownCost: 0 },
      },
    ],
    [
      'a metered run and an unmetered one: each by its own rule',
      [...metered, ...drained([aReport({ costUsd: 9 })]), ...drained([aReport({ costUsd: 1 })], { runId: 'run-2' })],
      {
        sessions: 2,
        records: 3,
        tokens: 310,
        costUsd: Math.round((meteredUsd + 1) * 1e6) / 1e6,
        unknownCost: 0,
        unknownTokens: 0,
        source: 'both',
        agentReported: { records: 1, costUsd: 9, unknownCost: 0 },
      },
    ],
    [
      'an unpriced model counts its tokens and leaves its cost unknown',
      [built({ model: 'llama-3-70b' }), ...sealRun(RUN)],
      {
        sessions: 1,
        records: 1,
        tokens: 100,
        costUsd: 0,
        unknownCost: 1,
        unknownTokens: 0,
        source: 'broker',
        agentReported: { records: 1, costUsd: 0, unknownCost: 1 },
      },
    ],
    [
      'the same run id in another repo is another run',
      [...metered, ...drained([aReport({ costUsd: 1 })], { repo: 'api' })],
      {
        sessions: 1,
        records: 3,
        tokens: 310,
        costUsd: Math.round((meteredUsd + 1) * 1e6) / 1e6,
        unknownCost: 0,
        unknownTokens: 0,
        source: 'both',
        agentReported: null,
      },
    ],
  ];
  for (const [name, records, expected] of rows) t.same(figures(ledgerTotal(records)), expected, name);

  const killed = [...metered, ...sealRun(RUN)];
  t.same(
    countLedger(killed).agentReported.map((record) => record.outcome),
    ['no-summary'],
    "the killed run's unknown record is its agents' side",
  );
  t.same(spentOn(killed, '2026-12-02'), { usd: meteredUsd, tokens: 300 }, 'daily budgets count the broker');
  t.same(spentOn(killed, '2026-12-03'), { usd: 0, tokens: 0 });
  const mixed = [...metered, ...drained([aReport({ costUsd: 9 })]), ...drained([aReport()], { runId: 'run-2' })];
  t.same(taskSpend(mixed), { 'TASK-1': Math.round((meteredUsd + 0.01) * 1e6) / 1e6 }, 'task budgets too');
  const policy = spendPolicyFor({ ...SPEND_DEFAULTS, taskUsd: 1 }, mixed, Date.parse('2026-12-02T12:00:00Z'));
  t.same(policy.spentToday, { usd: Math.round((meteredUsd + 0.01) * 1e6) / 1e6, tokens: 310 });
  t.same(policy.taskSpentUsd, { 'TASK-1': Math.round((meteredUsd + 0.01) * 1e6) / 1e6 });
  t.same(
    spendPolicyFor(SPEND_DEFAULTS, [built({ task: '-' })], Date.parse('2026-12-02T12:00:00Z')).taskSpentUsd,
    {},
    'a response of no task counts for the day only',
  );
});

t.test('grouped totals: the broker names its provider, the agents their CLI', async (t) => {
  const records = [...drained([aReport({ costUsd: 9 })]), built(), built({ task: 'TASK-2', model: 'claude-opus-4-5' })];
  t.same(
    ledgerTotals(records, 'model').map((row) => [row.key, row.sessions, row.records, row.source]),
    [
      ['anthropic claude-opus-4-5', 0, 1, 'broker'],
      ['anthropic claude-sonnet-4-5', 0, 1, 'broker'],
      ['claude claude-sonnet-4-5', 1, 0, 'broker'],
    ],
  );
  t.same(
    ledgerTotals(records, 'task').map((row) => [row.key, row.sessions, row.costUsd, row.agentReported?.costUsd]),
    [
      ['web TASK-1', 1, SONNET_USD, 9],
      // claude-opus-4-5 at $5/$25: 10, 20, 30 at $0.50 and 40 at $6.25 per million.
      ['web TASK-2', 0, 0.000815, undefined],
    ],
  );
});

t.test('the table: unchanged without broker records; metered figures with the agents beside', async (t) => {
  const plain = renderLedger(ledgerReport(['web'], drained([aReport()]), 'run', undefined));
  t.equal(
    plain,
    [
      'RUN        SESSIONS  INPUT  OUTPUT  CACHE READ  CACHE WRITE  COST   WALL   RATE LIMITED',
      'web run-1  1         1      2       3           4            $0.01  2700s  0',
      'total      1         1      2       3           4            $0.01  2700s  0',
      '(repo web; "?" is a value the agent CLI did not report)',
      '',
    ].join('\n'),
  );
  const records = [
    ...drained([aReport({ costUsd: 9 })]),
    built(),
    ...drained([aReport()], { runId: 'run-2' }),
    ...drained(
      [
        aReport({
          costUsd: null,
          inputTokens: null,
          outputTokens: null,
          cacheReadTokens: null,
          cacheWriteTokens: null,
        }),
      ],
      {
        runId: 'run-3',
      },
    ),
    built({ run: 'run-3', inputTokens: 1, outputTokens: 2, cacheReadTokens: 3, cacheWriteTokens: 4, model: 'x-1' }),
    ...drained([aReport({ ...usageRecord(), costUsd: SONNET_USD })], { runId: 'run-4' }),
    built({ run: 'run-4' }),
  ];
  t.equal(
    renderLedger(ledgerReport(['web'], records, 'run', undefined)),
    [
      'RUN        SESSIONS  INPUT  OUTPUT  CACHE READ  CACHE WRITE  COST               AGENT REPORTED                   WALL   RATE LIMITED',
      'web run-1  1         10     20      30          40           $0.0005            10 tokens, $9.00                 2700s  0',
      'web run-2  1         1      2       3           4            $0.01              -                                2700s  0',
      'web run-3  1         1      2       3           4            unknown            ? tokens, unknown                2700s  0',
      'web run-4  1         10     20      30          40           $0.0005            same                             1s     0',
      'total      4         22     44      66          88           $0.01 + 1 unknown  110+? tokens, $9.00 + 1 unknown  8101s  0',
      `(repo web; runs with broker records count the broker's metering, and AGENT REPORTED is what their agent CLIs said; "?" is a value not reported)`,
      '',
    ].join('\n'),
  );
});

t.test('a run record: a metered run has the broker figures, the agents beside; runs prints both', async (t) => {
  const state = tempDir(t, 'run-broker-');
  const run: RunRecord = {
    id: 'run-1',
    repo: 'web',
    trigger: 'watch',
    user: 'agent-web',
    args: ['--drain'],
    status: 'finished',
    startedAt: RUN.startedAt,
    endedAt: RUN.endedAt,
    outcome: 'drained',
  };
  // The broker's records land while the run goes on; one the day before is another run's.
  await appendBrokerUsage(realFs, state, 'web', usageRecord(), SEALED_AT);
  await appendBrokerUsage(realFs, state, 'web', usageRecord({ outputTokens: 120 }), SEALED_AT);
  await appendBrokerUsage(realFs, state, 'web', usageRecord({ run: 'run-0' }), SEALED_AT);
  const summary = (sessions: SessionReport[]) =>
    JSON.stringify({ runId: 'run-1', outcome: 'drained', tasks: [], sessions });
  const meteredUsd = Math.round((2 * SONNET_USD + (100 * 15) / 1e6) * 1e6) / 1e6;
  const killed = await sealRunUsage(realFs, state, run, 'Killed', RUN.sealedAt);
  t.same(killed, {
    usage: {
      sessions: 1,
      costUsd: meteredUsd,
      unknownCost: 0,
      tokens: 300,
      metered: { responses: 2, agentReported: { costUsd: 0, unknownCost: 1, tokens: 0 } },
    },
  });
  const state2 = tempDir(t, 'run-broker-');
  await appendBrokerUsage(realFs, state2, 'web', usageRecord(), SEALED_AT);
  const same = await sealRunUsage(
    realFs,
    state2,
    run,
    summary([aReport({ ...usageRecord(), costUsd: SONNET_USD })]),
    RUN.sealedAt,
  );
  const plain = await sealRunUsage(realFs, state2, { ...run, id: 'run-2' }, summary([aReport()]), RUN.sealedAt);
  t.same(plain, { usage: { sessions: 1, costUsd: 0.01, unknownCost: 0, tokens: 10 } }, 'an unmetered run as before');

  const history = mergeRunHistory(
    [
      { ...run, ...killed },
      { ...run, id: 'run-1b', ...same },
      { ...run, id: 'run-2', ...plain },
    ],
    [],
  );
  t.same(
    history.map((entry) => [entry.id, entry.tokens, entry.cost, entry.source, entry.agentReported]),
    [
      ['run-2', 10, '$0.01', 'agent', null],
      ['run-1b', 100, '$0.0005', 'broker', { tokens: 100, cost: '$0.0005' }],
      ['run-1', 300, '$0.0025', 'broker', { tokens: null, cost: 'unknown' }],
    ].sort((a, b) => (a[0]! < b[0]! ? 1 : -1)),
  );
  const text = renderRunHistory({ target: 'repo "web"', runs: history, errors: [] });
  t.match(
    text,
    /run-1 {2}drained [^\n]*, 300 tokens, cost \$0\.0025 \(metered; agents reported \? tokens, unknown\)\n/,
  );
  t.match(text, /run-1b {2}drained [^\n]*, 100 tokens, cost \$0\.0005 \(metered\)\n/);
  t.match(text, /run-2 {2}drained [^\n]*, 10 tokens, cost \$0\.01\n/);
});

t.test('agent-runner ledger: the table and --json carry the metered and the agent-reported figures', async (t) => {
  const state = tempDir(t, 'ledger-cli-');
  await appendBrokerUsage(realFs, state, 'web', usageRecord(), SEALED_AT);
  await appendLedger(realFs, state, 'web', drained([aReport({ costUsd: 9 })]));
  await appendLedger(realFs, state, 'web', drained([aReport()], { runId: 'run-2' }));
  const env = { AGENT_RUNNER_STATE: state, PATH: process.env.PATH ?? '' };
  const json = await cli(env, ['ledger', 'web', '--by', 'run', '--json']);
  t.equal(json.code, 0, json.err);
  const report = JSON.parse(json.out) as { rows: LedgerTotal[]; total: LedgerTotal };
  t.same(
    report.rows.map((row) => [
      row.key,
      row.source,
      row.costUsd,
      row.metered?.costUsd ?? null,
      row.agentReported?.costUsd ?? null,
    ]),
    [
      ['web run-1', 'broker', SONNET_USD, SONNET_USD, 9],
      ['web run-2', 'agent', 0.01, null, null],
    ],
  );
  t.same(
    [report.total.source, report.total.costUsd, report.total.metered?.records, report.total.agentReported?.costUsd],
    ['both', Math.round((SONNET_USD + 0.01) * 1e6) / 1e6, 1, 9],
  );
  const table = await cli(env, ['ledger', 'web', '--by', 'run']);
  t.equal(table.code, 0, table.err);
  t.equal(
    table.out,
    [
      'RUN        SESSIONS  INPUT  OUTPUT  CACHE READ  CACHE WRITE  COST     AGENT REPORTED    WALL   RATE LIMITED',
      'web run-1  1         10     20      30          40           $0.0005  10 tokens, $9.00  2700s  0',
      'web run-2  1         1      2       3           4            $0.01    -                 2700s  0',
      'total      2         11     22      33          44           $0.01    10 tokens, $9.00  5400s  0',
      `(repo web; runs with broker records count the broker's metering, and AGENT REPORTED is what their agent CLIs said; "?" is a value not reported)`,
      '',
    ].join('\n'),
  );
});

t.test("fleet's TODAY: a run still going has only broker records, and they are today's spend", async (t) => {
  const repo = { name: 'web', spend: { ...SPEND_DEFAULTS, dailyUsd: 0.0004 } } as unknown as RegistryRepo;
  const spend = fleetSpend(repo, [built()], Date.parse('2026-12-02T12:00:00Z'), undefined);
  t.same(spend.today, { usd: SONNET_USD, unknownCost: 0, tokens: 100, sessions: 0, text: '$0.0005' });
  t.equal(
    spend.hold,
    'over its daily budget: $0.00 of $0.00 spent today (UTC); no new task starts until tomorrow',
    'the metered spend holds the repo at its daily budget',
  );
});
