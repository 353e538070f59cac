// kill -9 of a drain's or promote's process group while its git is inside a checkout that a slow smudge filter keeps
// open. Every git the runner starts leads its own session, so a group kill leaves that git running, holding the index
// lock. The next run ends the git (the run that started it is provably gone), removes the lock and goes on; so does
// the run after it. A live run's git is never ended: the answer is busy (exit 75), naming it.
import t, { type Test } from 'tap';
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { git, tempDir } from '../helpers/temp.js';
import {
  AGENT_RUNNER,
  drainFixture,
  landedOn,
  runCli,
  runOrchestrate,
  startOrchestrate,
  type CliRun,
  type DrainFixture,
} from '../helpers/drain-fixture.js';
import { gitLocksUnder, killGroup, killIfSame, pidFrom } from '../helpers/kill.js';
import { running } from '../helpers/user-processes.js';

const TASK = { id: 'TASK-1', title: 'Add alpha', description: 'agent: write alpha.txt "alpha"' };
/** alpha.txt goes through the filter named slow (configured per clone by slowFilter). */
const ATTRIBUTES = { '.gitattributes': 'alpha.txt filter=slow\n' };

/** The processes a hung filter keeps: the git that runs it, the filter (a shell) and the sleep it waits for. */
interface HeldGit {
  readonly git: number;
  readonly filter: number;
  readonly sleep: number;
}

/**
 * Makes `kind` (smudge: checkout; clean: add) of alpha.txt hang once, in a directory ending in `inDir`, after
 * `control/slow` is created: the git running it stays inside its checkout, holding the index lock, until the sleep
 * the filter waits for ends.
 */
function slowFilter(clone: string, control: string, kind: 'smudge' | 'clean', inDir: string): void {
  const script = path.join(control, 'filter.sh');
  writeFileSync(
    script,
    [
      '#!/bin/sh',
      `case "$PWD" in *${inDir})`,
      `  if [ -e ${control}/slow ]; then`,
      `    rm -f ${control}/slow`,
      '    sleep 300 &',
      `    echo $! > ${control}/sleep-pid`,
      `    echo $$ > ${control}/filter-pid`,
      '    wait $!',
      '  fi;;',
      'esac',
      'exec cat',
      '',
    ].join('\n'),
  );
  chmodSync(script, 0o755);
  git(clone, 'config', `filter.slow.${kind}`, script);
}

function parentOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
}

/** Once the filter hangs: its git, itself and its sleep, each killed in teardown while it is still that process. */
async function hungGit(t: Test, control: string, what: string): Promise<HeldGit> {
  const filter = await pidFrom(path.join(control, 'filter-pid'), 30000, what);
  const sleep = await pidFrom(path.join(control, 'sleep-pid'), 5000, 'the filter to start its sleep');
  const held = { git: parentOf(filter), filter, sleep };
  t.equal(readFileSync(`/proc/${held.git}/comm`, 'utf8').trim(), 'git', 'the filter runs under git');
  for (const pid of [held.sleep, held.filter, held.git]) t.teardown(killIfSame(pid));
  return held;
}

function anyRunning(held: HeldGit): boolean {
  return [held.git, held.filter, held.sleep].some(running);
}

function recovered(run: CliRun): string[] {
  return run.events.filter((event) => event.event === 'recovered').map((event) => String(event.detail));
}

async function killGroupAndWait(child: ReturnType<typeof spawn>): Promise<void> {
  const closed = new Promise((resolve) => child.once('close', resolve));
  killGroup(child.pid!);
  await closed;
}

/** A drain killed with its whole process group while its git hangs in the staging merge. */
async function drainKilledMidMerge(
  t: Test,
): Promise<{ fixture: DrainFixture; held: HeldGit; before: string; drain: number }> {
  const control = tempDir(t, 'agent-runner-git-left-');
  const fixture = drainFixture(t, [TASK], { files: ATTRIBUTES });
  slowFilter(fixture.clone, control, 'smudge', '/staging');
  writeFileSync(path.join(control, 'slow'), '');
  const before = git(fixture.clone, 'rev-parse', 'origin/main');
  const { child } = startOrchestrate(fixture, [], true);
  const held = await hungGit(t, control, 'the staging merge to reach the slow filter');
  await killGroupAndWait(child);
  t.ok(running(held.git), "the drain's git outlives the group kill (it leads its own session)");
  const lock = path.join(fixture.clone, '.git', 'worktrees', 'staging', 'index.lock');
  t.same(gitLocksUnder(path.join(fixture.clone, '.git')), [lock], 'and holds the staging index lock');
  return { fixture, held, before, drain: child.pid! };
}

t.test('drain killed with its group mid-merge: the next two drains succeed, the task lands once', async (t) => {
  const { fixture, held, before, drain } = await drainKilledMidMerge(t);

  const started = Date.now();
  const first = await runOrchestrate(fixture);
  t.comment(`the first drain after the kill took ${Date.now() - started} ms (the left git is waited for 5 s)`);
  t.equal(first.code, 0, first.stderr.slice(-800));
  t.notMatch(first.stderr, /Unable to create/, "never git's raw lock error");
  t.notOk(anyRunning(held), 'the git, its filter and the sleep are ended');
  const lock = path.join(fixture.clone, '.git', 'worktrees', 'staging', 'index.lock');
  const notes = recovered(first);
  t.ok(
    notes.includes(
      `ended git (pid ${held.git}) and 2 of its process group (filter.sh pid ${held.filter}, sleep pid ${held.sleep}) left in the repository by agent-runner pid ${drain}, which is gone, holding ${lock}: SIGTERM after waiting 5s`,
    ),
    `the git is named as ended, with the killed drain (${notes.join('; ')})`,
  );
  t.same(landedOn(fixture.clone, 'auto/work', before), ['TASK-1'], 'the task landed');

  const again = Date.now();
  const second = await runOrchestrate(fixture);
  t.comment(`the second took ${Date.now() - again} ms`);
  t.equal(second.code, 0, second.stderr.slice(-800));
  t.same(landedOn(fixture.clone, 'auto/work', before), ['TASK-1'], 'exactly once');
  t.same(gitLocksUnder(path.join(fixture.clone, '.git')), [], 'no git lock is left');
});

t.test('drain killed with its group mid-merge: discard works next', async (t) => {
  const { fixture, held, before } = await drainKilledMidMerge(t);
  const discarded = await runCli(fixture, ['discard', '--workspace', fixture.clone, '--yes']);
  t.equal(discarded.code, 0, discarded.stderr.slice(-800));
  t.match(discarded.stderr, new RegExp(`ended git \\(pid ${held.git}\\)`), 'naming the git it ended');
  t.notOk(anyRunning(held), 'the git, its filter and the sleep are ended');
  t.equal(git(fixture.clone, 'rev-parse', 'auto/work'), before, 'auto/work is back at the base');
  t.same(gitLocksUnder(path.join(fixture.clone, '.git')), [], 'no git lock is left');
});

/** A drained fixture whose promote will hang in the checkout's fast-forward, writing alpha.txt. */
async function drainedWithSlowCheckout(t: Test): Promise<{ fixture: DrainFixture; control: string }> {
  const control = tempDir(t, 'agent-runner-git-left-');
  const fixture = drainFixture(t, [TASK], { files: ATTRIBUTES });
  slowFilter(fixture.clone, control, 'smudge', '/clone');
  const drained = await runOrchestrate(fixture);
  t.equal(drained.code, 0, drained.stderr.slice(-500));
  writeFileSync(path.join(control, 'slow'), '');
  return { fixture, control };
}

function startPromote(fixture: DrainFixture): ReturnType<typeof spawn> {
  return spawn(process.execPath, [AGENT_RUNNER, 'promote', '--workspace', fixture.clone], {
    env: fixture.env,
    stdio: 'ignore',
    detached: true,
  });
}

t.test('promote killed with its group mid-checkout: the next two promotes succeed', async (t) => {
  const { fixture, control } = await drainedWithSlowCheckout(t);
  const child = startPromote(fixture);
  const held = await hungGit(t, control, "promote's fast-forward to reach the slow filter");
  await killGroupAndWait(child);
  t.ok(running(held.git), "promote's git outlives the group kill");
  const lock = path.join(fixture.clone, '.git', 'index.lock');
  t.same(gitLocksUnder(path.join(fixture.clone, '.git')), [lock], 'and holds the index lock');

  const first = await runCli(fixture, ['promote', '--workspace', fixture.clone]);
  t.equal(first.code, 0, first.stderr.slice(-800));
  t.notMatch(first.stderr, /Unable to create/, "never git's raw lock error");
  t.match(first.stderr, new RegExp(`ended git \\(pid ${held.git}\\)`), 'naming the git it ended');
  t.notOk(anyRunning(held), 'the git, its filter and the sleep are ended');
  t.equal(git(fixture.clone, 'rev-parse', 'main'), git(fixture.clone, 'rev-parse', 'auto/work'), 'main is promoted');
  t.equal(readFileSync(path.join(fixture.clone, 'alpha.txt'), 'utf8'), 'alpha\n', "with auto/work's files");
  t.equal(git(fixture.clone, 'status', '--porcelain'), '', 'the checkout is clean');

  const second = await runCli(fixture, ['promote', '--workspace', fixture.clone]);
  t.equal(second.code, 0, second.stderr.slice(-800));
  t.match(second.stdout, /already at auto\/work/, 'the second has nothing to do');
  t.same(gitLocksUnder(path.join(fixture.clone, '.git')), [], 'no git lock is left');
});

t.test("a live promote's git mid-checkout: drain, gc and discard are busy naming it, and it finishes", async (t) => {
  const { fixture, control } = await drainedWithSlowCheckout(t);
  const child = startPromote(fixture);
  t.teardown(() => void child.kill('SIGKILL'));
  const closed = new Promise<number | null>((resolve) => child.once('close', resolve));
  const held = await hungGit(t, control, "promote's fast-forward to reach the slow filter");
  for (const args of [
    ['orchestrate', '--workspace', fixture.clone],
    ['gc', '--workspace', fixture.clone, '--yes'],
    ['discard', '--workspace', fixture.clone, '--yes'],
  ]) {
    const busy = await runCli(fixture, args);
    t.equal(busy.code, 75, `${args[0]} is busy (${busy.stderr.slice(-300)})`);
    t.match(busy.stderr, new RegExp(`is held by pid ${child.pid} \\(promote\\)`), 'naming the live promote');
    t.notMatch(busy.stderr, /Unable to create/, "never git's raw lock error");
  }
  t.ok(running(held.git) && running(held.filter), "the live promote's git is not ended");

  process.kill(held.sleep, 'SIGKILL');
  t.equal(await closed, 0, 'the promote finishes once its filter does');
  t.equal(git(fixture.clone, 'rev-parse', 'main'), git(fixture.clone, 'rev-parse', 'auto/work'), 'main is promoted');
});

t.test("a live run's git holds the checkout's index lock: a drain is busy naming it, never ends it", async (t) => {
  const control = tempDir(t, 'agent-runner-git-left-');
  // Does the work and sets the task Done without committing: `run` then commits it (git add runs the clean filter).
  const agent = path.join(control, 'agent.sh');
  writeFileSync(
    agent,
    '#!/bin/sh\necho alpha > alpha.txt\nsed -i "s/^status: To Do$/status: Done/" backlog/tasks/*.md\n',
  );
  chmodSync(agent, 0o755);
  const fixture = drainFixture(t, [TASK], { files: ATTRIBUTES, agent: [agent] });
  slowFilter(fixture.clone, control, 'clean', '/clone');
  writeFileSync(path.join(control, 'slow'), '');
  const run = spawn(process.execPath, [AGENT_RUNNER, 'run', '--workspace', fixture.clone, '--task', 'TASK-1'], {
    env: fixture.env,
    stdio: 'ignore',
    detached: true,
  });
  t.teardown(() => void run.kill('SIGKILL'));
  const closed = new Promise<number | null>((resolve) => run.once('close', resolve));
  const held = await hungGit(t, control, "run's commit to reach the slow clean filter");
  const lock = path.join(fixture.clone, '.git', 'index.lock');
  t.ok(existsSync(lock), 'its git holds the index lock');

  const busy = await runOrchestrate(fixture);
  t.equal(busy.code, 75, `busy (${busy.stderr.slice(-400)})`);
  t.match(
    busy.stderr,
    `${lock} is held by git pid ${held.git}, started by agent-runner pid ${run.pid}, which is running`,
    'naming the lock, the git and the live run',
  );
  t.notMatch(busy.stderr, /Unable to create/, "never git's raw lock error");
  t.ok(running(held.git), 'the git is not ended');

  process.kill(held.sleep, 'SIGKILL');
  t.equal(await closed, 0, 'the run finishes once its filter does');
  const next = await runOrchestrate(fixture);
  t.equal(next.code, 0, next.stderr.slice(-800));
});
