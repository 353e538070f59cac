// The watcher's blind spot (issue 11, item 0): a task pushed to origin's base
// branch is seen by an idle watcher and started without any job, well before
// any scheduled tick (the schedule here is once a year). The ls-remote and the
// fetch run as the repo user.
import t from 'tap';
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { systemTestMayRun } from '../helpers/system.js';
import { controlFixture, startBin } from '../helpers/control-fixture.js';
import { identityNames } from '../../src/identities.js';
import { waitFor, taskFiles } from '../helpers/drain-fixture.js';
import { tempDir, writeFiles } from '../helpers/temp.js';

/** Files a task the way a team does: a commit pushed to origin's main, by the repo user (whose origin it is). */
function pushTask(t: Parameters<typeof tempDir>[0], origin: string, user: string, id: string, title: string): number {
  const dir = tempDir(t, 'agent-runner-pusher-');
  execFileSync('chown', [`${user}:${user}`, dir]);
  const work = path.join(dir, 'work');
  const env = [
    'HOME=' + dir,
    'PATH=/usr/local/bin:/usr/bin:/bin',
    'GIT_CONFIG_NOSYSTEM=1',
    'GIT_AUTHOR_NAME=Team',
    'GIT_AUTHOR_EMAIL=team@example.invalid',
    'GIT_COMMITTER_NAME=Team',
    'GIT_COMMITTER_EMAIL=team@example.invalid',
  ];
  const asUser = (cwd: string, ...args: string[]) =>
    execFileSync(
      'setpriv',
      [`--reuid=${user}`, `--regid=${user}`, '--init-groups', '--', 'env', '-i', ...env, 'git', ...args],
      { cwd, stdio: 'pipe' },
    );
  asUser(dir, 'clone', '-q', origin, work);
  writeFiles(work, taskFiles([{ id, title, status: 'To Do' }]));
  execFileSync('chown', ['-R', `${user}:${user}`, work]);
  asUser(work, 'add', '-A');
  asUser(work, 'commit', '-q', '-m', `file ${id}`);
  asUser(work, 'push', '-q', 'origin', 'main');
  return Date.now();
}

t.test('a task pushed to origin starts on an idle watcher within seconds, without a job', async (t) => {
  if (!systemTestMayRun(t, ['setpriv', 'useradd', 'git', 'timeout'])) return;
  const fixture = controlFixture(t, [{ id: 'TASK-1', title: 'One', status: 'Done' }], {
    schedule: '0 0 1 1 *',
    registryExtra: 'remote_poll_sec = 1\n',
  });
  const watcher = startBin(fixture, 'watch', ['--no-isolation', fixture.name]);
  t.teardown(() => {
    if (watcher.child.exitCode === null) watcher.child.kill('SIGKILL');
  });
  let stderr = '';
  watcher.child.stderr!.on('data', (chunk) => (stderr += chunk));
  await waitFor(() => stderr.includes('"event":"watching"'), 30_000, 'the watcher to start');
  // Idle for a few polls: origin has not moved, nothing happens.
  await new Promise((resolve) => setTimeout(resolve, 2500));
  t.notOk(stderr.includes('remote-moved'), 'an unchanged origin starts nothing');
  t.notOk(
    stderr.includes('remote-check-failed'),
    `the checks work (${stderr.split('\n').find((line) => line.includes('remote-check-failed')) ?? ''})`,
  );

  // The agent holds until the drain has been looked at.
  writeFileSync(path.join(fixture.probeOut, 'hold'), '');
  const pushedAt = pushTask(t, fixture.origin, fixture.user, 'TASK-2', 'Two');
  const started = path.join(fixture.probeOut, 'pid-TASK-2');
  await waitFor(() => existsSync(started), 60_000, 'the agent of the pushed task to start');
  const delayMs = statSync(started).mtimeMs - pushedAt;
  t.ok(delayMs < 20_000, `push to agent start: ${Math.round(delayMs)} ms (a poll every second)`);
  const events = stderr
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as { event: string });
  const names = events.map((event) => event.event);
  t.ok(
    names.indexOf('remote-moved') >= 0 && names.indexOf('remote-moved') < names.indexOf('drain-starting'),
    'origin moved, then a drain started',
  );
  t.notOk(names.includes('job-starting'), 'no job was queued');
  t.match(
    readFileSync(path.join(fixture.probeOut, 'id-TASK-2'), 'utf8'),
    new RegExp(`^uid=\\d+\\(${identityNames(fixture.user).agent}\\) `),
    "the agent ran as the repo's agent identity",
  );
  // The drain that started it runs as the runner: the run the watcher recorded, and its staging worktree.
  const runs = path.join(fixture.state, 'repos', fixture.name, 'runs');
  const readRun = () => {
    const [runFile] = readdirSync(runs);
    return JSON.parse(readFileSync(path.join(runs, runFile!), 'utf8')) as { user: string; process?: { pid: number } };
  };
  await waitFor(() => readRun().process !== undefined, 10_000, 'the run record to name its process');
  const run = readRun();
  t.equal(run.user, fixture.user, 'the run is recorded as the runner');
  const drainUid = /^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${run.process!.pid}/status`, 'utf8'))?.[1];
  t.equal(
    drainUid,
    execFileSync('id', ['-u', fixture.user], { encoding: 'utf8' }).trim(),
    'the drain runs as the runner',
  );
  rmSync(path.join(fixture.probeOut, 'hold'));
  await waitFor(() => stderr.includes('"event":"run-finished"'), 90_000, 'the drain to finish');
  watcher.child.kill('SIGTERM');
  const stopped = await watcher.done;
  t.equal(stopped.code, 0, 'SIGTERM stops the watcher cleanly');
});
