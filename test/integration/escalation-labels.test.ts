// A task whose model:/effort: labels its assistant cannot take (an empty
// value, shell metacharacters, an unknown effort, a model id a CLI flag must
// not carry, two labels asking for different things) is not ready: `next`
// names the label, the accepted values and the fix (human and --json); the
// drain never starts it, charges it no attempt and makes it no worktree or
// branch, however often it runs; `--task` with it fails saying why; and the
// board snapshot root's watcher and fleet read (git objects) agrees, by the
// assistant the checkout's config names.
import t from 'tap';
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { drainFixture, landedOn, PROJECT_ROOT, runCli, runOrchestrate } from '../helpers/drain-fixture.js';
import { git } from '../helpers/temp.js';
import { BoardSnapshot } from '../../src/control/repo-view/board.js';
import { realProcess } from '../../src/io/real-ports.js';
import { workspaceStateDir } from '../../src/paths.js';

const BACKLOG = path.join(PROJECT_ROOT, 'node_modules', '.bin', 'backlog');

/** [id, labels, what next says of it] for the command assistant (efforts minimal, low, medium, high, xhigh, max). */
const BAD: readonly [string, string[], RegExp][] = [
  [
    'TASK-2',
    ['effort:'],
    /^label "effort:" has no effort; command accepts minimal, low, medium, high, xhigh, max; fix: write one of them/,
  ],
  [
    'TASK-3',
    ['effort:turbo'],
    /^label "effort:turbo" "turbo" is not an effort command accepts \(minimal, .*, max\); fix:/,
  ],
  ['TASK-4', ['model:'], /^label "model:" has no model id; fix: write the model id/],
  [
    'TASK-5',
    ['model:--dangerously-skip-permissions'],
    /^label "model:--dangerously-skip-permissions" "--dangerously-skip-permissions" is not a model id \(a letter or digit, then .*\); fix:/,
  ],
  ['TASK-6', ['model:$(touch /tmp/x)'], /^label "model:\$\(touch \/tmp\/x\)" "\$\(touch \/tmp\/x\)" is not a model id/],
  ['TASK-7', ['model:opus 4'], /"opus 4" is not a model id/],
  ['TASK-8', ['effort:high', 'effort:low'], /^label "effort:high, effort:low" ask for different efforts \(high, low\)/],
  [
    'TASK-9',
    ['model:opus', 'model:sonnet'],
    /ask for different models \(opus, sonnet\).*; fix: keep one model: label$/,
  ],
];

t.test('next and the drain over every kind of bad model and effort label', async (t) => {
  const fixture = drainFixture(t, [
    { id: 'TASK-1', title: 'Good', labels: ['effort:high', 'model:claude-sonnet-4-5'] },
    ...BAD.map(([id, labels]) => ({ id, title: `Bad ${id}`, labels })),
    // Control: the same effort twice is one ask.
    { id: 'TASK-10', title: 'Same twice', labels: ['effort:high', 'Effort: high'] },
  ]);
  // The issue's own example, filed with the real Backlog.md CLI.
  execFileSync(BACKLOG, ['task', 'create', 'From the CLI', '-l', 'effort:; touch /tmp/x', '--plain'], {
    cwd: fixture.clone,
    env: fixture.env,
    stdio: 'pipe',
  });
  git(fixture.clone, 'add', '-A');
  git(fixture.clone, 'commit', '-q', '-m', 'a task filed with the CLI');
  git(fixture.clone, 'push', '-q', 'origin', 'main');
  const bad = new Map<string, RegExp>([
    ...BAD.map(([id, , says]) => [id, says] as const),
    ['TASK-11', /^label "effort:; touch \/tmp\/x" "; touch \/tmp\/x" is not an effort command accepts/],
  ]);

  const listed = await runCli(fixture, ['next', '--workspace', fixture.clone, '--json']);
  t.equal(listed.code, 0, listed.stderr);
  const json = JSON.parse(listed.stdout) as {
    ready: { id: string }[];
    notReady: { id: string; reasons: string[] }[];
  };
  t.same(
    json.ready.map((task) => task.id),
    ['TASK-1', 'TASK-10'],
    'only the tasks whose labels the assistant takes are ready',
  );
  for (const [id, says] of bad) {
    const entry = json.notReady.find((candidate) => candidate.id === id);
    t.equal(entry?.reasons.length, 1, `${id}: one reason`);
    t.match(entry?.reasons[0], says, `${id}: names the label, what is wrong and the fix`);
  }
  const human = await runCli(fixture, ['next', '--workspace', fixture.clone]);
  t.match(human.stdout, /Ready \(2\):/);
  t.match(human.stdout, /TASK-11 +From the CLI +label "effort:; touch \/tmp\/x" .*; fix: /);

  const drained = await runOrchestrate(fixture);
  t.equal(drained.code, 0, drained.stderr);
  const started = drained.events.filter((event) => event.event === 'task-started').map((event) => event.taskId);
  t.same([...started].sort(), ['TASK-1', 'TASK-10'], 'the drain started only the good tasks');
  t.same(landedOn(fixture.origin, 'auto/work').sort(), ['TASK-1', 'TASK-10']);
  const summary = JSON.parse(drained.stdout) as { outcome: string; tasks: { id: string }[] };
  t.equal(summary.outcome, 'drained');
  t.same(summary.tasks.map((task) => task.id).sort(), ['TASK-1', 'TASK-10']);

  const again = await runOrchestrate(fixture);
  t.equal(again.code, 0, again.stderr);
  t.equal((JSON.parse(again.stdout) as { outcome: string }).outcome, 'nothing-to-do', 'a second drain starts nothing');
  t.notOk(
    again.events.some((event) => event.event === 'task-started'),
    'nothing started the second time either',
  );

  const workspaceState = workspaceStateDir(fixture.state, fixture.clone);
  const attempts = path.join(workspaceState, 'attempts.json');
  const charged = existsSync(attempts) ? Object.keys(JSON.parse(readFileSync(attempts, 'utf8')) as object) : [];
  t.same(
    charged.filter((id) => bad.has(id)),
    [],
    'no attempt charged to a task with a bad label',
  );
  const transcripts = readdirSync(path.join(workspaceState, 'transcripts'));
  t.same(
    transcripts.filter((name) => [...bad.keys()].some((id) => name.endsWith(`-${id}.jsonl`))),
    [],
    'no agent ran for them',
  );
  t.equal(git(fixture.clone, 'branch', '--list', 'auto/TASK-*'), '', 'no task branch left');
  const worktrees = path.join(path.dirname(fixture.clone), `.${path.basename(fixture.clone)}.worktrees`);
  t.same(
    existsSync(worktrees) ? readdirSync(worktrees).filter((name) => bad.has(name)) : [],
    [],
    'no worktree for them',
  );
  t.equal(
    git(fixture.clone, 'log', '--all', '--format=%s', '--grep=TASK-3').split('\n').filter(Boolean).length,
    0,
    'nothing was ever committed for them (no park, no block)',
  );

  const named = await runOrchestrate(fixture, ['--task', 'TASK-3']);
  t.equal(named.code, 1, '--task with a bad label fails');
  const failure = (JSON.parse(named.stdout) as { failure: string }).failure;
  t.match(failure, /TASK-3 is not ready on auto\/work/);
  t.match(failure, /label "effort:turbo" "turbo" is not an effort command accepts/, 'and says why');
  t.notOk(named.events.some((event) => event.event === 'task-started'));
});

t.test('which efforts count is the assistant`s: next and the snapshot read the same config', async (t) => {
  const fixture = drainFixture(
    t,
    [
      { id: 'TASK-1', title: 'Max', labels: ['effort:max'] },
      { id: 'TASK-2', title: 'Minimal', labels: ['effort:minimal'] },
    ],
    { config: { assistant: 'codex', command: undefined } },
  );
  const ready = async () => {
    const listed = await runCli(fixture, ['next', '--workspace', fixture.clone, '--json']);
    t.equal(listed.code, 0, listed.stderr);
    return (JSON.parse(listed.stdout) as { ready: { id: string }[] }).ready.map((task) => task.id);
  };
  const snapshot = new BoardSnapshot(realProcess, fixture.clone, 'main');
  t.same(await ready(), ['TASK-2'], 'codex takes minimal, not max');
  t.same((await snapshot.summary()).ready, ['TASK-2'], "root's snapshot (the watcher, fleet) says the same");
  const config = path.join(fixture.clone, '.agent/config.json');
  writeFileSync(config, `${JSON.stringify({ assistant: 'claude' })}\n`);
  git(fixture.clone, 'commit', '-q', '-am', 'claude');
  t.same(await ready(), ['TASK-1'], 'claude takes max, not minimal');
  t.same((await snapshot.summary()).ready, ['TASK-1'], 'the snapshot follows the checkout`s config');
  writeFileSync(config, '{"assistant": "nobody"}\n');
  git(fixture.clone, 'commit', '-q', '-am', 'broken');
  t.same(await ready(), ['TASK-1', 'TASK-2'], 'a broken config: any assistant`s efforts count');
  t.same((await snapshot.summary()).ready, ['TASK-1', 'TASK-2']);
});
