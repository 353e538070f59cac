// kill -9 of promote during its fast-forward of the checkout, with git
// holding the index lock and some of auto/work's files already written (as
// a git killed mid-checkout leaves them): the next promote removes the stale
// lock, sees that every change in the checkout is auto/work's own, and
// finishes the fast-forward. An operator's own edit still stops it.
import t from 'tap';
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { git, tempDir } from '../helpers/temp.js';
import { AGENT_RUNNER, drainFixture, runCli, runOrchestrate } from '../helpers/drain-fixture.js';
import { gitLocksUnder, hangingGit, killGroup, killGroupIfSame, pidFrom } from '../helpers/kill.js';
import { taskFileName } from '../../src/board/render.js';

t.test('killed during the fast-forward: the next promote finishes it', async (t) => {
  const control = tempDir(t, 'agent-runner-promote-kill-');
  const fixture = drainFixture(t, [
    { id: 'TASK-1', title: 'Add alpha', description: 'agent: write alpha.txt "alpha"' },
  ]);
  const drained = await runOrchestrate(fixture);
  t.equal(drained.code, 0, drained.stderr.slice(-500));
  const taskFile = path.join('backlog/tasks', taskFileName('TASK-1', 'Add alpha'));
  const written = `$REAL_GIT show auto/work:alpha.txt > alpha.txt; $REAL_GIT show 'auto/work:${taskFile}' > '${taskFile}'`;
  const bin = hangingGit(control, '--ff-only', 'index.lock', written);
  const child = spawn(process.execPath, [AGENT_RUNNER, 'promote', '--workspace', fixture.clone], {
    env: { ...fixture.env, PATH: `${bin}:${fixture.env.PATH}` },
    stdio: 'ignore',
    detached: true,
  });
  const gitPid = await pidFrom(path.join(control, 'git-pid'), 30000, 'the fast-forward to take the index lock');
  t.teardown(killGroupIfSame(gitPid));
  killGroup(child.pid!);
  killGroup(gitPid);
  await new Promise((resolve) => child.once('close', resolve));
  const lock = path.join(fixture.clone, '.git', 'index.lock');
  t.same(gitLocksUnder(path.join(fixture.clone, '.git')), [lock], 'the kill left the index lock');
  t.not(git(fixture.clone, 'rev-parse', 'main'), git(fixture.clone, 'rev-parse', 'auto/work'), 'main did not move');
  t.match(git(fixture.clone, 'status', '--porcelain'), /alpha\.txt/, 'and the checkout holds part of auto/work');

  const again = await runCli(fixture, ['promote', '--workspace', fixture.clone]);
  t.equal(again.code, 0, again.stderr.slice(-500));
  t.match(
    again.stderr,
    `removed git lock ${lock} left by a git that was killed (no process holds it)`,
    'the stale lock is removed, and named',
  );
  t.match(
    again.stdout,
    /finishing the fast-forward an interrupted promote left half-done/,
    'the half-done fast-forward is finished, and said so',
  );
  t.equal(
    git(fixture.clone, 'rev-parse', 'main'),
    git(fixture.clone, 'rev-parse', 'auto/work'),
    'main is at auto/work',
  );
  t.equal(git(fixture.clone, 'status', '--porcelain'), '', 'the checkout is clean');
  t.same(gitLocksUnder(path.join(fixture.clone, '.git')), [], 'no git lock is left');
});

t.test("an operator's own edit is not a half-done fast-forward: promote refuses", async (t) => {
  const fixture = drainFixture(t, [
    { id: 'TASK-1', title: 'Add alpha', description: 'agent: write alpha.txt "alpha"' },
  ]);
  const drained = await runOrchestrate(fixture);
  t.equal(drained.code, 0, drained.stderr.slice(-500));
  writeFileSync(path.join(fixture.clone, 'README.md'), 'my own edit\n');
  const refused = await runCli(fixture, ['promote', '--workspace', fixture.clone]);
  t.equal(refused.code, 1);
  t.match(refused.stderr, /has uncommitted changes on main/);
  t.equal(readFileSync(path.join(fixture.clone, 'README.md'), 'utf8'), 'my own edit\n', 'the edit is kept');
});
