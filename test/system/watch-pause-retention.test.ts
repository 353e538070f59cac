// The watcher honours the pause flag and applies retention once a day, as
// root on a real registered repo: paused, it starts nothing although a task
// is ready, and its first quiet tick removes the old run record (root's) and
// the old transcript (the user's, as the user), keeping the young ones;
// resumed, it drains the task.
import t from 'tap';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { controlFixture, landed, rootGit, runBin, startBin } from '../helpers/control-fixture.js';
import { systemTestMayRun } from '../helpers/system.js';
import { repoUserStateDir, runFile, transcriptFile } from '../../src/paths.js';

const DAY = 24 * 60 * 60 * 1000;

/** Tasks landed on origin's auto/work; none while the branch does not exist yet. */
function landedSoFar(origin: string): string[] {
  try {
    rootGit(origin, 'rev-parse', '--verify', '--quiet', 'refs/heads/auto/work');
  } catch {
    return [];
  }
  return landed(origin, 'auto/work');
}

async function waitFor(ok: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

function aged(file: string, text: string, ageDays: number, owner?: string): void {
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, text);
  const at = new Date(Date.now() - ageDays * DAY);
  utimesSync(file, at, at);
  if (owner)
    execFileSync('chown', ['-R', `${owner}:${owner}`, path.dirname(path.dirname(path.dirname(path.dirname(file))))]);
}

t.test('a paused watcher starts nothing; its quiet tick applies retention; resumed, it drains', async (t) => {
  if (!systemTestMayRun(t, ['setpriv', 'useradd', 'git'])) return;
  const fixture = controlFixture(t, [{ id: 'TASK-1', title: 'One', status: 'To Do' }], { schedule: '*/2 * * * * *' });
  const home = path.join(path.dirname(fixture.registry), 'home');
  const userState = repoUserStateDir(home);
  aged(transcriptFile(userState, fixture.clone, 'R-old', 'TASK-9'), '{}\n', 45, fixture.user);
  aged(transcriptFile(userState, fixture.clone, 'R-new', 'TASK-9'), '{}\n', 2, fixture.user);
  const record = (id: string, ageDays: number) =>
    JSON.stringify({
      id,
      repo: fixture.name,
      trigger: 'watch',
      user: fixture.user,
      args: [],
      status: 'finished',
      startedAt: new Date(Date.now() - ageDays * DAY).toISOString(),
      endedAt: new Date(Date.now() - ageDays * DAY).toISOString(),
    });
  aged(runFile(fixture.state, fixture.name, 'R-old'), record('R-old', 40), 40);
  aged(runFile(fixture.state, fixture.name, 'R-new'), record('R-new', 2), 2);

  const paused = await runBin(fixture, 'agent-runner', ['pause', fixture.name]);
  t.equal(paused.code, 0, paused.stderr);
  const watch = startBin(fixture, 'watch', ['--no-isolation', fixture.name]);
  t.teardown(() => {
    if (watch.child.exitCode === null) watch.child.kill('SIGKILL');
  });
  const retention = path.join(fixture.state, 'repos', fixture.name, 'retention.json');
  await waitFor(() => existsSync(retention), 30_000, 'the retention pass');
  t.same(
    readdirSync(path.dirname(runFile(fixture.state, fixture.name, 'x'))),
    ['R-new.json'],
    "root's old run record is gone, the young one stays",
  );
  t.same(
    readdirSync(path.dirname(transcriptFile(userState, fixture.clone, 'x', 'y'))),
    ['R-new-TASK-9.jsonl'],
    "the user's old transcript is gone, the young one stays",
  );
  t.match(JSON.parse(readFileSync(retention, 'utf8')), { days: 30, pruned: { runRecords: 1, transcripts: 1 } });

  await new Promise((resolve) => setTimeout(resolve, 5000));
  t.equal(landedSoFar(fixture.origin).length, 0, 'paused: nothing ran although TASK-1 is ready');
  t.same(readdirSync(path.dirname(runFile(fixture.state, fixture.name, 'x'))), ['R-new.json'], 'no run record either');

  const resumed = await runBin(fixture, 'agent-runner', ['resume', fixture.name]);
  t.equal(resumed.code, 0, resumed.stderr);
  await waitFor(() => landedSoFar(fixture.origin).includes('TASK-1'), 90_000, 'the resumed watcher to drain TASK-1');
  watch.child.kill('SIGTERM');
  const stopped = await watch.done;
  const names = stopped.stderr
    .split('\n')
    .filter(Boolean)
    .map((line) => (JSON.parse(line) as { event: string }).event);
  t.ok(names.includes('retention-applied'), 'logged retention-applied');
  t.equal(names.filter((name) => name === 'retention-applied').length, 1, 'once, not every tick');
});
