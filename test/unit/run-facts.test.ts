// One drain's last-run facts, as fleet, runs and the dashboard say them: the
// same run, the same word for how it started, the same outcome, counts and
// cost, from one recorded run (root's record with the usage it sealed).
import t from 'tap';
import { fleetEntry, type FleetInputs } from '../../src/control/fleet/fleet.js';
import { mergeRunHistory } from '../../src/control/runs/history.js';
import type { RunRecord } from '../../src/control/runs/record.js';
import { renderRunHistory } from '../../src/cli/runs.js';
import { detailLines } from '../../tui/view-model.js';

const drain: RunRecord = {
  id: '20260101T000000000000Z-abc123',
  repo: 'web',
  trigger: 'manual',
  user: 'agent-web',
  args: ['--drain'],
  status: 'finished',
  startedAt: '2026-01-01T00:00:00.000Z',
  endedAt: '2026-01-01T00:10:00.000Z',
  exitCode: 0,
  outcome: 'drained',
  tasks: [
    { id: 'TASK-1', title: 'A', outcome: 'landed', durationMs: 1 },
    { id: 'TASK-2', title: 'B', outcome: 'parked', durationMs: 1, reason: 'red gate' },
  ],
  usage: { sessions: 3, costUsd: 0.4213, unknownCost: 1, tokens: 5120 },
};

const inputs: FleetInputs = {
  repo: {
    name: 'web',
    enabled: true,
    user: 'agent-web',
    path: '/srv/web',
    baseBranch: 'main',
    schedule: '* * * * *',
    maxParallel: 2,
  } as FleetInputs['repo'],
  now: Date.parse('2026-01-01T01:00:00.000Z'),
  status: undefined,
  watcherAlive: false,
  runs: [drain],
  runningTasks: [],
  queued: 0,
  runningJobs: 0,
  staging: null,
  board: undefined,
  errors: [],
};

t.test('fleet, runs and the dashboard agree on the last run', async (t) => {
  const fleet = fleetEntry(inputs).lastRun!;
  const [runs] = mergeRunHistory([drain], [], 20);
  t.ok(runs, 'runs lists the drain');
  t.same(
    {
      id: fleet.id,
      trigger: fleet.trigger,
      outcome: fleet.outcome,
      cost: fleet.cost,
      tokens: fleet.tokens,
      landed: fleet.landed,
      parked: fleet.parked,
    },
    {
      id: runs!.id,
      trigger: runs!.trigger,
      outcome: runs!.outcome,
      cost: runs!.cost,
      tokens: runs!.tokens,
      landed: runs!.counts.landed,
      parked: runs!.counts.parked,
    },
    'fleet --json and runs --json: the same facts',
  );
  t.equal(fleet.trigger, 'dispatch', 'a run dispatched by hand is "dispatch" in both');
  t.equal(fleet.cost, '$0.42 + 1 unknown', 'priced as the ledger sealed it');

  const printed = renderRunHistory({ target: 'web', runs: [runs!], errors: [] });
  t.match(printed, `${drain.id}  drained  by dispatch`, 'runs prints the same word');
  t.match(printed, 'cost $0.42 + 1 unknown', 'and the same cost');

  const detail = detailLines(fleetEntry(inputs), 0).find((line) => line.label === 'last run');
  t.equal(
    detail?.text,
    `${drain.id} drained by dispatch, exit 0, ended 2026-01-01T00:10:00.000Z: 1 landed, 1 parked, 0 failed, cost $0.42 + 1 unknown`,
    'the dashboard says the same run, word and cost',
  );
});

t.test('a run whose record has no figures is priced from the ledger in runs', async (t) => {
  const { usage: _usage, ...bare } = drain;
  const ledger = [
    {
      v: 1 as const,
      repo: 'web',
      run: drain.id,
      task: 'TASK-1',
      sealedAt: '2026-01-01T00:10:01.000Z',
      assistant: 'claude' as const,
      role: 'agent' as const,
      model: null,
      inputTokens: 100,
      outputTokens: 20,
      cacheReadTokens: null,
      cacheWriteTokens: null,
      costUsd: 0.25,
      durationMs: 1000,
      rateLimited: false,
    },
  ];
  const [entry] = mergeRunHistory([bare as RunRecord], [], 20, ledger as never);
  t.equal(entry!.cost, '$0.25', 'the ledger prices it');
  t.equal(entry!.tokens, 120);
  const [unpriced] = mergeRunHistory([bare as RunRecord], [], 20, []);
  t.equal(unpriced!.cost, null, 'nothing in the ledger: not known, not $0');
});
