// Nothing an agent starts outlives its run when systemd is not PID 1 (here,
// and in containers and CI): a real dispatch as root whose agent leaves a
// `setsid sleep 600` (also one that keeps the agent's stdout open, as an
// agent would write it), a double-forked daemon, a process that ignores
// SIGTERM, one that forks in a loop while the sweep runs, one that forks
// and exits in a loop (at a new pid each time, so no /proc scan sees it),
// and a process whose main thread has exited while another thread runs (its
// /proc entry says zombie). After dispatch returns, the repo user is frozen
// (kill -STOP -1 as the user) and /proc must show none of its processes,
// and no leftover's heartbeat file may move. Control: each leftover, started
// the same way outside dispatch, does outlive the shell that started it.
import t from 'tap';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { systemTestMayRun } from '../helpers/system.js';
import { controlFixture, runBin } from '../helpers/control-fixture.js';
import { waitFor } from '../helpers/drain-fixture.js';
import { processesOfUid, running } from '../helpers/user-processes.js';

const uidOf = (user: string) => Number(execFileSync('id', ['-u', user], { encoding: 'utf8' }).trim());

/**
 * The leftovers, one per kind, each in its own session with its standard
 * streams closed, and each touching P/beat-KIND while it runs (the hopper
 * from every generation, the threaded one from its live thread).
 */
const LEAVE = String.raw`
import os, signal, sys, threading, time
kind, P = sys.argv[1], sys.argv[2]
beat = os.path.join(P, "beat-" + kind)
def touch():
    with open(beat, "a"):
        pass
    os.utime(beat)
def detach():
    # The double fork: the first child leads a new session, the second is reparented to init.
    if os.fork():
        os._exit(0)
    os.setsid()
    if os.fork():
        os._exit(0)
    with open(os.path.join(P, "pid-" + kind), "w") as f:
        f.write(str(os.getpid()))
detach()
if kind == "daemon":
    while True:
        touch(); time.sleep(0.1)
if kind == "ignores-term":
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    while True:
        touch(); time.sleep(0.1)
if kind == "fork-loop":
    # Forks a child every 20 ms for as long as it lives, also while the sweep runs; children ignore TERM too.
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    while True:
        try:
            if os.fork() == 0:
                while True:
                    touch(); time.sleep(0.5)
        except OSError:
            pass
        time.sleep(0.02)
if kind == "hopper":
    # Each generation forks the next and exits: never at the same pid for more than 5 ms.
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    while True:
        touch(); time.sleep(0.005)
        if os.fork():
            os._exit(0)
if kind == "threads":
    def run():
        while True:
            touch(); time.sleep(0.1)
    threading.Thread(target=run).start()
    time.sleep(0.2)
    # The main thread ends alone: /proc/PID/status says "Z (zombie)" while the other thread runs on.
    import ctypes
    ctypes.CDLL(None).pthread_exit(None)
`;

/** How the agent (a shell) leaves each kind behind. */
function leaveCommand(kind: string, P: string): string {
  if (kind === 'setsid') return `setsid sleep 600 </dev/null >/dev/null 2>&1 &\necho $! > '${P}/pid-setsid'\n`;
  // As an agent writes it: the sleep keeps the agent's stdout and stderr open.
  if (kind === 'setsid-holding-output') return `setsid sleep 90 &\necho $! > '${P}/pid-${kind}'\n`;
  return `/usr/bin/python3 '${P}/leave.py' ${kind} '${P}' </dev/null >/dev/null 2>&1\nwhile [ ! -s '${P}/pid-${kind}' ]; do sleep 0.05; done\n`;
}

const KINDS = ['setsid', 'setsid-holding-output', 'daemon', 'ignores-term', 'fork-loop', 'hopper', 'threads'] as const;
/** Kinds that do not beat: a plain sleep, seen by its pid. */
const SLEEPS: readonly string[] = ['setsid', 'setsid-holding-output'];

const MARK_DONE = `file=$(grep -l "^id: $AGENT_TASK_ID$" backlog/tasks/*.md)
sed -i 's/^status: To Do$/status: Done/' "$file"
git add -A
git -c user.name=probe -c user.email=probe@example.invalid commit -q -m "$AGENT_TASK_ID done"
`;

/** Runs `command` as `user`, the way root drops to it, and waits for it (not for what it leaves). */
function asUser(user: string, ...command: string[]) {
  return spawnSync(
    'setpriv',
    [`--reuid=${user}`, `--regid=${user}`, '--init-groups', '--', '/usr/bin/env', '-i', ...command],
    { cwd: '/', stdio: 'ignore' },
  );
}

/** A user's processes with every one of them stopped first, so none can move while /proc is read. */
function frozenProcesses(user: string): string[] {
  asUser(user, 'PATH=/usr/bin:/bin', 'kill', '-STOP', '--', '-1');
  return processesOfUid(uidOf(user));
}

const mtime = (file: string) => (existsSync(file) ? statSync(file).mtimeMs : undefined);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Whether the leftover of `kind` still runs: its beat moves (or, for the plain sleep, its pid lives). */
async function stillRuns(P: string, kind: string): Promise<boolean> {
  if (SLEEPS.includes(kind)) return running(Number(readFileSync(path.join(P, `pid-${kind}`), 'utf8')));
  const before = mtime(path.join(P, `beat-${kind}`));
  await sleep(1_000);
  return before !== undefined && mtime(path.join(P, `beat-${kind}`)) !== before;
}

for (const kind of KINDS) {
  t.test(`${kind}: nothing of it survives a dispatch outside systemd`, async (t) => {
    if (!systemTestMayRun(t, ['setpriv', 'useradd', 'git', 'prlimit', 'kill', 'setsid', 'python3'])) return;
    // The agent's commands run under the run's RLIMIT_NPROC (per uid), and where PID 1 is slow to reap orphans the
    // hopper's exited generations count against it for a while: room enough that the sweep, not the limit, ends it.
    const fixture = controlFixture(t, [{ id: 'TASK-1', title: 'One', status: 'To Do' }], {
      registryExtra: 'tasks_max = 4096\n',
    });
    const P = fixture.probeOut;
    writeFileSync(path.join(P, 'leave.py'), LEAVE, { mode: 0o644 });
    // The agent leaves it: the repo's agent identity, whose processes the run's end sweep must end.
    const agent = `${fixture.user}-agent`;
    const uid = uidOf(agent);

    // Control: started the same way, but not by a run, the leftover outlives the shell that started it.
    const started = asUser(agent, 'PATH=/usr/bin:/bin', 'setsid', '-w', 'sh', '-c', leaveCommand(kind, P));
    t.equal(started.status, 0, 'the leftover was started');
    t.ok(await stillRuns(P, kind), `control: the ${kind} leftover runs on after its shell returned`);
    asUser(agent, 'PATH=/usr/bin:/bin', 'kill', '-KILL', '--', '-1');
    await waitFor(() => processesOfUid(uid).length === 0, 5_000, 'the control leftover to be killed');
    for (const file of [`pid-${kind}`, `beat-${kind}`]) spawnSync('rm', ['-f', path.join(P, file)]);

    writeFileSync(
      path.join(path.dirname(P), 'probe-agent.sh'),
      `#!/bin/sh\nset -e\n${leaveCommand(kind, P)}${MARK_DONE}`,
      { mode: 0o755 },
    );
    const startedAt = Date.now();
    const result = await runBin(fixture, 'dispatch', ['--no-isolation', fixture.name, '--json']);
    const tookMs = Date.now() - startedAt;
    const beats = SLEEPS.includes(kind) ? false : await stillRuns(P, kind);
    const left = [...frozenProcesses(agent), ...frozenProcesses(fixture.user)];
    t.equal(result.code, 0, result.stderr);
    const record = JSON.parse(result.stdout) as {
      outcome: string;
      confinement: { kind: string };
      leftovers: { found: number; survivors: unknown[]; summary: string };
    };
    t.equal(record.confinement.kind, 'rlimits', 'systemd is not PID 1 here');
    t.equal(record.outcome, 'drained');
    t.ok(existsSync(path.join(P, `pid-${kind}`)), `the agent left the ${kind} leftover (${record.leftovers.summary})`);
    t.same(left, [], 'no process of the agent or the runner is left, frozen and read from /proc');
    t.same(record.leftovers.survivors, [], 'the run record says none survived');
    t.ok(record.leftovers.found >= 1, `the sweep met the leftover: ${record.leftovers.summary}`);
    t.comment(`${kind}: dispatch took ${tookMs} ms; ${record.leftovers.summary}`);
    if (!SLEEPS.includes(kind)) t.notOk(beats, `no heartbeat of ${kind} after dispatch returned`);
    else t.notOk(await stillRuns(P, kind), 'the setsid sleep is gone');
    // A leftover holding the agent's output must not hold the task until it ends (90 s for that sleep).
    t.ok(tookMs < 60_000, `dispatch returned after ${tookMs} ms`);
  });
}
