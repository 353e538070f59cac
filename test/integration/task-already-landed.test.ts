// orchestrate --task for a task a drain already landed is met: exit 0,
// "already landed in <commit> by run <id>" (the integrator's landing merge
// on auto/work's first-parent line names both); one that is Done with no
// landing is met too. A parked or Blocked one fails saying so, with its
// reason; one not ready for another reason, or not there, fails as before.
import t from 'tap';
import { drainFixture, landedOn, runCli, runOrchestrate } from '../helpers/drain-fixture.js';
import { git } from '../helpers/temp.js';

interface Summary {
  readonly runId: string;
  readonly outcome: string;
  readonly failure?: string;
  readonly note?: string;
  readonly tasks: readonly { id: string }[];
}

t.test('--task for a task that already landed, is Done, parked, Blocked or not ready', async (t) => {
  const fixture = drainFixture(t, [
    { id: 'TASK-1', title: 'Lands first' },
    { id: 'TASK-2', title: 'Blocked', status: 'Blocked', notes: 'Blocked: needs the API key from ops' },
    {
      id: 'TASK-3',
      title: 'Parked',
      labels: ['parked'],
      notes: 'Parked: gate failed: red (branch auto/TASK-3)',
    },
    { id: 'TASK-4', title: 'Waits', dependencies: ['TASK-9'] },
    { id: 'TASK-5', title: 'Done by hand', status: 'Done' },
  ]);
  const drain = await runOrchestrate(fixture);
  t.equal(drain.code, 0, drain.stderr);
  const drained = JSON.parse(drain.stdout) as Summary;
  t.same(landedOn(fixture.origin, 'auto/work'), ['TASK-1'], 'the drain landed TASK-1');
  const landing = git(
    fixture.origin,
    'log',
    '--first-parent',
    '--merges',
    '--format=%H',
    '--grep=Agent-Runner-Task: TASK-1',
    'auto/work',
  );
  t.match(landing, /^[0-9a-f]{40}$/);

  for (const asked of ['TASK-1', 'task-1']) {
    const again = await runOrchestrate(fixture, ['--task', asked]);
    t.equal(again.code, 0, `--task ${asked} for a landed task: exit 0 (${again.stderr.slice(-300)})`);
    const summary = JSON.parse(again.stdout) as Summary;
    t.equal(summary.outcome, 'nothing-to-do');
    t.equal(summary.note, `TASK-1 already landed in ${landing.slice(0, 12)} by run ${drained.runId}`);
    t.equal(summary.failure, undefined);
    t.notOk(
      again.events.some((event) => event.event === 'task-started'),
      'nothing ran again',
    );
  }
  const human = await runCli(fixture, ['orchestrate', '--workspace', fixture.clone, '--task', 'TASK-1']);
  t.equal(human.code, 0);
  t.match(human.stdout, new RegExp(`nothing-to-do.*\\nTASK-1 already landed in ${landing.slice(0, 12)} by run `));
  t.same(landedOn(fixture.origin, 'auto/work'), ['TASK-1'], 'landed once');

  const cases: readonly [string, number, { note?: string | RegExp; failure?: string | RegExp }][] = [
    ['TASK-5', 0, { note: 'TASK-5 is already Done on auto/work (no landing of the runner names it)' }],
    [
      'TASK-2',
      1,
      {
        failure:
          'TASK-2 is Blocked on auto/work: needs the API key from ops; answer what blocks it, set it To Do and queue it again',
      },
    ],
    [
      'TASK-3',
      1,
      {
        failure:
          'TASK-3 is parked on auto/work: gate failed: red (branch auto/TASK-3); fix what parked it, then `agent-runner unpark TASK-3` and queue it again',
      },
    ],
    [
      'TASK-4',
      1,
      {
        failure:
          'TASK-4 is not ready on auto/work (depends on TASK-9, which does not exist); `agent-runner next` (which reads auto/work) says why',
      },
    ],
    ['TASK-99', 1, { failure: 'no task TASK-99 on auto/work' }],
  ];
  for (const [id, code, expected] of cases) {
    const run = await runOrchestrate(fixture, ['--task', id]);
    t.equal(run.code, code, `--task ${id}: exit ${code}`);
    const summary = JSON.parse(run.stdout) as Summary;
    t.equal(summary.outcome, code === 0 ? 'nothing-to-do' : 'failed', `--task ${id}: ${summary.outcome}`);
    t.match(summary, expected, `--task ${id} says how it stands`);
    t.notOk(run.events.some((event) => event.event === 'task-started'));
  }
});
