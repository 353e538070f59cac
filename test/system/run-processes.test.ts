// A run's processes, as root: forged agent records (in the runner's state,
// which only the runner can write: the agent cannot even reach it) never make
// root signal anything that is not the repo's; whatever the run leaves (the
// agent's setsid children and double-forked daemons) is gone when dispatch
// returns and after a watcher's recovery, for the runner's, the agent's and
// the gate's uids; the run's limits (rlimits here: systemd is not PID 1) bind
// the agent's uid, and the run still ends with nothing left.
import t from 'tap';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { systemTestMayRun } from '../helpers/system.js';
import { controlFixture, createUser, runBin, startBin, type ControlFixture } from '../helpers/control-fixture.js';
import { waitFor } from '../helpers/drain-fixture.js';
import { uniqueName } from '../helpers/netns.js';
import { identityNames } from '../../src/identities.js';
import { processesOfUid, running, startSleeper, startTimeOf } from '../helpers/user-processes.js';

const uidOf = (user: string) => Number(execFileSync('id', ['-u', user], { encoding: 'utf8' }).trim());

/** The uids of a repo's three identities, by the runner's name. */
function identityUids(runner: string): { runner: number; agent: number; gate: number } {
  const names = identityNames(runner);
  return { runner: uidOf(names.runner), agent: uidOf(names.agent), gate: uidOf(names.gate) };
}

/** Runs `script` with /bin/sh as the runner, with its own HOME, as a compromised runner could. */
function asRunner(fixture: ControlFixture, script: string) {
  return spawnSync(
    'setpriv',
    [
      '--reuid',
      fixture.user,
      '--regid',
      fixture.user,
      '--init-groups',
      '--',
      '/usr/bin/env',
      '-i',
      `HOME=${runnerHome(fixture)}`,
      'PATH=/usr/bin:/bin',
      'sh',
      '-c',
      script,
    ],
    { encoding: 'utf8', cwd: '/' },
  );
}

const runnerHome = (fixture: ControlFixture) => path.join(path.dirname(fixture.probeOut), 'home');

/** Replaces the fixture's agent with `script` (run by /bin/sh as the repo's agent identity). */
function useAgent(fixture: ControlFixture, script: string): void {
  writeFileSync(path.join(path.dirname(fixture.probeOut), 'probe-agent.sh'), script, { mode: 0o755 });
}

const MARK_DONE = `file=$(grep -l "^id: $AGENT_TASK_ID$" backlog/tasks/*.md)
sed -i 's/^status: To Do$/status: Done/' "$file"
git add -A
git -c user.name=probe -c user.email=probe@example.invalid commit -q -m "$AGENT_TASK_ID done"
`;

/** Writes agent records naming the two targets into every agents/ dir of the runner's state, as the runner can. */
const FORGE = `set -e
found=
for dir in "$HOME"/.agent-runner/workspaces/*/agents; do
  test -d "$dir"
  found=1
  printf '{"pid":%s,"startTime":"%s","taskId":"TASK-8"}\\n' $(cat "$P/root-target") > "$dir/TASK-8.json"
  printf '{"pid":%s,"startTime":"%s","taskId":"TASK-9"}\\n' $(cat "$P/other-target") > "$dir/TASK-9.json"
done
test -n "$found"
`;

/**
 * The agent tries the runner's state (refused: it cannot even reach the runner's home), then waits while the test
 * forges the records as the runner.
 */
const AGENT_TRIES_AND_WAITS = `id -u > "$P/agent-uid"
if printf x 2>/dev/null > "$RUNNER_HOME/.agent-runner/forged-by-agent"; then echo written; else echo refused; fi > "$P/agent-forge"
touch "$P/agent-ready"
while [ ! -e "$P/forged" ]; do sleep 0.1; done
`;

/** A setsid child and a double-forked daemon in its own session: both escape the agent's process group. */
const LEAVE_BEHIND = `setsid sleep 1000 </dev/null >/dev/null 2>&1 &
echo $! > "$P/setsid-pid"
setsid sh -c 'sh -c "echo \\$\\$ > $1/daemon-pid; exec sleep 1001" </dev/null >/dev/null 2>&1 &' sh "$P" </dev/null >/dev/null 2>&1
while [ ! -s "$P/daemon-pid" ]; do sleep 0.05; done
`;

t.test('forged agent records: root signals nothing of theirs; the run leaves nothing behind', async (t) => {
  if (!systemTestMayRun(t, ['setpriv', 'useradd', 'git', 'prlimit', 'kill'])) return;
  const fixture = controlFixture(t, [{ id: 'TASK-1', title: 'One', status: 'To Do' }]);
  const P = fixture.probeOut;
  useAgent(
    fixture,
    `#!/bin/sh\nset -e\nP='${P}'\nRUNNER_HOME='${runnerHome(fixture)}'\n${AGENT_TRIES_AND_WAITS}${LEAVE_BEHIND}${MARK_DONE}`,
  );
  // The targets: a root process and another repo's agent, with their real identities.
  const rootSleep = startSleeper(t);
  const other = uniqueName('agent-o');
  const otherHome = path.join(path.dirname(P), 'other-home');
  createUser(t, other, otherHome, 'other');
  const otherSleep = startSleeper(t, other);
  await waitFor(
    () =>
      existsSync(`/proc/${otherSleep}`) &&
      uidOf(other) === Number(/^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${otherSleep}/status`, 'utf8'))?.[1]),
    5_000,
    "the other user's sleep to drop",
  );
  writeFileSync(path.join(P, 'root-target'), `${rootSleep} ${startTimeOf(rootSleep)}\n`);
  writeFileSync(path.join(P, 'other-target'), `${otherSleep} ${startTimeOf(otherSleep)}\n`);
  const ids = identityUids(fixture.user);

  const dispatch = startBin(fixture, 'dispatch', ['--no-isolation', fixture.name, '--json']);
  t.teardown(() => {
    if (dispatch.child.exitCode === null) dispatch.child.kill('SIGKILL');
  });
  await waitFor(
    () => existsSync(path.join(P, 'agent-ready')) || dispatch.child.exitCode !== null,
    60_000,
    'the agent to start',
  );
  t.equal(Number(readFileSync(path.join(P, 'agent-uid'), 'utf8')), ids.agent, 'the agent ran as the agent identity');
  t.equal(
    readFileSync(path.join(P, 'agent-forge'), 'utf8').trim(),
    'refused',
    "the agent cannot write the runner's state",
  );
  t.notOk(existsSync(path.join(runnerHome(fixture), '.agent-runner', 'forged-by-agent')));
  // The runner's records of the running drain, forged mid-run as the runner itself could.
  const forged = asRunner(fixture, `P='${P}'\n${FORGE}`);
  t.equal(forged.status, 0, `the runner forged its agent records: ${forged.stderr}`);
  writeFileSync(path.join(P, 'forged'), '');
  const result = await dispatch.done;
  t.equal(result.code, 0, result.stderr);
  const record = JSON.parse(result.stdout) as {
    outcome: string;
    confinement: Record<string, unknown>;
    leftovers: { found: number; survivors: unknown[] };
  };
  t.equal(record.outcome, 'drained');
  t.match(
    record.confinement,
    { kind: 'rlimits', tasksMax: 1024, memoryMax: 8 * 1024 ** 3, cpuWeight: 100 },
    'no systemd here: rlimits',
  );
  t.ok(
    existsSync(path.join(P, 'setsid-pid')) && existsSync(path.join(P, 'daemon-pid')),
    'the agent left a setsid child and a daemon',
  );
  const setsidPid = Number(readFileSync(path.join(P, 'setsid-pid'), 'utf8'));
  const daemonPid = Number(readFileSync(path.join(P, 'daemon-pid'), 'utf8'));
  t.ok(record.leftovers.found >= 2, `the sweep found the leftovers (${JSON.stringify(record.leftovers)})`);
  t.same(record.leftovers.survivors, []);
  t.notOk(running(setsidPid), 'the setsid child is gone');
  t.notOk(running(daemonPid), 'the double-forked daemon is gone');
  for (const [identity, uid] of Object.entries(ids))
    t.same(processesOfUid(uid), [], `no process of the repo's ${identity} remains`);
  t.ok(running(rootSleep), 'the root process named in a forged record still runs');
  t.ok(running(otherSleep), "another repo's process named in a forged record still runs");
  t.match(result.stderr, /"event":"leftovers-ended"/);

  await t.test("the repo user cannot reach root's run records", async (t) => {
    const repoState = path.join(fixture.state, 'repos', fixture.name);
    for (const user of [fixture.user, identityNames(fixture.user).agent]) {
      const asUser = (...command: string[]) =>
        spawnSync('setpriv', ['--reuid', user, '--regid', user, '--init-groups', '--', ...command], {
          encoding: 'utf8',
          cwd: '/',
        });
      const forged = asUser('sh', '-c', `echo '{"status":"running"}' > ${path.join(repoState, 'runs', 'forged.json')}`);
      t.not(forged.status, 0, `writing a run record is refused to ${user}`);
      t.match(forged.stderr, /Permission denied/);
      t.not(asUser('ls', fixture.state).status, 0, `$STATE is closed to ${user}`);
    }
    const mode = (dir: string) => Number(execFileSync('stat', ['-c', '%a', dir], { encoding: 'utf8' }).trim());
    t.equal(
      mode(fixture.state) % 10,
      0,
      '$STATE: nothing for others (0750 once provision host gave Squid its group, 0700 before)',
    );
    t.equal(mode(path.join(fixture.state, 'repos')), 700);
    t.equal(mode(repoState), 700);
    t.equal(mode(path.join(repoState, 'runs')), 700);
  });

  await t.test('watcher recovery after a crashed run: the user sweep, never the records', async (t) => {
    // The crashed runner's trace: a run still marked running whose recorded
    // process is the root sleep (the old recovery signalled that group).
    const runId = '20000101T000000Z-000abc';
    writeFileSync(
      path.join(fixture.state, 'repos', fixture.name, 'runs', `${runId}.json`),
      JSON.stringify({
        id: runId,
        repo: fixture.name,
        trigger: 'watch',
        user: fixture.user,
        args: ['--drain'],
        status: 'running',
        startedAt: '2000-01-01T00:00:00.000Z',
        process: { pid: rootSleep, startTime: startTimeOf(rootSleep) },
      }),
    );
    // What the agent and the runner left, and records forged again by the runner.
    const names = identityNames(fixture.user);
    const leftovers = [startSleeper(t, names.agent), startSleeper(t, fixture.user)];
    const forge = asRunner(fixture, `P='${P}'\n${FORGE}`);
    t.equal(forge.status, 0, forge.stderr);
    await waitFor(
      () => processesOfUid(ids.agent).length === 1 && processesOfUid(ids.runner).length === 1,
      5_000,
      'the leftovers to run as the agent and the runner',
    );
    const watch = startBin(fixture, 'watch', ['--no-isolation', fixture.name]);
    t.teardown(() => {
      if (watch.child.exitCode === null) watch.child.kill('SIGKILL');
    });
    let log = '';
    watch.child.stderr!.on('data', (chunk) => (log += chunk));
    await waitFor(() => /"event":"watching"/.test(log), 30_000, 'the watcher to recover and start');
    watch.child.kill('SIGTERM');
    await watch.done;
    const events = log
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    t.match(
      events.find((event) => event.event === 'leftovers-ended'),
      { runs: [runId], found: 2, killed: false, survivors: [] },
    );
    t.match(
      events.find((event) => event.event === 'run-interrupted'),
      { runId },
    );
    for (const leftover of leftovers) t.notOk(running(leftover), `leftover ${leftover} is gone`);
    for (const [identity, uid] of Object.entries(ids)) t.same(processesOfUid(uid), [], `nothing of the ${identity}`);
    t.ok(running(rootSleep), 'the root process in the run record and the forged records still runs');
    t.ok(running(otherSleep), "another repo's process still runs");
  });
});

t.test('run limits: tasks and memory bind the agent; the run ends; nothing survives', async (t) => {
  if (!systemTestMayRun(t, ['setpriv', 'useradd', 'git', 'prlimit', 'kill', 'node'])) return;
  const fixture = controlFixture(t, [{ id: 'TASK-1', title: 'One', status: 'To Do' }], {
    registryExtra: 'tasks_max = 40\nmemory_max = "1G"\n',
  });
  const P = fixture.probeOut;
  useAgent(
    fixture,
    `#!/bin/sh
P='${P}'
# A later attempt of the task (this one never finishes it) finds the first one's sleeps: only the first measures.
if [ -e "$P/uid" ]; then exit 0; fi
id -u > "$P/uid"
cat /proc/self/limits > "$P/limits"
node -e 'try { Buffer.alloc(1536 * 1024 * 1024, 1); console.log("allocated") } catch (e) { console.log("refused: " + e.message) }' > "$P/alloc" 2>&1
setsid sleep 1000 </dev/null >/dev/null 2>&1 &
node -e '
const { spawn } = require("node:child_process");
let started = 0, failed = 0;
const codes = new Set();
for (let i = 0; i < 200; i++) {
  const child = spawn("sleep", ["1000"], { stdio: "ignore", detached: true });
  child.on("error", (error) => codes.add(error.code));
  if (child.pid) started++; else failed++;
  child.unref();
}
setImmediate(() => require("node:fs").writeFileSync(process.argv[1] + "/forks", [started, failed, [...codes].join(",")].join(" ") + "\\n"));
' "$P" 2> "$P/forks-stderr"
exit 0
`,
  );
  const ids = identityUids(fixture.user);
  const startedAt = Date.now();
  const result = await runBin(fixture, 'dispatch', ['--no-isolation', fixture.name, '--json']);
  t.ok(Date.now() - startedAt < 120_000, 'the run ended');
  const record = JSON.parse(result.stdout) as {
    confinement: Record<string, unknown>;
    leftovers: { survivors: unknown[] };
  };
  t.match(record.confinement, { kind: 'rlimits', tasksMax: 40, memoryMax: 1024 ** 3 });
  // Root's launcher, not orchestrate, starts the agent: the limits must reach it there, on the agent's own uid.
  t.equal(Number(readFileSync(path.join(P, 'uid'), 'utf8')), ids.agent, 'the agent ran as the agent identity');
  const limits = readFileSync(path.join(P, 'limits'), 'utf8');
  t.match(limits, /^Max processes\s+40\s+40\s+processes/m, 'RLIMIT_NPROC as the agent sees it');
  t.match(limits, /^Max data size\s+1073741824\s+1073741824\s+bytes/m, 'RLIMIT_DATA as the agent sees it');
  t.match(readFileSync(path.join(P, 'alloc'), 'utf8'), /^refused: /, 'a 1.5 GiB allocation fails under the 1 GiB cap');
  const [started, failed, codes] = readFileSync(path.join(P, 'forks'), 'utf8').trim().split(' ') as [
    string,
    string,
    string?,
  ];
  t.ok(Number(started) > 0 && Number(started) < 40, `some, at most the limit, started (${started})`);
  t.ok(Number(failed) > 160, `the rest failed to fork (${failed})`);
  t.equal(codes, 'EAGAIN', 'they failed for the task limit (EAGAIN), nothing else');
  t.same(record.leftovers.survivors, []);
  for (const [identity, uid] of Object.entries(ids))
    t.same(processesOfUid(uid), [], `nothing of the run survives (${identity})`);
});
