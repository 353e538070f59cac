// Under a real systemd (systemd-nspawn): a whole dispatch runs in the
// container; its processes live in a transient scope with TasksMax,
// MemoryMax and CPUWeight from the registry: orchestrate as the runner, and
// the agent and the gate that root's launcher starts as their own uids, so
// the limits bind them too. After the run neither the unit nor any process
// of it (a setsid child included) nor of the three uids is left.
import t from 'tap';
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { systemTestMayRun } from '../helpers/system.js';
import { tempDir } from '../helpers/temp.js';
import { controlFixture } from '../helpers/control-fixture.js';
import { PROJECT_ROOT, waitFor } from '../helpers/drain-fixture.js';
import { bootContainer } from '../helpers/nspawn.js';
import { identityNames } from '../../src/identities.js';

t.test('dispatch under systemd: a transient scope with the limits, gone after the run', async (t) => {
  if (!systemTestMayRun(t, ['systemd-nspawn', 'nsenter', 'setpriv', 'useradd', 'git'])) return;
  // The gate says who it is and where it runs, into a folder every identity may write.
  const gateOut = tempDir(t, 'agent-runner-scope-gate-');
  chmodSync(gateOut, 0o777);
  const fixture = controlFixture(t, [{ id: 'TASK-1', title: 'One', status: 'To Do' }], {
    registryExtra: 'tasks_max = 300\nmemory_max = "2G"\ncpu_weight = 42\n',
    gates: `#!/bin/sh\n{ id -u; cat /proc/self/cgroup; } > '${gateOut}/gate'\n`,
  });
  const P = fixture.probeOut;
  // The agent waits while "hold" exists, leaving a setsid child behind first.
  writeFileSync(
    path.join(path.dirname(P), 'probe-agent.sh'),
    `#!/bin/sh
set -e
P='${P}'
setsid sleep 1000 </dev/null >/dev/null 2>&1 &
echo $! > "$P/setsid-pid"
echo $$ > "$P/pid-$AGENT_TASK_ID"
id -u > "$P/uid-$AGENT_TASK_ID"
while [ -e "$P/hold" ]; do sleep 0.2; done
file=$(grep -l "^id: $AGENT_TASK_ID$" backlog/tasks/*.md)
sed -i 's/^status: To Do$/status: Done/' "$file"
git add -A
git -c user.name=probe -c user.email=probe@example.invalid commit -q -m "$AGENT_TASK_ID done"
`,
    { mode: 0o755 },
  );
  writeFileSync(path.join(P, 'hold'), '');
  const fixtureRoot = path.dirname(P);
  const container = await bootContainer(t, {
    binds: [...new Set([fixtureRoot, gateOut, path.dirname(fixture.origin), path.dirname(fixture.clone)])],
    // node_modules may be a link out of the checkout (a worktree sharing one): mount its target too.
    bindsReadOnly: [...new Set([PROJECT_ROOT, realpathSync(path.join(PROJECT_ROOT, 'node_modules'))])].filter(
      (dir) => dir === PROJECT_ROOT || !dir.startsWith(`${PROJECT_ROOT}/`),
    ),
  });
  const env = Object.entries({ ...fixture.env, PATH: '/usr/local/bin:/usr/bin:/bin' }).map(
    ([key, value]) => `${key}=${value}`,
  );
  const dispatch = spawn(
    'nsenter',
    [
      '-t',
      String(container.pid),
      '-a',
      '/usr/bin/env',
      '-i',
      ...env,
      process.execPath,
      path.join(PROJECT_ROOT, 'bin', 'dispatch'),
      '--no-isolation',
      fixture.name,
      '--json',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stdout = '';
  let stderr = '';
  dispatch.stdout.on('data', (chunk) => (stdout += chunk));
  dispatch.stderr.on('data', (chunk) => (stderr += chunk));
  const done = new Promise<number | null>((resolve) => dispatch.on('close', resolve));
  t.teardown(() => {
    if (dispatch.exitCode === null) dispatch.kill('SIGKILL');
  });
  await waitFor(
    () => existsSync(path.join(P, 'pid-TASK-1')) || dispatch.exitCode !== null,
    60_000,
    'the agent to start',
  ).catch((error: Error) => {
    throw new Error(`${error.message}; dispatch stderr:\n${stderr}`);
  });
  const units = container
    .exec([
      'systemctl',
      'list-units',
      '--type=scope',
      '--all',
      '--no-legend',
      '--plain',
      `agent-runner-run-${fixture.name}_*`,
    ])
    .stdout.trim()
    .split('\n')
    .filter(Boolean);
  t.equal(units.length, 1, `one run scope: ${units.join(' | ')} ${stderr}`);
  const unit = units[0]!.split(/\s+/)[0]!;
  t.match(unit, new RegExp(`^agent-runner-run-${fixture.name}_\\d{8}T\\d{6,12}Z-[0-9a-f]+\\.scope$`));
  const show = container.exec([
    'systemctl',
    'show',
    unit,
    '-p',
    'TasksMax',
    '-p',
    'MemoryMax',
    '-p',
    'CPUWeight',
    '-p',
    'ActiveState',
    '-p',
    'IPAddressDeny',
  ]).stdout;
  t.match(show, /^TasksMax=300$/m);
  t.match(show, /^MemoryMax=2147483648$/m);
  t.match(show, /^CPUWeight=42$/m);
  t.match(show, /^ActiveState=active$/m);
  t.match(show, /^IPAddressDeny=/m);
  // Root's launcher, not orchestrate, started the agent, as the agent's own uid: it and the child it detached with
  // setsid are both in the scope's cgroup all the same (pids as the container sees them).
  const uidIn = (user: string) => container.exec(['id', '-u', user]).stdout.trim();
  const names = identityNames(fixture.user);
  const agentUid = uidIn(names.agent);
  t.equal(readFileSync(path.join(P, 'uid-TASK-1'), 'utf8').trim(), agentUid, 'the agent ran as the agent identity');
  const agentPid = readFileSync(path.join(P, 'pid-TASK-1'), 'utf8').trim();
  const setsidPid = readFileSync(path.join(P, 'setsid-pid'), 'utf8').trim();
  for (const pid of [agentPid, setsidPid]) {
    const status = container.exec(['cat', `/proc/${pid}/status`]).stdout;
    t.match(status, new RegExp(`^Uid:\\s+${agentUid}\\s`, 'm'), `pid ${pid} is the agent's`);
    const cgroup = container.exec(['cat', `/proc/${pid}/cgroup`]).stdout;
    t.match(cgroup, `/${unit}`, `pid ${pid} runs in the scope`);
  }
  rmSync(path.join(P, 'hold'));
  const code = await done;
  t.equal(code, 0, stderr);
  const record = JSON.parse(stdout) as { outcome: string; confinement: Record<string, unknown> };
  t.equal(record.outcome, 'drained');
  t.match(record.confinement, { kind: 'systemd-scope', unit, tasksMax: 300, memoryMax: 2 * 1024 ** 3, cpuWeight: 42 });
  const after = container.exec(['systemctl', 'show', unit, '-p', 'LoadState', '-p', 'ActiveState']).stdout;
  t.match(after, /^ActiveState=inactive$/m, `the unit is gone: ${after}`);
  t.match(after, /^LoadState=not-found$/m);
  const left = container
    .exec(['sh', '-c', `test -d /proc/${setsidPid} && grep State /proc/${setsidPid}/status || echo gone`])
    .stdout.trim();
  t.equal(left, 'gone', 'the setsid child is gone');
  // The gate, started by root's launcher as the gate's uid, ran in the scope too.
  const gate = readFileSync(path.join(gateOut, 'gate'), 'utf8');
  t.match(gate, new RegExp(`^${uidIn(names.gate)}\n`), `the gate ran as the gate identity: ${gate}`);
  t.match(gate, `/${unit}`, 'the gate ran in the scope');
  for (const user of [fixture.user, names.agent, names.gate]) {
    const left = container.exec(['pgrep', '-U', user]).stdout.trim();
    t.equal(left, '', `no process of ${user} is left in the container`);
  }

  // The launch socket (fd 3) through dispatch's whole chain under systemd: systemd-run --scope, setpriv, env -i.
  const dist = path.join(PROJECT_ROOT, 'dist', 'src');
  const runner = path.join(fixtureRoot, 'fd3-runner.mjs');
  writeFileSync(
    runner,
    `import { openChannelOnFd } from '${dist}/io/line-channel.js';
import { readFileSync } from 'node:fs';
const channel = openChannelOnFd(3);
channel.onLine((line) => { process.stdout.write(line + '\\n'); channel.close(); });
channel.send('ping uid=' + process.getuid() + ' ' + readFileSync('/proc/self/cgroup', 'utf8').trim().split('\\n').join(' '));
`,
    { mode: 0o644 },
  );
  const root = path.join(fixtureRoot, 'fd3-root.mjs');
  writeFileSync(
    root,
    `import { realProcess } from '${dist}/io/real-ports.js';
import { confineCommand, confinementFor } from '${dist}/control/dispatch/index.js';
import { dropPrivileges } from '${dist}/control/repo-user/index.js';
const user = { uid: Number(process.argv[2]), gid: Number(process.argv[3]) };
const limits = { tasksMax: 64, memoryMax: 1024 ** 3, cpuWeight: 100 };
const command = confineCommand(
  dropPrivileges(user, { program: process.execPath, args: ['${runner}'], env: { PATH: '/usr/bin:/bin' }, cwd: '/' }),
  confinementFor(true, 'fdcheck', 'r1', limits),
);
const child = realProcess.start(command, { onStdoutLine: (l) => console.log('runner: ' + l), onStderrLine: (l) => console.log('runner err: ' + l) }, { channel: true });
child.channel.onLine((line) => { console.log('root got: ' + line); child.channel.send('pong'); });
console.log('exit ' + JSON.stringify(await child.exited));
`,
    { mode: 0o644 },
  );
  const uid = container.exec(['id', '-u', fixture.user]).stdout.trim();
  const gid = container.exec(['id', '-g', fixture.user]).stdout.trim();
  const fd3 = container.exec([process.execPath, root, uid, gid]);
  t.match(
    fd3.stdout,
    new RegExp(`^root got: ping uid=${uid} .*agent-runner-run-fdcheck_r1\\.scope$`, 'm'),
    fd3.stdout + fd3.stderr,
  );
  t.match(fd3.stdout, /^runner: pong$/m, "and the runner got root's answer");
  t.match(fd3.stdout, /^exit \{"exitCode":0,"signal":null\}$/m);
});
