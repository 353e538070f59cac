// Every path of a drain, with real git (bare origin + clone), the real CLI
// and the bundled scripted agent: exact outcomes, order, parking, promotion.
import t from 'tap';
import { git } from '../helpers/temp.js';
import { drainFixture, landedOn, runCli, runOrchestrate, taskOn, type FixtureTask } from '../helpers/drain-fixture.js';

const BOARD: FixtureTask[] = [
  {
    id: 'TASK-1',
    title: 'Add alpha',
    priority: 'high',
    description: 'agent: write alpha.txt "alpha"',
    acceptanceCriteria: ['alpha exists'],
  },
  { id: 'TASK-2', title: 'Add beta on alpha', dependencies: ['TASK-1'], description: 'agent: write beta.txt "beta"' },
  {
    id: 'TASK-3',
    title: 'Docs one',
    labels: ['area:docs'],
    description: 'agent: sleep 0.6\nagent: write docs/one.md "one"',
  },
  {
    id: 'TASK-4',
    title: 'Docs two',
    labels: ['area:docs'],
    description: 'agent: sleep 0.6\nagent: write docs/two.md "two"',
  },
  { id: 'TASK-5', title: 'Version two', priority: 'high', description: 'agent: sleep 0.3\nagent: write VERSION "2"' },
  { id: 'TASK-6', title: 'Version three', priority: 'high', description: 'agent: sleep 0.3\nagent: write VERSION "3"' },
  { id: 'TASK-7', title: 'Break the build', priority: 'low', description: 'agent: write BROKEN "compiler exploded"' },
  {
    id: 'TASK-8',
    title: 'Rotate the key',
    priority: 'low',
    description: 'agent: block "needs the production credential"',
  },
  {
    id: 'TASK-9',
    title: 'Drop the database',
    priority: 'high',
    labels: ['risk:needs-human'],
    description: 'agent: write dropped.txt "x"',
  },
  { id: 'TASK-10', title: 'Always crashes', priority: 'low', description: 'agent: exit 3' },
];

type Event = Record<string, unknown>;
const at = (events: readonly Event[], event: string, taskId: string) =>
  events.findIndex((e) => e.event === event && e.taskId === taskId);
const count = (events: readonly Event[], event: string, taskId: string) =>
  events.filter((e) => e.event === event && e.taskId === taskId).length;

t.test('a drain walks every path and lands only what merged and passed the gate', async (t) => {
  const fixture = drainFixture(t, BOARD, { files: { VERSION: '1\n' } });
  const baseBefore = git(fixture.clone, 'rev-parse', 'main');
  const run = await runOrchestrate(fixture);
  t.equal(run.code, 0, `orchestrate exits 0 (stderr: ${run.stderr.slice(-500)})`);
  const summary = JSON.parse(run.stdout) as {
    outcome: string;
    tasks: { id: string; outcome: string; reason?: string }[];
    pushed: boolean;
  };
  t.equal(summary.outcome, 'drained');
  t.equal(summary.pushed, true);
  const outcomes = Object.fromEntries(summary.tasks.map((task) => [task.id, task.outcome]));
  t.same(outcomes, {
    'TASK-1': 'landed',
    'TASK-2': 'landed',
    'TASK-3': 'landed',
    'TASK-4': 'landed',
    'TASK-5': 'landed',
    'TASK-6': 'landed',
    'TASK-7': 'parked',
    'TASK-8': 'blocked',
    'TASK-10': 'parked',
  });

  const events = run.events;
  t.equal(count(events, 'task-started', 'TASK-9'), 0, 'the needs-human task is never started');
  t.ok(
    at(events, 'task-landed', 'TASK-1') < at(events, 'task-started', 'TASK-2'),
    'the dependent starts only after its dependency landed, in the same drain',
  );
  const docs = [
    at(events, 'task-started', 'TASK-3'),
    at(events, 'task-landed', 'TASK-3'),
    at(events, 'task-started', 'TASK-4'),
    at(events, 'task-landed', 'TASK-4'),
  ];
  t.ok(
    docs[1]! < docs[2]! || docs[3]! < docs[0]!,
    `tasks sharing area:docs never overlap (event indexes ${docs.join(',')})`,
  );
  const retried = ['TASK-5', 'TASK-6'].filter((id) => count(events, 'task-retrying', id) === 1);
  t.equal(retried.length, 1, 'exactly one of the conflicting pair is retried');
  t.match(events.find((e) => e.event === 'task-retrying')?.reason, /^merge conflict in VERSION$/);
  t.equal(count(events, 'task-started', 'TASK-10'), 2, 'a failing task is tried maxAttempts (2) times');

  const landed = landedOn(fixture.clone, 'auto/work', baseBefore);
  t.equal(landed.length, 6, 'six merges on auto/work');
  t.same([...landed].sort(), ['TASK-1', 'TASK-2', 'TASK-3', 'TASK-4', 'TASK-5', 'TASK-6']);
  t.ok(landed.indexOf('TASK-1') < landed.indexOf('TASK-2'), 'dependency landed first');
  const lastVersion = landed.indexOf('TASK-5') > landed.indexOf('TASK-6') ? '2' : '3';
  t.equal(git(fixture.clone, 'show', 'auto/work:VERSION'), lastVersion, 'the retried task landed on top of the other');
});

t.test('parking, blocking, base untouched, status, next, promote', async (t) => {
  const fixture = drainFixture(t, BOARD, { files: { VERSION: '1\n' } });
  const baseBefore = git(fixture.clone, 'rev-parse', 'main');
  const run = await runOrchestrate(fixture);
  t.equal(run.code, 0);

  t.equal(git(fixture.clone, 'rev-parse', 'main'), baseBefore, 'the base branch is untouched by a drain');
  t.equal(git(fixture.origin, 'rev-parse', 'main'), baseBefore, "origin's base is untouched by a drain");
  t.equal(
    git(fixture.origin, 'rev-parse', 'auto/work'),
    git(fixture.clone, 'rev-parse', 'auto/work'),
    'auto/work is published',
  );
  t.equal(
    git(fixture.clone, 'ls-tree', '--name-only', 'auto/work', 'BROKEN'),
    '',
    'the red-gate change never reached auto/work',
  );

  const parked = taskOn(fixture.clone, 'auto/work', 'TASK-7', 'Break the build');
  t.match(parked, /labels:\n {2}- parked\n/);
  t.match(
    parked,
    /Parked: gate failed: gates exited 1: gate: BROKEN present: compiler exploded \(branch auto\/TASK-7\)/,
  );
  t.match(
    taskOn(fixture.clone, 'auto/work', 'TASK-10', 'Always crashes'),
    /Parked: failed 2 time\(s\); last: crashed: exit 3/,
  );
  const blocked = taskOn(fixture.clone, 'auto/work', 'TASK-8', 'Rotate the key');
  t.match(blocked, /^status: Blocked$/m);
  t.match(blocked, /needs the production credential/);
  t.equal(
    git(fixture.clone, 'for-each-ref', '--format=%(refname)', 'refs/heads/auto/TASK-7'),
    'refs/heads/auto/TASK-7',
    'a parked task keeps its branch for inspection',
  );
  t.equal(
    git(fixture.clone, 'for-each-ref', '--format=%(refname)', 'refs/heads/auto/TASK-1'),
    '',
    'a landed task branch is deleted',
  );

  const status = await runCli(fixture, ['status', '--workspace', fixture.clone, '--json']);
  t.equal(status.code, 0, status.stderr);
  const parsed = JSON.parse(status.stdout) as {
    ahead: number;
    behind: number;
    landed: { taskId: string }[];
    parked: { id: string; reason: string }[];
    blocked: { id: string }[];
    lastDrain: { outcome: string };
  };
  t.equal(parsed.landed.length, 6);
  t.same(parsed.parked.map((task) => task.id).sort(), ['TASK-10', 'TASK-7']);
  t.match(parsed.parked.find((task) => task.id === 'TASK-7')?.reason, /gate failed/);
  t.same(
    parsed.blocked.map((task) => task.id),
    ['TASK-8'],
  );
  t.equal(parsed.behind, 0);
  t.equal(parsed.lastDrain.outcome, 'drained');

  const again = await runOrchestrate(fixture);
  t.equal(again.code, 0);
  t.equal(
    (JSON.parse(again.stdout) as { outcome: string }).outcome,
    'nothing-to-do',
    'a second drain finds nothing to do',
  );
  t.equal(landedOn(fixture.clone, 'auto/work', baseBefore).length, 6, 'and lands nothing twice');

  const promoted = await runCli(fixture, ['promote', '--workspace', fixture.clone]);
  t.equal(promoted.code, 0, promoted.stderr);
  t.equal(
    git(fixture.clone, 'rev-parse', 'main'),
    git(fixture.clone, 'rev-parse', 'auto/work'),
    'promote fast-forwards the base',
  );
  t.equal(git(fixture.origin, 'rev-parse', 'main'), git(fixture.clone, 'rev-parse', 'auto/work'), 'and pushes it');
  const twice = await runCli(fixture, ['promote', '--workspace', fixture.clone]);
  t.equal(twice.code, 0, 'promote is idempotent');
  t.match(twice.stdout, /already at auto\/work/);
});

t.test('promote refuses when the base moved; discard resets staging', async (t) => {
  const fixture = drainFixture(t, [
    { id: 'TASK-1', title: 'Add alpha', description: 'agent: write alpha.txt "alpha"' },
  ]);
  const baseBefore = git(fixture.clone, 'rev-parse', 'main');
  t.equal((await runOrchestrate(fixture)).code, 0);
  // Someone pushes to the base meanwhile.
  const other = `${fixture.origin}-other`;
  git(fixture.clone, 'clone', '-q', fixture.origin, other);
  git(other, 'commit', '-q', '--allow-empty', '-m', 'operator fix');
  git(other, 'push', '-q', 'origin', 'main');
  const refused = await runCli(fixture, ['promote', '--workspace', fixture.clone]);
  t.equal(refused.code, 1, 'promote refuses a non-fast-forward');
  t.match(refused.stderr, /has moved.*Run orchestrate/s);
  t.equal(git(fixture.clone, 'rev-parse', 'main'), baseBefore, 'and changes nothing');

  const discarded = await runCli(fixture, ['discard', '--workspace', fixture.clone, '--yes']);
  t.equal(discarded.code, 0, discarded.stderr);
  const originMain = git(fixture.origin, 'rev-parse', 'main');
  t.equal(git(fixture.clone, 'rev-parse', 'auto/work'), originMain, 'discard resets auto/work to the base');
  t.equal(git(fixture.origin, 'rev-parse', 'auto/work'), originMain, 'and publishes that');
  const again = await runCli(fixture, ['discard', '--workspace', fixture.clone, '--yes']);
  t.equal(again.code, 0, `discard is idempotent (${again.stderr})`);
});

t.test('reset mode refuses to throw away unpromoted work without --force', async (t) => {
  const fixture = drainFixture(
    t,
    [{ id: 'TASK-1', title: 'Add alpha', description: 'agent: write alpha.txt "alpha"' }],
    { config: { workBranchMode: 'reset' } },
  );
  t.equal((await runOrchestrate(fixture)).code, 0);
  const firstLanding = git(fixture.clone, 'rev-parse', 'auto/work');
  const refused = await runOrchestrate(fixture);
  t.equal(refused.code, 1);
  t.match(refused.stderr, /would throw them away.*--force/s);
  const forced = await runOrchestrate(fixture, ['--force']);
  t.equal(forced.code, 0, forced.stderr);
  t.equal(
    git(fixture.clone, 'rev-parse', 'auto/work^1'),
    git(fixture.clone, 'rev-parse', 'origin/main'),
    'reset recreated auto/work from the base',
  );
  t.same(
    landedOn(fixture.clone, 'auto/work', 'origin/main'),
    ['TASK-1'],
    'and the task, still To Do on the base, landed again once',
  );
  t.not(git(fixture.clone, 'rev-parse', 'auto/work'), firstLanding, 'the earlier landing was thrown away');
});
