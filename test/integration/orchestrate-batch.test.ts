// Batched integration end to end: the real CLI, real git, the scripted
// agent, and a real gate script that is red exactly when the tree holds a
// marker file. Tasks that finish while a gate runs are gated together; red
// batches are bisected; only the tasks that wrote a marker are parked, every
// other task lands with its own merge commit, and no marker ever reaches
// auto/work.
import t from 'tap';
import { git } from '../helpers/temp.js';
import { drainFixture, landedOn, runOrchestrate, taskOn, type FixtureTask } from '../helpers/drain-fixture.js';

/** Red when any marker-* file is in the tree; slow enough that finished tasks queue behind it. */
const MARKER_GATE =
  '#!/bin/sh\nsleep 1\nfor f in marker-*; do if [ -e "$f" ]; then echo "gate: found $f"; exit 1; fi; done\necho "gate: ok"\n';

const BOARD: FixtureTask[] = Array.from({ length: 8 }, (_, i) => {
  const n = i + 1;
  const marker = n === 3 || n === 6 ? `\nagent: write marker-${n} "red ${n}"` : '';
  return { id: `TASK-${n}`, title: `Task ${n}`, description: `agent: write file-${n}.txt "${n}"${marker}` };
});
const CONFLICTING: FixtureTask[] = [
  { id: 'TASK-9', title: 'Version two', description: 'agent: write VERSION "2"' },
  { id: 'TASK-10', title: 'Version three', description: 'agent: write VERSION "3"' },
];

interface Summary {
  outcome: string;
  tasks: { id: string; outcome: string; reason?: string }[];
  gateRuns: number;
  gates: { tasks: string[]; ok: boolean }[];
}

t.test('batched: tasks gated together, red ones found by bisection and parked, the rest land once each', async (t) => {
  const fixture = drainFixture(t, [...BOARD, ...CONFLICTING], {
    gates: MARKER_GATE,
    files: { VERSION: '1\n' },
    config: { maxParallel: 10 },
  });
  const base = git(fixture.clone, 'rev-parse', 'main');
  const run = await runOrchestrate(fixture);
  t.equal(run.code, 0, `orchestrate exits 0 (stderr: ${run.stderr.slice(-800)})`);
  const summary = JSON.parse(run.stdout) as Summary;
  const outcomes = Object.fromEntries(summary.tasks.map((task) => [task.id, task.outcome]));
  t.same(outcomes, {
    'TASK-1': 'landed',
    'TASK-2': 'landed',
    'TASK-3': 'parked',
    'TASK-4': 'landed',
    'TASK-5': 'landed',
    'TASK-6': 'parked',
    'TASK-7': 'landed',
    'TASK-8': 'landed',
    'TASK-9': 'landed',
    'TASK-10': 'landed',
  });
  for (const n of [3, 6]) {
    t.match(
      summary.tasks.find((task) => task.id === `TASK-${n}`)?.reason,
      new RegExp(`^gate failed: gates exited 1: gate: found marker-${n}$`),
      `TASK-${n} is parked with its own gate output`,
    );
    t.match(taskOn(fixture.clone, 'auto/work', `TASK-${n}`, `Task ${n}`), /labels:\n {2}- parked\n/);
  }
  t.equal(
    git(fixture.clone, 'log', '--format=%H', 'auto/work', '--', 'marker-3', 'marker-6'),
    '',
    'no commit on auto/work ever held a marker',
  );

  const landed = landedOn(fixture.clone, 'auto/work', base);
  t.same(
    [...landed].sort(),
    ['TASK-1', 'TASK-10', 'TASK-2', 'TASK-4', 'TASK-5', 'TASK-7', 'TASK-8', 'TASK-9'],
    'each landed task has its own merge commit, once',
  );
  const trailers = git(
    fixture.clone,
    'log',
    '--merges',
    '--format=%(trailers:key=Agent-Runner-Gate,valueonly)',
    `${base}..auto/work`,
  );
  t.match(trailers, /passed \(\.agent\/gates\.sh, in a batch of \d+\)/, 'a batched landing says how it was gated');

  const gateEvents = run.events.filter((event) => event.event === 'gate-run');
  t.equal(summary.gateRuns, gateEvents.length, 'the summary counts every gate run the events reported');
  t.same(
    summary.gates.map((gate) => gate.tasks),
    gateEvents.map((event) => event.tasks),
    'and says which tasks were gated together',
  );
  t.ok(
    summary.gates.some((gate) => gate.tasks.length > 1),
    `some gate run judged several tasks together (${JSON.stringify(summary.gates)})`,
  );
  t.ok(
    summary.gates
      .filter((gate) => !gate.ok)
      .every((gate) => gate.tasks.some((task) => task === 'TASK-3' || task === 'TASK-6')),
    'every red gate run held a marker task',
  );
  t.equal(
    run.events.filter((event) => event.event === 'task-retrying').length,
    1,
    'the conflicting pair: one is run again, as without batching',
  );
  t.match(run.events.find((event) => event.event === 'task-retrying')?.reason, /^merge conflict in VERSION$/);
  t.equal(git(fixture.clone, 'status', '--porcelain'), '', 'the checkout is untouched');
  const staging = git(fixture.clone, 'worktree', 'list', '--porcelain');
  t.match(staging, /branch refs\/heads\/auto\/work/, 'the staging worktree is back on auto/work, not detached');
});

t.test('maxBatch 1: every task is gated alone, as the one-at-a-time integrator did', async (t) => {
  const fixture = drainFixture(t, BOARD.slice(0, 4), { gates: MARKER_GATE, config: { maxParallel: 4, maxBatch: 1 } });
  const run = await runOrchestrate(fixture);
  t.equal(run.code, 0, run.stderr.slice(-800));
  const summary = JSON.parse(run.stdout) as Summary;
  t.same(
    summary.gates.map((gate) => gate.tasks.length),
    [1, 1, 1, 1],
    'four gate runs of one task each',
  );
  t.same(
    summary.tasks.filter((task) => task.outcome === 'parked').map((task) => task.id),
    ['TASK-3'],
  );
  const trailers = git(
    fixture.clone,
    'log',
    '--merges',
    '--format=%(trailers:key=Agent-Runner-Gate,valueonly)',
    'main..auto/work',
  );
  t.notMatch(trailers, /in a batch/, 'no landing was batched');
});
