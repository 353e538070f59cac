// A --task job queued for a task that a drain lands first, as in a soak:
// `enqueue --task TASK-1` is queued, a drain (dispatch, as the watcher's own
// would) lands TASK-1, then the watcher runs the job. The operator's request
// was met, so the job, its run record and the journal say succeeded with
// "already landed in <commit> by run <id>", exit 0, and nothing lands twice.
// `dispatch --task` for a Blocked task says so, with the reason, exit 1.
import t from 'tap';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import * as path from 'node:path';
import { systemTestMayRun } from '../helpers/system.js';
import { controlFixture, landed, rootGit, runBin, startBin } from '../helpers/control-fixture.js';
import { waitFor } from '../helpers/drain-fixture.js';

t.test('a --task job for a task a drain landed first ends succeeded, naming the landing', async (t) => {
  if (!systemTestMayRun(t, ['setpriv', 'useradd', 'git'])) return;
  const fixture = controlFixture(
    t,
    [
      { id: 'TASK-1', title: 'One', status: 'To Do' },
      { id: 'TASK-2', title: 'Stuck', status: 'Blocked', notes: 'Blocked: needs the vendor SDK licence' },
    ],
    { schedule: '*/2 * * * * *' },
  );
  const queued = await runBin(fixture, 'enqueue', [fixture.name, '--task', 'TASK-1']);
  t.equal(queued.code, 0, queued.stderr);
  const jobId = queued.stdout.trim();

  const drained = await runBin(fixture, 'dispatch', [fixture.name, '--drain', '--no-isolation', '--json']);
  t.equal(drained.code, 0, drained.stderr.slice(-2000));
  const drainRun = (JSON.parse(drained.stdout) as { id: string }).id;
  t.same(landed(fixture.origin, 'auto/work'), ['TASK-1'], 'the drain landed TASK-1 while the job was queued');
  const landing = rootGit(
    fixture.origin,
    'log',
    '--first-parent',
    '--merges',
    '--format=%H',
    '--grep=Agent-Runner-Task: TASK-1',
    'auto/work',
  );
  const said = `TASK-1 already landed in ${landing.slice(0, 12)} by run ${drainRun}`;

  const watch = startBin(fixture, 'watch', ['--no-isolation', fixture.name]);
  t.teardown(() => {
    if (watch.child.exitCode === null) watch.child.kill('SIGKILL');
  });
  const doneFile = path.join(fixture.state, 'repos', fixture.name, 'spool', 'done', `${jobId}.json`);
  await waitFor(() => existsSync(doneFile), 90_000, 'the watcher to run the job');
  watch.child.kill('SIGTERM');
  const stopped = await watch.done;

  const job = JSON.parse(readFileSync(doneFile, 'utf8')) as { result: Record<string, unknown> };
  t.match(job.result, { outcome: 'succeeded', exitCode: 0, detail: said }, 'the job succeeded, naming the landing');
  const runsDir = path.join(fixture.state, 'repos', fixture.name, 'runs');
  const records = readdirSync(runsDir).map(
    (name) => JSON.parse(readFileSync(path.join(runsDir, name), 'utf8')) as Record<string, unknown>,
  );
  const jobRun = records.find((record) => record.jobId === jobId);
  t.match(
    jobRun,
    { status: 'finished', outcome: 'nothing-to-do', exitCode: 0, detail: said, tasks: [] },
    'its run record says so',
  );
  const journal = stopped.stderr
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
  t.match(
    journal.find((entry) => entry.event === 'run-finished' && entry.runId === jobRun?.id),
    { outcome: 'nothing-to-do', exitCode: 0, detail: said },
    'the journal says so',
  );
  t.match(
    journal.find((entry) => entry.event === 'job-finished'),
    { jobId, outcome: 'succeeded', detail: said },
  );
  t.same(landed(fixture.origin, 'auto/work'), ['TASK-1'], 'landed once');

  const blocked = await runBin(fixture, 'dispatch', [fixture.name, '--task', 'TASK-2', '--no-isolation']);
  t.equal(blocked.code, 1, 'dispatch --task for a Blocked task: exit 1');
  t.match(
    blocked.stdout,
    'TASK-2 is Blocked on auto/work: needs the vendor SDK licence; answer what blocks it, set it To Do and queue it again',
  );
});
