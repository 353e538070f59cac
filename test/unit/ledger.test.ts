// The ledger: root's seal of what a drain reported (every field checked,
// unknown never zero), totals as tables, and the append-only day files on a
// real temp dir.
import t from 'tap';
import { statSync } from 'node:fs';
import * as path from 'node:path';
import {
  appendLedger,
  MAX_SESSIONS_PER_RUN,
  readLedger,
  sealRun,
  sealSession,
  type LedgerRecord,
  type RunToSeal,
} from '../../src/control/ledger/ledger.js';
import {
  describeCost,
  ledgerTotal,
  ledgerTotals,
  MAX_TASKS_IN_POLICY,
  spendPolicyFor,
  spentOn,
  taskSpend,
} from '../../src/control/ledger/totals.js';
import { ledgerReport, renderLedger } from '../../src/control/ledger/report.js';
import { SPEND_DEFAULTS } from '../../src/spend/verdict.js';
import type { SessionReport } from '../../src/drain/types.js';
import { realFs } from '../../src/io/real-ports.js';
import { tempDir } from '../helpers/temp.js';

const RUN: RunToSeal = {
  repo: 'web',
  runId: 'R1',
  startedAt: '2026-11-30T10:00:00.000Z',
  endedAt: '2026-11-30T11:00:00.000Z',
  summary: undefined,
  sealedAt: '2026-11-30T11:00:01.000Z',
};

function aReport(change: Partial<SessionReport> = {}): SessionReport {
  return {
    taskId: 'TASK-1',
    assistant: 'claude',
    role: 'implement',
    model: 'claude-sonnet-4-5',
    effort: 'high',
    startedAt: '2026-11-30T10:05:00.000Z',
    endedAt: '2026-11-30T10:06:00.000Z',
    wallMs: 60000,
    inputTokens: 100,
    outputTokens: 50,
    cacheReadTokens: 1000,
    cacheWriteTokens: 10,
    costUsd: 0.25,
    outcome: 'ok',
    rateLimited: false,
    ...change,
  };
}

const sealed = (change: Partial<SessionReport> = {}) => sealSession(aReport(change), RUN);

t.test(
  "a session is sealed with its role; an unknown role, or none (an older drain), is the task's own work",
  async (t) => {
    t.equal(sealed({ role: 'review' }).role, 'review');
    t.equal(sealed({ role: 'fix' }).role, 'fix');
    t.equal(sealSession({ ...aReport(), role: 'owner' as never }, RUN).role, 'implement');
    const { role: _role, ...older } = aReport();
    t.equal(sealSession(older, RUN).role, 'implement');
  },
);

t.test("a reported session is sealed with root's repo, run and time", async (t) => {
  t.same(sealed(), {
    v: 1,
    repo: 'web',
    run: 'R1',
    task: 'TASK-1',
    assistant: 'claude',
    role: 'implement',
    model: 'claude-sonnet-4-5',
    effort: 'high',
    startedAt: '2026-11-30T10:05:00.000Z',
    endedAt: '2026-11-30T10:06:00.000Z',
    wallMs: 60000,
    inputTokens: 100,
    outputTokens: 50,
    cacheReadTokens: 1000,
    cacheWriteTokens: 10,
    costUsd: 0.25,
    outcome: 'ok',
    rateLimited: false,
    sealedAt: '2026-11-30T11:00:01.000Z',
  });
});

t.test('what a drain (an agent sharing its uid) could forge is checked field by field', async (t) => {
  const rows: [string, Record<string, unknown>, Partial<LedgerRecord>][] = [
    ['negative cost is unknown, not a refund', { costUsd: -50 }, { costUsd: null }],
    ['an absurd cost is unknown', { costUsd: 1e9 }, { costUsd: null }],
    ['a cost as text is unknown', { costUsd: '0' }, { costUsd: null }],
    [
      'NaN-ish tokens are unknown',
      { inputTokens: 'lots', outputTokens: -1, cacheReadTokens: 1e13 },
      { inputTokens: null, outputTokens: null, cacheReadTokens: null },
    ],
    [
      "times outside the run are the run's bounds",
      { startedAt: '2020-01-01T00:00:00Z', endedAt: '2030-01-01T00:00:00Z' },
      { startedAt: RUN.startedAt, endedAt: RUN.endedAt, wallMs: 3600000 },
    ],
    ["a wall time is root's arithmetic, not the report's", { wallMs: 1 }, { wallMs: 60000 }],
    ['a task id that is not one', { taskId: '../../etc' }, { task: null }],
    ['an unknown assistant', { assistant: 'gpt' }, { assistant: 'unknown' }],
    ['control characters in a model name', { model: 'x\u001b[2J' }, { model: null }],
    ['a made-up outcome', { outcome: 'OK; rm -rf' }, { outcome: 'unknown' }],
    ['rate limited only when literally true', { rateLimited: 'yes' }, { rateLimited: false }],
    ['repo and run cannot be named by the report', { repo: 'other', run: 'R9' }, { repo: 'web', run: 'R1' }],
  ];
  for (const [name, change, expected] of rows) {
    const record = sealSession({ ...aReport(), ...change } as Record<string, unknown>, RUN);
    t.same(
      Object.fromEntries(Object.keys(expected).map((key) => [key, record[key as keyof LedgerRecord]])),
      expected,
      name,
    );
  }
});

t.test('a run without a summary, or without sessions in it, is unknown; an empty drain is nothing', async (t) => {
  t.same(
    sealRun(RUN).map((record) => [record.task, record.outcome, record.costUsd, record.inputTokens]),
    [[null, 'no-summary', null, null]],
  );
  t.same(
    sealRun({ ...RUN, summary: { runId: 'R1', outcome: 'drained', tasks: [] } }).map((record) => record.outcome),
    ['no-session-report'],
  );
  t.same(sealRun({ ...RUN, summary: { runId: 'R1', outcome: 'nothing-to-do', tasks: [], sessions: [] } }), []);
  const flood = Array.from({ length: MAX_SESSIONS_PER_RUN + 3 }, () => aReport());
  const records = sealRun({ ...RUN, summary: { runId: 'R1', outcome: 'drained', tasks: [], sessions: flood } });
  t.equal(records.length, MAX_SESSIONS_PER_RUN + 1, 'bounded, with one record saying so');
  t.equal(records.at(-1)!.outcome, 'too-many-sessions');
});

t.test('totals per group: unknown values counted beside the sums, never as zero', async (t) => {
  const records = [
    sealed(),
    sealed({
      taskId: 'TASK-2',
      costUsd: null,
      inputTokens: null,
      outputTokens: null,
      cacheReadTokens: null,
      cacheWriteTokens: null,
      assistant: 'command',
      model: null,
    }),
    sealed({ taskId: 'TASK-1', costUsd: 0.5, rateLimited: true, outcome: 'rate-limited' }),
    sealSession(aReport({ startedAt: '2026-11-30T10:50:00.000Z', endedAt: '2026-11-30T10:59:00.000Z', costUsd: 1 }), {
      ...RUN,
      runId: 'R2',
    }),
  ];
  const byTask = ledgerTotals(records, 'task').map((row) => [
    row.key,
    row.sessions,
    row.costUsd,
    row.unknownCost,
    row.inputTokens,
    row.unknownTokens,
    row.rateLimited,
  ]);
  t.same(byTask, [
    ['web TASK-1', 3, 1.75, 0, 300, 0, 1],
    ['web TASK-2', 1, 0, 1, 0, 1, 0],
  ]);
  t.same(
    ledgerTotals(records, 'model').map((row) => [row.key, row.sessions]),
    [
      ['claude claude-sonnet-4-5', 3],
      ['command (unknown)', 1],
    ],
  );
  t.same(
    ledgerTotals(records, 'run').map((row) => [row.key, row.costUsd]),
    [
      ['web R1', 0.75],
      ['web R2', 1],
    ],
  );
  t.same(
    ledgerTotals(records, 'day').map((row) => row.key),
    ['2026-11-30'],
  );
  const total = ledgerTotal(records);
  t.same([total.sessions, total.costUsd, total.unknownCost], [4, 1.75, 1]);
  t.same(taskSpend(records), { 'TASK-1': 1.75 });
  t.same(spentOn(records, '2026-11-30'), { usd: 1.75, tokens: 3 * 1160 });
  t.same(spentOn(records, '2026-12-01'), { usd: 0, tokens: 0 });
  const rows: [string, { costUsd: number; unknownCost: number; records: number }, string][] = [
    ['all known', { costUsd: 1.5, unknownCost: 0, records: 2 }, '$1.50'],
    ['less than a cent keeps hundredths of cents', { costUsd: 0.0012, unknownCost: 0, records: 1 }, '$0.0012'],
    ['some unknown', { costUsd: 1.5, unknownCost: 2, records: 5 }, '$1.50 + 2 unknown'],
    ['all unknown', { costUsd: 0, unknownCost: 3, records: 3 }, 'unknown'],
    ['nothing at all', { costUsd: 0, unknownCost: 0, records: 0 }, '$0.00'],
  ];
  for (const [name, value, expected] of rows) t.equal(describeCost(value), expected, name);
});

t.test("the spend policy a run gets: today's totals, task totals only under a task budget", async (t) => {
  const records = [sealed({ costUsd: 2 }), sealed({ taskId: 'TASK-2', costUsd: 3 })];
  const now = Date.parse('2026-11-30T12:00:00Z');
  t.same(spendPolicyFor({ ...SPEND_DEFAULTS, dailyUsd: 4 }, records, now), {
    limits: { ...SPEND_DEFAULTS, dailyUsd: 4 },
    day: '2026-11-30',
    spentToday: { usd: 5, tokens: 2320 },
    taskSpentUsd: {},
  });
  t.same(spendPolicyFor({ ...SPEND_DEFAULTS, taskUsd: 4 }, records, now).taskSpentUsd, { 'TASK-1': 2, 'TASK-2': 3 });
});

t.test('day files: appended, root-only, read back per day; a torn line is skipped', async (t) => {
  const state = tempDir(t, 'ledger-');
  const first = sealRun({
    ...RUN,
    summary: { runId: 'R1', outcome: 'drained', tasks: [], sessions: [aReport(), aReport({ taskId: 'TASK-2' })] },
  });
  const late = { ...RUN, runId: 'R2', startedAt: '2026-11-30T23:00:00.000Z', endedAt: '2026-12-01T00:30:00.000Z' };
  const second = sealRun({
    ...late,
    summary: {
      runId: 'R2',
      outcome: 'drained',
      tasks: [],
      sessions: [
        aReport({ startedAt: '2026-11-30T23:10:00.000Z', endedAt: '2026-11-30T23:50:00.000Z' }),
        aReport({ startedAt: '2026-11-30T23:55:00.000Z', endedAt: '2026-12-01T00:10:00.000Z' }),
      ],
    },
  });
  await appendLedger(realFs, state, 'web', first);
  await appendLedger(realFs, state, 'web', second);
  await realFs.appendLine(path.join(state, 'repos/web/ledger/2026-11-30.jsonl'), '{"v":1,"repo":"web","endedAt"');
  t.same(
    (await readLedger(realFs, state, 'web')).map((record) => `${record.run} ${record.endedAt.slice(0, 10)}`),
    ['R1 2026-11-30', 'R1 2026-11-30', 'R2 2026-11-30', 'R2 2026-12-01'],
  );
  t.same(
    (await readLedger(realFs, state, 'web', '2026-12-01')).map((record) => record.run),
    ['R2'],
  );
  t.equal(statSync(path.join(state, 'repos/web/ledger')).mode & 0o777, 0o700, 'the ledger dir is root-only');
  t.equal(statSync(path.join(state, 'repos/web')).mode & 0o777, 0o700);
  const report = ledgerReport(['web'], await readLedger(realFs, state, 'web'), 'day', undefined);
  t.equal(
    renderLedger(report),
    [
      'DAY         SESSIONS  INPUT  OUTPUT  CACHE READ  CACHE WRITE  COST   WALL   RATE LIMITED',
      '2026-11-30  3         300    150     3000        30           $0.75  2520s  0',
      '2026-12-01  1         100    50      1000        10           $0.25  900s   0',
      'total       4         400    200     4000        40           $1.00  3420s  0',
      '(repo web; "?" is a value the agent CLI did not report)',
      '',
    ].join('\n'),
  );
  t.equal(
    renderLedger(
      ledgerReport(
        ['web'],
        [
          sealed({
            costUsd: null,
            inputTokens: null,
            outputTokens: null,
            cacheReadTokens: null,
            cacheWriteTokens: null,
          }),
        ],
        'repo',
        '2026-11-30',
      ),
    ).split('\n')[1],
    'web    1         ?      ?       ?           ?            unknown  60s   0',
  );
});

t.test('a spend policy carries at most the most recently active tasks', async (t) => {
  const records = Array.from({ length: MAX_TASKS_IN_POLICY + 5 }, (_, i) =>
    sealed({ taskId: `TASK-${i + 1}`, costUsd: 0.01 }),
  );
  const policy = spendPolicyFor({ ...SPEND_DEFAULTS, taskUsd: 1 }, records, Date.parse('2026-11-30T12:00:00Z'));
  t.equal(Object.keys(policy.taskSpentUsd).length, MAX_TASKS_IN_POLICY);
  t.equal(policy.taskSpentUsd['TASK-1'], undefined, 'the oldest are left out');
  t.equal(policy.taskSpentUsd[`TASK-${MAX_TASKS_IN_POLICY + 5}`], 0.01);
  t.ok(JSON.stringify(policy).length < 128 * 1024, 'fits one argv string');
});
