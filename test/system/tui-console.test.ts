// The operator's console in a real terminal, as root, on a fleet of two real
// registered repos (real users, real git, a real drain): tmux runs
// `agent-runner tui` in an 80x24 pane and the test drives it with keys and
// reads it with capture-pane. The flows: select a repo, dispatch it and
// follow the running task's transcript while the agent writes to it, open
// a parked task's reason, un-park it, enqueue a prompt through the form,
// promote through the confirmation and read the result, pause and resume,
// filter, help, quit.
import t from 'tap';
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { controlFixture, rootGit, BIN, type ControlFixture } from '../helpers/control-fixture.js';
import { systemTestMayRun } from '../helpers/system.js';
import { tmuxMayRun, tmuxServer } from '../helpers/tmux.js';
import { PROJECT_ROOT } from '../helpers/drain-fixture.js';

/** The probe agent, but chatty: a numbered line every 0.2 s while `hold` exists, then its task is Done. */
function chattyAgent(probeOut: string): string {
  return `#!/bin/sh
set -e
PROBE_OUT='${probeOut}'
n=0
while [ -e "$PROBE_OUT/hold" ]; do n=$((n+1)); echo "working on $AGENT_TASK_ID: tick $n"; sleep 0.2; done
file=$(grep -l "^id: $AGENT_TASK_ID$" backlog/tasks/*.md)
sed -i 's/^status: To Do$/status: Done/' "$file"
echo "$AGENT_TASK_ID" >> done.txt
git add -A
git -c user.name=probe -c user.email=probe@example.invalid commit -q -m "$AGENT_TASK_ID done"
echo "finished $AGENT_TASK_ID"
`;
}

const PARK_REASON = 'merge conflict in src/app.ts';

/** TUI_CAPTURE_DIR=dir keeps each screen as a text file (docs/tui.md shows them). */
function capture(name: string, screen: string): void {
  const dir = process.env.TUI_CAPTURE_DIR;
  if (dir) writeFileSync(path.join(dir, `${name}.txt`), screen);
}

t.test('the console: dispatch and follow, a parked task, un-park, enqueue, promote, pause, filter', async (t) => {
  if (!systemTestMayRun(t, ['setpriv', 'useradd', 'git']) || !tmuxMayRun(t)) return;
  const a: ControlFixture = controlFixture(t, [
    { id: 'TASK-1', title: 'Land me', status: 'To Do' },
    {
      id: 'TASK-2',
      title: 'Stuck one',
      status: 'To Do',
      labels: ['parked'],
      notes: `Parked: ${PARK_REASON} (branch auto/TASK-2)`,
    },
  ]);
  const b = controlFixture(t, [{ id: 'TASK-1', title: 'Other repo task', status: 'To Do' }]);
  writeFileSync(path.join(path.dirname(a.probeOut), 'probe-agent.sh'), chattyAgent(a.probeOut), { mode: 0o755 });
  // One registry and one state dir for the two repos.
  writeFileSync(a.registry, `${readFileSync(a.registry, 'utf8')}\n${readFileSync(b.registry, 'utf8')}`);

  const tmux = tmuxServer(t, 'console');
  tmux.run(
    'new-session',
    '-d',
    '-x',
    '80',
    '-y',
    '24',
    '-s',
    'tui',
    '-c',
    PROJECT_ROOT,
    '-e',
    `AGENT_RUNNER_CONFIG=${a.registry}`,
    '-e',
    `AGENT_RUNNER_STATE=${a.state}`,
    '-e',
    'PATH=/usr/local/bin:/usr/bin:/bin',
    // No egress lock on a test host: the dashboard's dispatch runs without it, on purpose.
    '-e',
    'AGENT_RUNNER_ISOLATION=off',
    'sh',
    '-c',
    '"$0" "$1" tui --interval 1; echo "dashboard exited with $?"; exec cat',
    process.execPath,
    path.join(BIN, 'agent-runner'),
  );
  const keys = (...names: string[]) => tmux.run('send-keys', '-t', 'tui', ...names);
  const row = (name: string) => new RegExp(`^│${name} +yes +absent`, 'm');

  // Both repos, box lines right at 80x24; select the second and back.
  const first = await tmux.waitFor('both repos', (s) => row(a.name).test(s) && row(b.name).test(s));
  capture('fleet', first);
  t.match(first, /^┌─ repos ─+┐$/m, 'Unicode box lines at 80 columns');
  t.equal(first.split('\n')[0]!.length <= 80, true, 'nothing wider than the pane');
  keys('Down');
  await tmux.waitFor('the second repo selected', (s) => new RegExp(`^┌─ ${b.name} ─+┐$`, 'm').test(s));
  keys('Up');
  await tmux.waitFor('the first repo again', (s) => new RegExp(`^┌─ ${a.name} ─+┐$`, 'm').test(s));

  // Dispatch, and follow the running task's transcript while the agent writes to it.
  writeFileSync(path.join(a.probeOut, 'hold'), '');
  keys('d');
  await tmux.waitFor('the spinner of the dispatch', (s) => new RegExp(`[|/\\\\-] dispatch ${a.name}\\.\\.\\.`).test(s));
  await tmux.waitFor('the run in the table', (s) => new RegExp(`^│${a.name} .*TASK-1`, 'm').test(s), 30_000);
  keys('Enter');
  await tmux.waitFor('the repo screen', (s) => /\[1 summary\]/.test(s));
  keys('4');
  const log = await tmux.waitFor('the transcript followed', (s) => /working on TASK-1: tick \d+/.test(s), 30_000);
  const tick = (screen: string) => Math.max(...[...screen.matchAll(/tick (\d+)/g)].map((m) => Number(m[1])));
  const seen = tick(log);
  capture('log', log);
  await tmux.waitFor('new lines as the agent writes them', (s) => tick(s) >= seen + 3);
  rmSync(path.join(a.probeOut, 'hold'));
  await tmux.waitFor(
    'the dispatch result in the footer',
    (s) => new RegExp(`dispatch ${a.name}: drained, 1 landed`).test(s),
    60_000,
  );
  // The log follows on its own refresh: the last lines arrive within a read or two of the result.
  const ended = await tmux.waitFor('the last lines in the log', (s) => /finished TASK-1/.test(s), 10_000);
  t.match(ended, /finished TASK-1/, 'the log showed the last lines');
  keys('1');
  capture('summary', await tmux.waitFor('the summary tab', (s) => /\[1 summary\]/.test(s) && /last run/.test(s)));
  keys('2');
  capture('runs', await tmux.waitFor('the runs tab', (s) => /drained +1\/0\/0/.test(s), 20_000));

  // A parked task's reason, then un-park it.
  keys('3');
  const tasks = await tmux.waitFor('the parked task', (s) => /> TASK-2 +parked/.test(s), 30_000);
  t.match(tasks, /merge conflict in src\/app\.ts/);
  capture('tasks', tasks);
  keys('Enter');
  const detail = await tmux.waitFor('the task overlay', (s) => /attempts +none on record/.test(s));
  t.match(detail, /reason +merge conflict in src\/app\.ts/, "the task's reason");
  capture('task', detail);
  keys('Escape');
  await tmux.waitFor('the overlay closed', (s) => !/attempts +none on record/.test(s));
  keys('u');
  await tmux.waitFor('the un-park result', (s) => /TASK-2 un-parked on auto\/work/.test(s), 30_000);
  await tmux.waitFor('the tasks tab without it', (s) => /no running, parked or blocked tasks/.test(s), 30_000);

  // Enqueue a prompt through the form.
  keys('e');
  await tmux.waitFor('the form', (s) => new RegExp(`enqueue on ${a.name}`).test(s));
  keys('-l', 'Write a haiku about queues');
  capture('enqueue', await tmux.waitFor('the typed text', (s) => /> Write a haiku about queues_/.test(s)));
  keys('Enter');
  await tmux.waitFor('the enqueue result', (s) => /queued prompt/.test(s), 20_000);
  const queue = path.join(a.state, 'repos', a.name, 'spool', 'queue');
  const jobs = readdirSync(queue);
  t.equal(jobs.length, 1, 'one job in the queue');
  t.match(readFileSync(path.join(queue, jobs[0]!), 'utf8'), /Write a haiku about queues/);

  // Promote through the confirmation, which lists exactly what lands.
  const staging = rootGit(a.clone, 'rev-parse', 'refs/heads/auto/work');
  keys('p');
  const confirm = await tmux.waitFor('the promote confirmation', (s) => /promote .*\? y \/ n/.test(s), 30_000);
  capture('promote', confirm);
  t.match(confirm, /auto\/work is \d+ commit\(s\) ahead and 0 behind main/, 'ahead and behind');
  t.match(confirm, new RegExp(`TASK-1 +[0-9a-f]{10} +`), 'the landing task and its commit');
  t.notMatch(confirm, /TASK-2 +[0-9a-f]{10}/, 'nothing that does not land');
  keys('y');
  capture(
    'promoted',
    await tmux.waitFor(
      'the promote result',
      (s) => new RegExp(`promote ${a.name}: main fast-forwarded`).test(s),
      30_000,
    ),
  );
  t.equal(rootGit(a.origin, 'rev-parse', 'refs/heads/main'), staging, 'origin main is where auto/work was');

  // Pause and resume from the fleet screen.
  keys('Escape');
  await tmux.waitFor('the fleet again', (s) => /^┌─ repos ─+┐$/m.test(s));
  keys('w');
  capture(
    'paused',
    await tmux.waitFor('paused in the table', (s) => new RegExp(`^│${a.name} +paused`, 'm').test(s), 20_000),
  );
  t.ok(existsSync(path.join(a.state, 'repos', a.name, 'paused.json')), 'the root-owned flag is written');
  keys('w');
  await tmux.waitFor('resumed', (s) => new RegExp(`^│${a.name} +yes`, 'm').test(s), 20_000);
  t.notOk(existsSync(path.join(a.state, 'repos', a.name, 'paused.json')), 'the flag is gone');

  // Filter by name, help, quit.
  keys('/');
  keys('-l', b.name.slice(-3));
  const filtered = await tmux.waitFor(
    'only the matching repo',
    (s) => row(b.name).test(s) && !new RegExp(`^│${a.name} `, 'm').test(s),
  );
  t.match(filtered, /1 shown \(filter/);
  capture('filter', filtered);
  keys('Escape');
  await tmux.waitFor('both repos again', (s) => row(b.name).test(s) && new RegExp(`^│${a.name} `, 'm').test(s));
  keys('?');
  capture(
    'help',
    await tmux.waitFor('the help', (s) => /keys \(any key closes\)/.test(s) && /dispatch the repo now/.test(s)),
  );
  keys('q');
  await tmux.waitFor('the help closed', (s) => !/keys \(any key closes\)/.test(s));
  keys('q');
  const after = await tmux.waitFor(
    'the shell after the dashboard',
    (s) => /^dashboard exited with \d+$/m.test(s),
    10_000,
  );
  t.match(after, /^dashboard exited with 0$/m);
});
