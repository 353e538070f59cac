// kill -9 of orchestrate during an agent run, a setup command, between merge
// and gate, during a batched gate, while git holds a lock (merge, commit, ref update), and during
// publish: the next drain recovers with nothing lost, nothing landed
// twice, and no agent left running.
import t, { type Test } from 'tap';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync, chmodSync, readdirSync, rmSync } from 'node:fs';
import { gitLocksUnder, hangingGit, killGroup, killGroupIfSame, killIfSame, pidFrom } from '../helpers/kill.js';
import * as path from 'node:path';
import { git, tempDir } from '../helpers/temp.js';
import {
  drainFixture,
  landedOn,
  runOrchestrate,
  startOrchestrate,
  waitFor,
  SCRIPTED_AGENT,
  type DrainFixture,
} from '../helpers/drain-fixture.js';
import { workspaceStateDir } from '../../src/paths.js';
import { running } from '../helpers/user-processes.js';

/** Runs: exists and is not a zombie (it has exited; this host's init may collect it late). */
const alive = running;

/** After the recovering drain: no git lock file, no process record, no attempt charged for the kill. */
function recoveredCleanly(t: Test, fixture: DrainFixture): void {
  t.same(gitLocksUnder(path.join(fixture.clone, '.git')), [], 'no git lock file is left');
  const wsState = workspaceStateDir(fixture.state, fixture.clone);
  t.same(
    existsSync(path.join(wsState, 'agents')) ? readdirSync(path.join(wsState, 'agents')) : [],
    [],
    'no process record is left',
  );
  const attempts = path.join(wsState, 'attempts.json');
  t.notOk(existsSync(attempts) && /TASK-/.test(readFileSync(attempts, 'utf8')), 'no attempt was charged for the kill');
}

const TWO_TASKS = [
  { id: 'TASK-1', title: 'Add alpha', description: 'agent: write alpha.txt "alpha"' },
  { id: 'TASK-2', title: 'Add beta', description: 'agent: write beta.txt "beta"' },
];

t.test('killed during agent runs: orphans are ended, unfinished work reruns and lands once', async (t) => {
  const control = tempDir(t, 'agent-runner-kill-');
  const agent = path.join(control, 'agent.sh');
  // Hangs while the marker exists (recording its pid), otherwise is the scripted agent.
  writeFileSync(
    agent,
    `#!/bin/sh\nif [ -e ${control}/hang ]; then echo $$ > ${control}/pid-$AGENT_TASK_ID; exec sleep 300; fi\nexec ${SCRIPTED_AGENT} "$@"\n`,
  );
  chmodSync(agent, 0o755);
  writeFileSync(path.join(control, 'hang'), '');
  const fixture = drainFixture(t, TWO_TASKS, { agent: [agent], config: { maxParallel: 2 } });
  const { child } = startOrchestrate(fixture);
  const pidFiles = () => readdirSync(control).filter((name) => name.startsWith('pid-'));
  await waitFor(() => pidFiles().length === 2, 20000, 'both agents to start');
  const agents = await Promise.all(
    pidFiles().map((name) => pidFrom(path.join(control, name), 5000, `the pid in ${name}`)),
  );
  const killAgentsLater = agents.map(killGroupIfSame);
  t.teardown(() => killAgentsLater.forEach((kill) => kill()));
  const records = path.join(workspaceStateDir(fixture.state, fixture.clone), 'agents');
  const recordFiles = () =>
    existsSync(records) ? readdirSync(records).filter((name) => /^TASK-\d+\.json$/.test(name)) : [];
  await waitFor(() => recordFiles().length === 2, 5000, 'agent records');
  child.kill('SIGKILL');
  await new Promise((resolve) => child.once('close', resolve));
  t.ok(agents.every(alive), 'the agents outlive the killed drain (they lead their own process groups)');

  const baseBefore = git(fixture.clone, 'rev-parse', 'origin/main');
  t.equal(
    git(fixture.clone, 'branch', '--list', 'auto/TASK-*'),
    '',
    "work a killed drain's agents had not handed over never reached the runner's repository",
  );
  rmSync(path.join(control, 'hang'));
  const next = await runOrchestrate(fixture);
  t.equal(next.code, 0, next.stderr.slice(-800));
  t.notOk(agents.some(alive), 'the next drain ended the orphaned agents');
  t.equal(
    next.events.filter((event) => event.event === 'recovered' && /ended agent TASK-\d \(pid/.test(String(event.detail)))
      .length,
    2,
    'and said so',
  );
  const notes = next.events.filter((event) => event.event === 'recovered').map((event) => String(event.detail));
  t.notOk(
    notes.some((note) => note.includes('already landed')),
    'never "already landed"',
  );
  t.same(
    landedOn(fixture.clone, 'auto/work', baseBefore).sort(),
    ['TASK-1', 'TASK-2'],
    'both tasks landed exactly once',
  );
  recoveredCleanly(t, fixture);
  t.same(readdirSync(records), [], 'no agent records (or their temp files) remain');
});

t.test(
  'killed between merge and gate: the gate is ended, the half-done merge aborted, the finished work lands once',
  async (t) => {
    const control = tempDir(t, 'agent-runner-kill-');
    const gates = `#!/bin/sh\nif [ -e ${control}/slow ]; then echo $$ > ${control}/gate-pid; exec sleep 300; fi\necho gate ok\n`;
    writeFileSync(path.join(control, 'slow'), '');
    const fixture = drainFixture(t, [TWO_TASKS[0]!], { gates });
    const before = git(fixture.clone, 'rev-parse', 'origin/main');
    const { child } = startOrchestrate(fixture);
    const gatePid = await pidFrom(path.join(control, 'gate-pid'), 20000, 'the gate to start');
    t.teardown(killGroupIfSame(gatePid));
    const records = path.join(workspaceStateDir(fixture.state, fixture.clone), 'agents');
    await waitFor(() => existsSync(path.join(records, 'gate.json')), 5000, 'the gate record');
    child.kill('SIGKILL');
    await new Promise((resolve) => child.once('close', resolve));
    t.ok(alive(gatePid), 'the gate outlives the killed drain (it leads its own process group)');
    const staging = path.join(path.dirname(fixture.clone), '.clone.worktrees', 'staging');
    t.ok(
      existsSync(path.join(git(staging, 'rev-parse', '--absolute-git-dir'), 'MERGE_HEAD')),
      'the staging worktree was left mid-merge',
    );
    t.same(landedOn(fixture.clone, 'auto/work', before), [], 'nothing landed: the gate had not passed');

    rmSync(path.join(control, 'slow'));
    const next = await runOrchestrate(fixture);
    t.equal(next.code, 0, next.stderr.slice(-800));
    t.notOk(alive(gatePid), 'the next drain ended the orphaned gate before touching the staging worktree');
    const details = next.events.filter((event) => event.event === 'recovered').map((event) => String(event.detail));
    t.ok(
      details.some((detail) => /^ended gate TASK-1 \(pid \d+\)/.test(detail)),
      `and said so (${details.join('; ')})`,
    );
    t.ok(details.includes('aborted a merge left half-done in the staging worktree'), 'recovery aborted the merge');
    t.equal(next.events.filter((event) => event.event === 'task-started').length, 0, 'the finished work is not redone');
    t.same(landedOn(fixture.clone, 'auto/work', before), ['TASK-1'], 'and lands exactly once');
    recoveredCleanly(t, fixture);
  },
);

t.test(
  'killed during a batched gate: nothing of the batch landed, the staging worktree is put back on auto/work, each task lands once',
  async (t) => {
    const control = tempDir(t, 'agent-runner-kill-');
    // The gate judges its own checkout of the candidate: the batch of TASK-2 and TASK-3 holds both their files, and
    // that gate hangs (recording its pid); TASK-1, gated alone, passes after 2 s, so the others queue into one batch.
    const gates = `#!/bin/sh\nif ! { [ -e beta.txt ] && [ -e gamma.txt ]; }; then sleep 2; echo gate ok; exit 0; fi\nif [ -e ${control}/slow ]; then echo $$ > ${control}/gate-pid; exec sleep 300; fi\necho batch ok\n`;
    writeFileSync(path.join(control, 'slow'), '');
    const tasks = [
      { id: 'TASK-1', title: 'Add alpha', description: 'agent: write alpha.txt "alpha"' },
      { id: 'TASK-2', title: 'Add beta', description: 'agent: sleep 0.5\nagent: write beta.txt "beta"' },
      { id: 'TASK-3', title: 'Add gamma', description: 'agent: sleep 0.5\nagent: write gamma.txt "gamma"' },
    ];
    const fixture = drainFixture(t, tasks, { gates, config: { maxParallel: 3 } });
    const before = git(fixture.clone, 'rev-parse', 'origin/main');
    const { child } = startOrchestrate(fixture);
    const gatePid = await pidFrom(path.join(control, 'gate-pid'), 30000, 'the batched gate to start');
    t.teardown(killGroupIfSame(gatePid));
    const records = path.join(workspaceStateDir(fixture.state, fixture.clone), 'agents');
    await waitFor(() => existsSync(path.join(records, 'gate.json')), 5000, 'the gate record');
    child.kill('SIGKILL');
    await new Promise((resolve) => child.once('close', resolve));
    const staging = path.join(path.dirname(fixture.clone), '.clone.worktrees', 'staging');
    t.equal(
      spawnSync('git', ['-C', staging, 'symbolic-ref', '-q', 'HEAD']).status,
      1,
      'the staging worktree was left detached, on the batch',
    );
    const landedBefore = landedOn(fixture.clone, 'auto/work', before);
    t.ok(landedBefore.length <= 1, `at most the task gated alone landed (${landedBefore.join(',')})`);
    for (const file of ['alpha.txt', 'beta.txt', 'gamma.txt']) {
      const onAutoWork = git(fixture.clone, 'ls-tree', '--name-only', 'auto/work', file) !== '';
      const landedTask = { 'alpha.txt': 'TASK-1', 'beta.txt': 'TASK-2', 'gamma.txt': 'TASK-3' }[file]!;
      t.equal(onAutoWork, landedBefore.includes(landedTask), `${file} is on auto/work only if its task landed gated`);
    }

    rmSync(path.join(control, 'slow'));
    const next = await runOrchestrate(fixture);
    t.equal(next.code, 0, next.stderr.slice(-800));
    t.notOk(alive(gatePid), 'the next drain ended the orphaned gate');
    t.equal(next.events.filter((event) => event.event === 'task-started').length, 0, 'the finished work is not redone');
    t.same(
      landedOn(fixture.clone, 'auto/work', before).sort(),
      ['TASK-1', 'TASK-2', 'TASK-3'],
      'every task lands exactly once',
    );
    t.equal(
      spawnSync('git', ['-C', staging, 'symbolic-ref', '-q', 'HEAD'], { encoding: 'utf8' }).stdout.trim(),
      'refs/heads/auto/work',
      'the staging worktree is on auto/work again',
    );
    recoveredCleanly(t, fixture);
  },
);

t.test('killed during setup: the setup command is ended and the task runs again', async (t) => {
  const control = tempDir(t, 'agent-runner-kill-');
  const setup = path.join(control, 'setup.sh');
  writeFileSync(
    setup,
    `#!/bin/sh\nif [ -e ${control}/slow ]; then echo $$ > ${control}/setup-pid; exec sleep 300; fi\nexit 0\n`,
  );
  chmodSync(setup, 0o755);
  writeFileSync(path.join(control, 'slow'), '');
  const fixture = drainFixture(t, [TWO_TASKS[0]!], { config: { setup: [setup] } });
  const before = git(fixture.clone, 'rev-parse', 'origin/main');
  const { child } = startOrchestrate(fixture);
  const setupPid = await pidFrom(path.join(control, 'setup-pid'), 20000, 'setup to start');
  t.teardown(killGroupIfSame(setupPid));
  const records = path.join(workspaceStateDir(fixture.state, fixture.clone), 'agents');
  await waitFor(() => existsSync(path.join(records, 'setup.TASK-1.json')), 5000, 'the setup record');
  child.kill('SIGKILL');
  await new Promise((resolve) => child.once('close', resolve));
  t.ok(alive(setupPid), 'setup outlives the killed drain');

  rmSync(path.join(control, 'slow'));
  const next = await runOrchestrate(fixture);
  t.equal(next.code, 0, next.stderr.slice(-800));
  t.notOk(alive(setupPid), 'the next drain ended it');
  t.ok(
    next.events.some((event) => event.event === 'recovered' && /^ended setup TASK-1 \(pid/.test(String(event.detail))),
    'and said so',
  );
  t.same(landedOn(fixture.clone, 'auto/work', before), ['TASK-1'], 'the task ran again and landed once');
  recoveredCleanly(t, fixture);
});

async function killMidGit(
  t: Test,
  fixture: DrainFixture,
  control: string,
  args: readonly string[] = [],
): Promise<void> {
  const { child } = startOrchestrate(fixture, args, true);
  const gitPid = await pidFrom(path.join(control, 'git-pid'), 30000, 'git to take its lock');
  const killGitLater = killGroupIfSame(gitPid);
  killGroup(child.pid!);
  killGroup(gitPid);
  await new Promise((resolve) => child.once('close', resolve));
  t.teardown(killGitLater);
}

for (const point of [
  { name: 'the staging merge', subcommand: 'merge', lock: 'index.lock', left: 'worktrees/staging/index.lock' },
  // A landing is write-tree, commit-tree, then update-ref from the tip the runner wrote last (staging/tip.ts).
  { name: 'the landing commit', subcommand: 'write-tree', lock: 'index.lock', left: 'worktrees/staging/index.lock' },
  {
    name: 'the update of auto/work',
    subcommand: 'update-ref',
    lock: '../../refs/heads/auto/work.lock',
    left: 'refs/heads/auto/work.lock',
  },
]) {
  t.test(`killed during ${point.name}: the git lock it left is removed and the work lands once`, async (t) => {
    const control = tempDir(t, 'agent-runner-kill-');
    const fixture = drainFixture(t, [TWO_TASKS[0]!]);
    const bin = hangingGit(control, point.subcommand, point.lock, ':', '/staging');
    const withWrapper = { ...fixture, env: { ...fixture.env, PATH: `${bin}:${fixture.env.PATH}` } };
    const before = git(fixture.clone, 'rev-parse', 'origin/main');
    await killMidGit(t, withWrapper, control);
    const left = gitLocksUnder(path.join(fixture.clone, '.git'));
    t.same(left, [path.join(fixture.clone, '.git', point.left)], 'the kill left the git lock of the staging step');

    const next = await runOrchestrate(fixture);
    t.equal(next.code, 0, next.stderr.slice(-800));
    const details = next.events.filter((event) => event.event === 'recovered').map((event) => String(event.detail));
    t.ok(
      details.includes(`removed git lock ${left[0]} left by a git that was killed (no process holds it)`),
      `recovery removed it and said so (${details.join('; ')})`,
    );
    t.same(landedOn(fixture.clone, 'auto/work', before), ['TASK-1'], 'the task landed exactly once');
    recoveredCleanly(t, fixture);
  });
}

t.test('a git lock a live process holds is kept, and the drain is busy naming it', async (t) => {
  const fixture = drainFixture(t, [TWO_TASKS[0]!]);
  const lock = path.join(fixture.clone, '.git', 'refs', 'heads', 'auto', 'work.lock');
  git(fixture.clone, 'branch', 'auto/work', 'main');
  writeFileSync(lock, '');
  // A process holding it open, as a live git would.
  const holder = spawn('sh', ['-c', `exec 3<"${lock}"; exec sleep 300`], { stdio: 'ignore', detached: true });
  t.teardown(() => killGroup(holder.pid!));
  await waitFor(
    () => {
      try {
        return readdirSync(`/proc/${holder.pid}/fd`).length > 3;
      } catch {
        return false;
      }
    },
    5000,
    'the holder to open the lock',
  );
  const next = await runOrchestrate(fixture);
  t.equal(next.code, 75, `busy (${next.stderr.slice(-400)})`);
  t.match(
    next.stderr,
    `${lock} is held by sleep pid ${holder.pid}, which no live or gone agent-runner run is known to have started; wait for it to finish, then run again`,
    'naming the lock and its holder',
  );
  t.notMatch(next.stderr, /Unable to create/, "never git's raw lock error");
  t.ok(existsSync(lock), 'the lock is still there');
  t.ok(alive(holder.pid!), 'and its holder is not ended');
  t.same(
    readdirSync(path.join(fixture.clone, '.git')).filter((name) => name.startsWith('agent-runner-drain.lock')),
    [],
    'the drain lock is released',
  );
});

t.test('killed during publish: the next drain publishes, nothing lands twice', async (t) => {
  const control = tempDir(t, 'agent-runner-kill-');
  const fixture = drainFixture(t, TWO_TASKS);
  const hook = path.join(fixture.origin, 'hooks', 'pre-receive');
  writeFileSync(
    hook,
    `#!/bin/sh\nif [ ! -e ${control}/once ]; then touch ${control}/once; echo $$ > ${control}/pushing; exec sleep 300; fi\nexit 0\n`,
  );
  chmodSync(hook, 0o755);
  const before = git(fixture.clone, 'rev-parse', 'origin/main');
  const { child } = startOrchestrate(fixture, [], true);
  const hookPid = await pidFrom(path.join(control, 'pushing'), 30000, 'the push to reach origin');
  t.teardown(killIfSame(hookPid));
  // The whole group: orchestrate and its git push, as a crash or power cut would.
  killGroup(child.pid!);
  killGroup(hookPid);
  await new Promise((resolve) => child.once('close', resolve));
  t.not(
    git(fixture.origin, 'for-each-ref', '--format=%(objectname)', 'refs/heads/auto/work'),
    git(fixture.clone, 'rev-parse', 'auto/work'),
    'origin did not get auto/work',
  );

  const next = await runOrchestrate(fixture);
  t.equal(next.code, 0, next.stderr.slice(-800));
  // The push outlived the group kill (it leads its own session), and the hook with it.
  t.notOk(alive(hookPid), "the next drain ended the killed drain's push, its hook too");
  t.equal(JSON.parse(next.stdout).pushed, true, 'the next drain publishes');
  t.equal(
    git(fixture.origin, 'rev-parse', 'auto/work'),
    git(fixture.clone, 'rev-parse', 'auto/work'),
    'origin has auto/work',
  );
  t.same(landedOn(fixture.clone, 'auto/work', before).sort(), ['TASK-1', 'TASK-2'], 'each task landed exactly once');
  recoveredCleanly(t, fixture);
});

t.test('reset with --force drops a parked branch: discarded work never comes back through recovery', async (t) => {
  const control = tempDir(t, 'agent-runner-kill-');
  // Red for the tree with beta.txt while control/red exists: TASK-2 parks in the first drain only.
  const gates = `#!/bin/sh\nif [ -e beta.txt ] && [ -e ${control}/red ]; then echo "gate: red for beta" >&2; exit 1; fi\necho gate ok\n`;
  writeFileSync(path.join(control, 'red'), '');
  const fixture = drainFixture(t, TWO_TASKS, { gates, config: { maxParallel: 1, workBranchMode: 'reset' } });
  const base = git(fixture.clone, 'rev-parse', 'origin/main');
  const first = await runOrchestrate(fixture, ['--no-push']);
  t.equal(first.code, 0, first.stderr.slice(-800));
  t.same(landedOn(fixture.clone, 'auto/work', base), ['TASK-1'], 'TASK-1 landed, TASK-2 parked');
  const discardedLanding = git(fixture.clone, 'log', '--merges', '--format=%H', '-n', '1', 'auto/work');
  t.ok(git(fixture.clone, 'branch', '--list', 'auto/TASK-2'), 'the parked branch is kept for inspection');

  rmSync(path.join(control, 'red'));
  const second = await runOrchestrate(fixture, ['--no-push', '--force']);
  t.equal(second.code, 0, second.stderr.slice(-800));
  const notes = second.events.filter((event) => event.event === 'recovered').map((event) => String(event.detail));
  t.ok(
    notes.some((note) =>
      note.startsWith(
        'auto/TASK-2: grew from auto/work as it was before this drain reset it to the base; removed the branch',
      ),
    ),
    `the parked branch is dropped with the reset (${notes.join('; ')})`,
  );
  t.notOk(
    second.events.some((event) => event.event === 'recovered' && String(event.detail).includes('integrating it now')),
    'nothing is integrated from before the reset',
  );
  t.not(
    spawnSync('git', ['-C', fixture.clone, 'merge-base', '--is-ancestor', discardedLanding, 'auto/work']).status,
    0,
    'the discarded landing is not back on auto/work',
  );
  t.same(
    landedOn(fixture.clone, 'auto/work', base).sort(),
    ['TASK-1', 'TASK-2'],
    'both tasks ran again on the reset auto/work and landed once each',
  );
});
