// kill -9 of the watcher mid-run, then start it again: the interrupted run is
// recorded, no orphan agent or orchestrate process remains, the queued job is
// neither lost nor run twice at once, and the next run drains normally. A job
// whose task had already landed when the watcher died is done, not run again.
import t from 'tap';
import { readFileSync, readdirSync, rmSync, writeFileSync, existsSync, chmodSync } from 'node:fs';
import * as path from 'node:path';
import { systemTestMayRun } from '../helpers/system.js';
import { alive, controlFixture, landed, runBin, startBin } from '../helpers/control-fixture.js';
import { running } from '../helpers/user-processes.js';
import { waitFor } from '../helpers/drain-fixture.js';
import { pidFrom } from '../helpers/kill.js';

function spoolFolders(state: string, repo: string): Record<string, string[]> {
  const root = path.join(state, 'repos', repo, 'spool');
  return Object.fromEntries(
    ['queue', 'running', 'done', 'failed'].map((where) => [where, readdirSync(path.join(root, where)).sort()]),
  );
}

/**
 * The job is in done/ and gone from running/: the finished file itself, not the dot-named temp file its atomic write
 * makes first.
 */
function settled(fixture: { state: string; name: string }, jobId: string): boolean {
  const folders = spoolFolders(fixture.state, fixture.name);
  return folders.done!.includes(`${jobId}.json`) && folders.running!.length === 0;
}

function runRecords(state: string, repo: string): Record<string, unknown>[] {
  const dir = path.join(state, 'repos', repo, 'runs');
  return readdirSync(dir)
    .sort()
    .map((name) => JSON.parse(readFileSync(path.join(dir, name), 'utf8')) as Record<string, unknown>);
}

t.test('kill -9 of watch mid-run, then restart', async (t) => {
  if (!systemTestMayRun(t, ['setpriv', 'useradd', 'git'])) return;
  const fixture = controlFixture(
    t,
    [
      { id: 'TASK-1', title: 'One', status: 'To Do' },
      { id: 'TASK-2', title: 'Two', status: 'To Do' },
    ],
    { schedule: '*/2 * * * * *' },
  );
  const queued = await runBin(fixture, 'enqueue', [fixture.name, '--task', 'TASK-1']);
  t.equal(queued.code, 0, queued.stderr);
  const jobId = queued.stdout.trim();
  t.match(jobId, /^\d{8}T\d{6,12}Z-[0-9a-f]+$/);
  writeFileSync(path.join(fixture.probeOut, 'freeze'), '');

  const first = startBin(fixture, 'watch', ['--no-isolation', fixture.name]);
  if (process.env.DEBUG_CONTROL) first.child.stderr!.on('data', (chunk) => process.stderr.write(chunk));
  t.teardown(() => {
    if (first.child.exitCode === null) first.child.kill('SIGKILL');
  });
  const agentPidFile = path.join(fixture.probeOut, 'pid-TASK-1');
  const agentPid = await pidFrom(agentPidFile, 30_000, 'the agent to start');
  const [interrupted] = runRecords(fixture.state, fixture.name);
  const orchestratePid = (interrupted!.process as { pid: number }).pid;
  if (process.env.DEBUG_CONTROL) process.stderr.write(`agent ${agentPid} orchestrate ${orchestratePid}\n`);
  t.same(
    spoolFolders(fixture.state, fixture.name),
    { queue: [], running: [`${jobId}.json`], done: [], failed: [] },
    'the job is claimed',
  );

  first.child.kill('SIGKILL');
  await first.done;
  // orchestrate got SIGTERM (parent-death signal) and is winding down within its grace; the agent still sleeps.
  t.ok(alive(agentPid), 'the agent outlives the killed watcher for now (its own process group)');
  rmSync(path.join(fixture.probeOut, 'freeze'));
  rmSync(agentPidFile);

  const second = startBin(fixture, 'watch', ['--no-isolation', fixture.name]);
  if (process.env.DEBUG_CONTROL) second.child.stderr!.on('data', (chunk) => process.stderr.write(chunk));
  t.teardown(() => {
    if (second.child.exitCode === null) second.child.kill('SIGKILL');
  });
  await waitFor(() => settled(fixture, jobId), 90_000, 'the requeued job to finish');
  // running(): a zombie has exited (this host's init may collect it late).
  t.notOk(running(agentPid), 'the orphaned agent was ended');
  t.notOk(running(orchestratePid), 'the orphaned orchestrate was ended');
  const records = runRecords(fixture.state, fixture.name);
  t.match(records[0], {
    id: interrupted!.id,
    status: 'interrupted',
    outcome: 'interrupted',
    trigger: 'job',
    jobId,
    detail: 'the runner died mid-run (watcher restarted); its processes were ended',
  });
  t.match(records[1] ?? {}, { status: 'finished', outcome: 'drained', trigger: 'job', jobId, exitCode: 0 });
  const job = JSON.parse(
    readFileSync(path.join(fixture.state, 'repos', fixture.name, 'spool', 'done', `${jobId}.json`), 'utf8'),
  ) as Record<string, unknown>;
  t.match(job, {
    id: jobId,
    attempt: 1,
    interruptions: 1,
    result: { outcome: 'succeeded', exitCode: 0, runId: records[1]?.id },
  });
  t.equal(
    records.filter((record) => record.jobId === jobId).length,
    2,
    'the job ran again once: its task had not landed',
  );
  t.same(
    spoolFolders(fixture.state, fixture.name),
    { queue: [], running: [], done: [`${jobId}.json`], failed: [] },
    'not lost, not duplicated',
  );

  // With the queue empty the next tick (every 2 s here) drains the board: TASK-2 is still ready.
  await waitFor(() => landed(fixture.origin, 'auto/work').includes('TASK-2'), 90_000, 'the next tick to drain TASK-2');
  await waitFor(
    () =>
      JSON.parse(readFileSync(path.join(fixture.state, 'repos', fixture.name, 'watch.json'), 'utf8') as string)
        .state === 'idle',
    30_000,
    'the watcher to go idle',
  );
  second.child.kill('SIGTERM');
  const stopped = await second.done;
  t.equal(stopped.code, 0, 'SIGTERM stops the watcher cleanly');
  const events = stopped.stderr
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as { event: string });
  const names = events.map((event) => event.event);
  for (const expected of [
    'stale-lock-cleared',
    'leftovers-ended',
    'run-interrupted',
    'job-requeued',
    'watching',
    'job-starting',
    'run-finished',
    'drain-starting',
    'stopped',
  ]) {
    t.ok(names.includes(expected), `logged ${expected}`);
  }
  t.same(landed(fixture.origin, 'auto/work'), ['TASK-1', 'TASK-2']);
  const status = JSON.parse(
    readFileSync(path.join(fixture.state, 'repos', fixture.name, 'watch.json'), 'utf8'),
  ) as Record<string, unknown>;
  t.match(status, { repo: fixture.name, state: 'stopped', lastResult: { outcome: 'drained', exitCode: 0 } });
  t.match(status.runner, { user: fixture.user, home: /^\/.+\/home$/ }, 'it names the repo user and its home');
  t.notOk(existsSync(path.join(fixture.state, 'repos', fixture.name, 'watch.lock')), 'the watch lock is released');
});

t.test("kill -9 of watch after the job's task landed: the job is done, never run twice", async (t) => {
  if (!systemTestMayRun(t, ['setpriv', 'useradd', 'git'])) return;
  const fixture = controlFixture(
    t,
    [
      { id: 'TASK-1', title: 'One', status: 'To Do' },
      { id: 'TASK-2', title: 'Two', status: 'To Do' },
    ],
    { schedule: '*/2 * * * * *' },
  );
  // The first push to origin hangs: the watcher dies after TASK-1 landed on auto/work, before the run ends.
  const hook = path.join(fixture.origin, 'hooks', 'pre-receive');
  writeFileSync(
    hook,
    `#!/bin/sh\nif [ ! -e ${fixture.probeOut}/pushed-once ]; then touch ${fixture.probeOut}/pushed-once; echo $$ > ${fixture.probeOut}/pushing; exec sleep 300; fi\nexit 0\n`,
  );
  chmodSync(hook, 0o755);
  const queued = await runBin(fixture, 'enqueue', [fixture.name, '--task', 'TASK-1']);
  t.equal(queued.code, 0, queued.stderr);
  const jobId = queued.stdout.trim();

  const first = startBin(fixture, 'watch', ['--no-isolation', fixture.name]);
  t.teardown(() => {
    if (first.child.exitCode === null) first.child.kill('SIGKILL');
  });
  const hookPid = await pidFrom(path.join(fixture.probeOut, 'pushing'), 60_000, 'the publish to reach origin');
  t.same(landed(fixture.clone, 'auto/work'), ['TASK-1'], 'TASK-1 landed on auto/work before the kill');
  first.child.kill('SIGKILL');
  await first.done;

  const second = startBin(fixture, 'watch', ['--no-isolation', fixture.name]);
  t.teardown(() => {
    if (second.child.exitCode === null) second.child.kill('SIGKILL');
  });
  await waitFor(() => settled(fixture, jobId), 60_000, 'the job to be settled');
  const job = JSON.parse(
    readFileSync(path.join(fixture.state, 'repos', fixture.name, 'spool', 'done', `${jobId}.json`), 'utf8'),
  ) as Record<string, unknown>;
  const [interrupted] = runRecords(fixture.state, fixture.name);
  t.match(
    job,
    {
      id: jobId,
      attempt: 1,
      result: {
        outcome: 'succeeded',
        runId: interrupted!.id,
        detail: `TASK-1 landed in run ${interrupted!.id} before the runner died`,
      },
    },
    'done by the run that landed it',
  );
  t.notOk(running(hookPid), 'the hung push of the interrupted run was ended');

  const published = () => {
    try {
      return landed(fixture.origin, 'auto/work');
    } catch {
      return []; // origin has no auto/work yet
    }
  };
  await waitFor(() => published().includes('TASK-2'), 90_000, 'the next tick to drain TASK-2 and publish');
  t.same(published(), ['TASK-1', 'TASK-2'], 'each task landed exactly once');
  t.equal(
    runRecords(fixture.state, fixture.name).filter((record) => record.jobId === jobId).length,
    1,
    'the job never ran a second time',
  );
  second.child.kill('SIGTERM');
  const stopped = await second.done;
  t.match(stopped.stderr, /"event":"job-landed-before-restart"/, 'the watcher logged why the job is done');
});
