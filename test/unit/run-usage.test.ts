// What dispatch does as root around a run, on a real temp dir: the spend
// policy handed to orchestrate from the ledger, the seal of orchestrate's
// summary into the ledger with the run's total for its record, and
// `agent-runner runs` showing each run's total.
import t from 'tap';
import { sealRunUsage, spendForRun } from '../../src/control/dispatch/usage.js';
import { readLedger } from '../../src/control/ledger/ledger.js';
import { orchestrateCommand } from '../../src/control/dispatch/dispatch.js';
import { mergeRunHistory } from '../../src/control/runs/history.js';
import { renderRunHistory } from '../../src/cli/runs.js';
import { spendHold } from '../../src/control/ledger/hold.js';
import type { RunRecord } from '../../src/control/runs/record.js';
import type { RegistryRepo } from '../../src/types.js';
import { SPEND_DEFAULTS } from '../../src/spend/verdict.js';
import { realFs } from '../../src/io/real-ports.js';
import { tempDir } from '../helpers/temp.js';

const run: RunRecord = {
  id: 'R1',
  repo: 'web',
  trigger: 'watch',
  user: 'agent-web',
  args: ['--drain'],
  status: 'finished',
  startedAt: '2026-11-30T10:00:00.000Z',
  endedAt: '2026-11-30T10:30:00.000Z',
  outcome: 'drained',
  tasks: [{ id: 'TASK-1', title: 'T', outcome: 'landed', durationMs: 1 }],
};
const session = (task: string, costUsd: number | null) => ({
  taskId: task,
  assistant: 'claude',
  model: 'm',
  effort: null,
  startedAt: '2026-11-30T10:01:00.000Z',
  endedAt: '2026-11-30T10:02:00.000Z',
  wallMs: 60000,
  inputTokens: 10,
  outputTokens: 5,
  cacheReadTokens: null,
  cacheWriteTokens: null,
  costUsd,
  outcome: 'ok',
  rateLimited: false,
});

t.test('a finished run is sealed into the ledger; its record gets the total', async (t) => {
  const state = tempDir(t, 'run-usage-');
  const stdout = JSON.stringify({
    runId: 'R1',
    outcome: 'drained',
    tasks: [],
    sessions: [session('TASK-1', 0.5), session('TASK-2', null)],
    budgetStop: 'over its daily budget: $6.00 of $5.00 spent today (UTC); no new task starts until tomorrow',
  });
  const usage = await sealRunUsage(realFs, state, run, stdout, '2026-11-30T10:30:01.000Z');
  t.same(usage, {
    usage: { sessions: 2, costUsd: 0.5, unknownCost: 1, tokens: 30 },
    budgetStop: 'over its daily budget: $6.00 of $5.00 spent today (UTC); no new task starts until tomorrow',
  });
  t.same(
    (await readLedger(realFs, state, 'web')).map((record) => [record.run, record.task, record.costUsd]),
    [
      ['R1', 'TASK-1', 0.5],
      ['R1', 'TASK-2', null],
    ],
  );

  const crashed = await sealRunUsage(
    realFs,
    state,
    { ...run, id: 'R2' },
    'Segmentation fault',
    '2026-11-30T10:31:00.000Z',
  );
  t.same(
    crashed,
    { usage: { sessions: 1, costUsd: 0, unknownCost: 1, tokens: 0 } },
    'no summary: one session of unknown cost, not nothing',
  );

  const repo = { name: 'web', spend: { ...SPEND_DEFAULTS, dailyUsd: 5, taskUsd: 1 } } as unknown as RegistryRepo;
  const spend = await spendForRun(realFs, state, repo, Date.parse('2026-11-30T12:00:00Z'));
  t.same(spend, {
    limits: repo.spend,
    day: '2026-11-30',
    spentToday: { usd: 0.5, tokens: 30 },
    taskSpentUsd: { 'TASK-1': 0.5 },
  });
  const command = orchestrateCommand(
    {
      repo: { ...repo, path: '/srv/web', maxParallel: 2, env: {} } as unknown as RegistryRepo,
      state,
      install: { node: '/usr/bin/node', main: '/opt/ar/dist/src/main.js' },
      orchestrateArgs: ['--drain'],
      trigger: 'watch',
      progress: 'json',
      runId: 'R3',
      spend,
    },
    { name: 'agent-web', uid: 1001, gid: 1001, home: '/home/agent-web', shell: '/bin/bash' },
  );
  const at = command.args.indexOf('--spend');
  t.ok(at > 0, 'orchestrate gets --spend');
  t.same(JSON.parse(command.args[at + 1]!), JSON.parse(JSON.stringify(spend)));

  const history = mergeRunHistory(
    [
      { ...run, id: 'R2', usage: crashed.usage },
      { ...run, ...usage },
      { ...run, id: 'R0' },
    ],
    [],
  );
  t.same(
    history.map((entry) => [entry.id, entry.cost, entry.budgetStop]),
    [
      ['R2', 'unknown', null],
      [
        'R1',
        '$0.50 + 1 unknown',
        'over its daily budget: $6.00 of $5.00 spent today (UTC); no new task starts until tomorrow',
      ],
      ['R0', null, null],
    ],
    'each run with its cost as sealed, and a budget stop when there was one',
  );
  const text = renderRunHistory({ target: 'repo "web"', runs: history, errors: [] });
  t.match(
    text,
    /R1 {2}drained {2}by watch, started 2026-11-30T10:00:00[^\n]*, cost \$0\.50 \+ 1 unknown\n {2}over its daily budget/,
    '`runs` prints the cost and the budget stop',
  );
});

t.test(
  'the watcher holds a repo over its daily budget until the next UTC day, and one waiting for a rate limit until the reset',
  async (t) => {
    const state = tempDir(t, 'spend-hold-');
    await sealRunUsage(
      realFs,
      state,
      run,
      JSON.stringify({ runId: 'R1', outcome: 'drained', tasks: [], sessions: [session('TASK-1', 0.5)] }),
      '2026-11-30T10:30:01.000Z',
    );
    const repo = { name: 'web', spend: { ...SPEND_DEFAULTS, dailyUsd: 0.4 } } as unknown as RegistryRepo;
    t.same(await spendHold(realFs, state, repo, Date.parse('2026-11-30T23:59:00Z'), undefined), {
      reason: 'over its daily budget: $0.50 of $0.40 spent today (UTC); no new task starts until tomorrow',
      until: '2026-12-01T00:00:00.000Z',
    });
    t.equal(
      await spendHold(realFs, state, repo, Date.parse('2026-12-01T00:00:01Z'), undefined),
      undefined,
      'the next day the watcher starts runs again',
    );
    t.same(await spendHold(realFs, state, repo, Date.parse('2026-12-01T09:00:00Z'), '2026-12-01T09:45:00.000Z'), {
      reason: 'waiting for rate limit until 09:45 UTC',
      until: '2026-12-01T09:45:00.000Z',
    });
    t.equal(
      await spendHold(
        realFs,
        state,
        { ...repo, spend: SPEND_DEFAULTS } as RegistryRepo,
        Date.parse('2026-11-30T12:00:00Z'),
        undefined,
      ),
      undefined,
      'no budget, no hold',
    );
  },
);
