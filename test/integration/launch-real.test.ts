// The launch socket with real processes: root (this test) starts a real node runner with { channel: true }; the
// runner asks, over its fd 3, for /bin/echo, a shell that reports who and where it is, and a long sleep it then
// signals. First as one user (the launched commands run after `env -i`, as here); then, as root, the way dispatch
// does it: the runner dropped by setpriv under prlimit (fd 3 must survive both and `env -i`), its commands dropped by
// setpriv to a throwaway agent user, and a request as an identity the run does not offer.
import t from 'tap';
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { connect, createServer, type Socket } from 'node:net';
import { realProcess } from '../../src/io/real-ports.js';
import { socketChannel } from '../../src/io/line-channel.js';
import { confineCommand, serveLaunches, type LaunchAccount } from '../../src/control/dispatch/index.js';
import { dropPrivileges, forcedLaunchEnvironment, type UserAccount } from '../../src/control/repo-user/index.js';
import type { LaunchedIdentity } from '../../src/identities.js';
import type { ProcessPort } from '../../src/ports.js';
import type { Command } from '../../src/types.js';
import { tempDir } from '../helpers/temp.js';
import { PROJECT_ROOT } from '../helpers/drain-fixture.js';
import { testUser } from '../helpers/netns.js';
import { missingTools, skipWithReason } from '../helpers/system.js';

const DIST = path.join(PROJECT_ROOT, 'dist', 'src');

/** The runner: one JSON line on stdout per step. */
const RUNNER = `
import { openChannelOnFd } from '${DIST}/io/line-channel.js';
import { remoteLauncher } from '${DIST}/launch/index.js';
const mode = process.argv[2];
const cwd = process.argv[3];
const channel = openChannelOnFd(3);
const launcher = remoteLauncher(channel, { which: async () => undefined, startTimeOf: async () => undefined });
const agent = launcher.processFor('agent');
const say = (step, value) => process.stdout.write(JSON.stringify({ step, value }) + '\\n');
const base = { env: { PATH: '/usr/bin:/bin', HOME: '/root', USER: 'root', https_proxy: 'http://evil:1' }, cwd };
async function started(child) {
  while (child.pid === 0) await new Promise((resolve) => setTimeout(resolve, 10));
  return child.pid;
}
const quiet = { onStdoutLine: () => {}, onStderrLine: () => {} };
if (mode === 'abandon') {
  const sleep = agent.start({ ...base, program: '/bin/sleep', args: ['600'] }, quiet);
  say('sleep', await started(sleep));
  process.exit(0);
}
say('echo', await agent.run({ ...base, program: '/bin/echo', args: ['hello', 'launcher'] }));
say('who', await agent.run({
  ...base,
  program: '/bin/sh',
  args: ['-c', 'set -- $(cat /proc/$$/stat); echo "uid=$(id -u) pid=$1 pgid=$5 sid=$6 tty=$7 home=$HOME user=$USER proxy=\${https_proxy:-none} pwd=$(pwd)"; readlink /proc/$$/fd/0'],
}));
const sleep = agent.start({ ...base, program: '/bin/sleep', args: ['600'] }, quiet);
const pid = await started(sleep);
sleep.signalGroup('SIGTERM');
say('sleep', { pid, exit: await sleep.exited });
say('gate', await launcher.processFor('gate').run({ ...base, program: '/bin/echo', args: ['as the gate'] }));
channel.close();
`;

interface Step {
  readonly step: string;
  readonly value: unknown;
}

/** Runs the runner under `wrap` (root's command for it), serving its launches; its steps and stderr. */
async function runRunner(
  dir: string,
  wrap: (command: Command) => Command,
  process: ProcessPort,
  identities: ReadonlyMap<LaunchedIdentity, LaunchAccount>,
  mode: 'steps' | 'abandon',
  cwd: string,
) {
  const script = path.join(dir, 'runner.mjs');
  writeFileSync(script, RUNNER, { mode: 0o644 });
  const steps: Step[] = [];
  const stderr: string[] = [];
  const child = realProcess.start(
    wrap({ program: globalThis.process.execPath, args: [script, mode, cwd], env: { PATH: '/usr/bin:/bin' }, cwd: '/' }),
    { onStdoutLine: (line) => steps.push(JSON.parse(line) as Step), onStderrLine: (line) => stderr.push(line) },
    { channel: true },
  );
  if (!child.channel) throw new Error('no channel');
  const service = serveLaunches({ process }, child.channel, identities);
  const exit = await child.exited;
  return { steps, stderr, exit, service };
}

const stepOf = (steps: readonly Step[], name: string) => steps.find((step) => step.step === name)?.value;
const alive = (pid: number) =>
  existsSync(`/proc/${pid}`) && !/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, 'utf8'));

async function gone(pid: number, ms = 5_000): Promise<boolean> {
  for (const end = Date.now() + ms; Date.now() < end;) {
    if (!alive(pid)) return true;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return false;
}

/** Root's process port as one user: the dropped command without its setpriv (from `env -i` on, as it is). */
const sameUser: ProcessPort = {
  ...realProcess,
  start(command, handlers, options) {
    const args = command.args.slice(command.args.indexOf('--') + 1);
    return realProcess.start({ ...command, program: args[0]!, args: args.slice(1) }, handlers, options);
  },
};

t.test('as one user: echo, a shell, a sleep signalled, all over the real socket', async (t) => {
  const dir = tempDir(t);
  const me: UserAccount = { name: 'me', uid: process.getuid!(), gid: process.getgid!(), home: dir, shell: '/bin/sh' };
  const identities = new Map([['agent', { account: me, env: forcedLaunchEnvironment('agent', me, 3128) }] as const]);
  const { steps, stderr, exit } = await runRunner(dir, (command) => command, sameUser, identities, 'steps', dir);
  t.same(exit, { exitCode: 0, signal: null }, `the runner ended well (${stderr.join('\n')})`);
  t.same(stepOf(steps, 'echo'), { exitCode: 0, signal: null, stdout: 'hello launcher\n', stderr: '' });
  t.match(stepOf(steps, 'who'), {
    exitCode: 0,
    stdout: new RegExp(`home=${dir} user=me proxy=http://127.0.0.1:3128 pwd=${dir}\n/dev/null\n$`),
  });
  t.match(stepOf(steps, 'sleep'), { pid: Number, exit: { exitCode: null, signal: 'SIGTERM' } });
  t.match(stepOf(steps, 'gate'), { exitCode: 126, stderr: /does not launch commands as the gate/ });
});

t.test('as root: the runner through prlimit and setpriv, its commands as a throwaway agent user', async (t) => {
  if (process.getuid?.() !== 0) {
    process.stderr.write('SKIP launch-real as root: needs root (setpriv to another user, useradd)\n');
    skipWithReason(t, 'needs root', 'the launch as another user needs root (setpriv, useradd)');
    return;
  }
  const missing = missingTools(['setpriv', 'prlimit', 'useradd']);
  if (missing.length) {
    skipWithReason(t, 'missing tools', `missing ${missing.join(', ')}`);
    return;
  }
  const dir = tempDir(t);
  chmodSync(dir, 0o755);
  const runnerUser = testUser(t);
  const agentUser = testUser(t);
  const account = (user: typeof agentUser): UserAccount => ({ ...user, shell: '/bin/bash' });
  const identities = new Map([
    [
      'agent',
      { account: account(agentUser), env: forcedLaunchEnvironment('agent', account(agentUser), 3128) },
    ] as const,
  ]);
  const asRunner = (command: Command) =>
    confineCommand(dropPrivileges(account(runnerUser), command, { parentDeathSignal: 'SIGTERM' }), {
      kind: 'rlimits',
      limits: { tasksMax: 512, memoryMax: 8 * 1024 ** 3, cpuWeight: 100 },
    });
  t.equal(asRunner({ program: 'x', args: [], env: {}, cwd: '/' }).program, 'prlimit', 'the chain starts with prlimit');

  const { steps, stderr, exit } = await runRunner(dir, asRunner, realProcess, identities, 'steps', agentUser.home);
  t.same(exit, { exitCode: 0, signal: null }, `the runner ended well (${stderr.join('\n')})`);
  t.same(stepOf(steps, 'echo'), { exitCode: 0, signal: null, stdout: 'hello launcher\n', stderr: '' });
  const who = stepOf(steps, 'who') as { stdout: string };
  const fields = Object.fromEntries(
    (who.stdout.split('\n')[0] ?? '').split(' ').map((word) => word.split('=') as [string, string]),
  );
  t.equal(fields.uid, String(agentUser.uid), 'ran as the agent user');
  t.equal(fields.sid, fields.pid, 'in a session of its own (it leads it: setsid, then setpriv and env exec in place)');
  t.equal(fields.pgid, fields.pid, 'leading its own group');
  t.equal(fields.tty, '0', 'no controlling terminal');
  t.equal(fields.home, agentUser.home, 'HOME forced to the agent home, not the /root asked for');
  t.equal(fields.user, agentUser.name);
  t.equal(fields.proxy, 'http://127.0.0.1:3128', "the repo's proxy, not the one asked for");
  t.equal(fields.pwd, agentUser.home, 'in the cwd asked for');
  t.match(who.stdout, /\n\/dev\/null\n$/, 'stdin from /dev/null');
  const sleep = stepOf(steps, 'sleep') as { pid: number; exit: unknown };
  t.same(sleep.exit, { exitCode: null, signal: 'SIGTERM' }, 'the runner signalled its sleep through root');
  t.notOk(alive(sleep.pid), 'and it is gone');
  t.match(stepOf(steps, 'gate'), { exitCode: 126, stderr: /does not launch commands as the gate/ });

  t.test('a cwd the agent cannot enter is not entered for it by root', async (t) => {
    const { steps } = await runRunner(dir, asRunner, realProcess, identities, 'steps', '/root');
    t.match(stepOf(steps, 'echo'), { exitCode: 125, stderr: /cannot change directory to '\/root'/ });
  });

  t.test('the runner going away: root kills what it launched', async (t) => {
    const { steps, exit, service } = await runRunner(dir, asRunner, realProcess, identities, 'abandon', '/');
    t.same(exit, { exitCode: 0, signal: null });
    const pid = stepOf(steps, 'sleep') as number;
    t.ok(pid > 0, `the sleep started (pid ${pid})`);
    t.ok(await gone(pid), 'killed once the channel closed, without a stop');
    await service.stop();
    t.equal(service.started(), 1);
  });
});

t.test('the socket channel bounds a line before it is parsed, and delivers nothing once closed', async (t) => {
  const dir = tempDir(t);
  const address = path.join(dir, 'socket');
  const accepted = new Promise<Socket>((resolve) => {
    const server = createServer(resolve).listen(address);
    t.teardown(() => server.close());
  });
  const peer = connect(address);
  const channel = socketChannel(await accepted, 10);
  const lines: string[] = [];
  let closed = false;
  channel.onLine((line) => lines.push(line));
  channel.onClose(() => (closed = true));
  const echoed = new Promise<string>((resolve) => peer.once('data', (chunk) => resolve(String(chunk))));
  channel.send('to the peer');
  t.equal(await echoed, 'to the peer\n', 'a line goes out with its newline');
  peer.write('short\n0123456789ABCDEF');
  peer.write('GHIJ\nnext\npart');
  peer.write('ial\n');
  await new Promise((resolve) => setTimeout(resolve, 100));
  t.same(lines, ['short', '0123456789A', 'next', 'partial'], 'an overlong line arrives cut to one past the bound');
  channel.close();
  peer.write('after\n');
  await new Promise((resolve) => setTimeout(resolve, 50));
  t.ok(closed);
  t.same(lines.slice(4), [], 'nothing after close');
  peer.destroy();
});
