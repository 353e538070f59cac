// Root's launch service and the runner's remote launcher, talking over a fake socket, with fake processes: what root
// runs for a request (as whom, with which environment), what the runner sees, signals, refusals and the end.
import t from 'tap';
import { fakeChannelPair, fakeProcess, type FakeRunningProcess } from '../helpers/fake-ports.js';
import { serveLaunches, type LaunchAccount } from '../../src/control/dispatch/index.js';
import { forcedLaunchEnvironment } from '../../src/control/repo-user/index.js';
import { remoteLauncher, type LaunchEvent } from '../../src/launch/index.js';
import type { LaunchedIdentity } from '../../src/identities.js';
import type { UserAccount } from '../../src/control/repo-user/index.js';

const agentAccount: UserAccount = { name: 'r-agent', uid: 2001, gid: 2001, home: '/home/r-agent', shell: '/bin/sh' };
const gateAccount: UserAccount = { name: 'r-gate', uid: 2002, gid: 2002, home: '/home/r-gate', shell: '/bin/sh' };
const account = (identity: LaunchedIdentity, user: UserAccount): [LaunchedIdentity, LaunchAccount] => [
  identity,
  { account: user, env: forcedLaunchEnvironment(identity, user, 3128) },
];
const BOTH = new Map([account('agent', agentAccount), account('gate', gateAccount)]);
const tick = () => new Promise((resolve) => setImmediate(resolve));

/** The env=value words and the program after `env -i` in a dropped command. */
function dropped(process: FakeRunningProcess) {
  const args = process.command.args;
  const after = args.slice(args.indexOf('-i') + 1);
  const chdir = after[0]?.startsWith('--chdir=') ? after.shift()!.slice('--chdir='.length) : undefined;
  const env: Record<string, string> = {};
  while (after[0] && /^[A-Za-z_][A-Za-z0-9_]*=/.test(after[0])) {
    const word = after.shift()!;
    env[word.slice(0, word.indexOf('='))] = word.slice(word.indexOf('=') + 1);
  }
  return { setpriv: args.slice(0, args.indexOf('--')), chdir, env, argv: after };
}

function setup(
  identities: ReadonlyMap<LaunchedIdentity, LaunchAccount> = BOTH,
  onStart?: (p: FakeRunningProcess) => void,
) {
  const process = fakeProcess({ onStart: onStart ?? (() => undefined) });
  const [rootEnd, runnerEnd] = fakeChannelPair();
  const service = serveLaunches({ process }, rootEnd, identities);
  const local = fakeProcess();
  const launcher = remoteLauncher(runnerEnd, local);
  return { process, service, launcher, rootEnd, runnerEnd };
}

t.test('a run as the agent: dropped to the agent, HOME and the proxy forced, output and exit relayed', async (t) => {
  const { process, launcher, service } = setup(BOTH, (child) => {
    setImmediate(() => {
      child.stdout('hello', 'world');
      child.stderr('a warning');
      child.exit(3);
    });
  });
  const result = await launcher.processFor('agent').run({
    program: '/bin/echo',
    args: ['hello', 'world'],
    env: { HOME: '/home/runner', USER: 'runner', PATH: '/usr/bin', ALL_PROXY: 'socks5://evil', http_proxy: 'x' },
    cwd: '/home/r-agent/tasks/T-1',
    stdin: 'input',
  });
  t.same(result, { exitCode: 3, signal: null, stdout: 'hello\nworld\n', stderr: 'a warning\n' });
  const root = dropped(process.last());
  t.equal(process.last().command.program, 'setpriv');
  t.same(root.setpriv, ['--reuid=2001', '--regid=2001', '--init-groups', '--no-new-privs']);
  t.equal(process.last().command.cwd, '/', 'setpriv starts in /, as root');
  t.equal(root.chdir, '/home/r-agent/tasks/T-1', 'the cwd is entered after the drop');
  t.same(root.argv, ['/bin/echo', 'hello', 'world']);
  t.equal(process.last().command.stdin, 'input');
  t.same(root.env, {
    PATH: '/usr/bin',
    HOME: '/home/r-agent',
    USER: 'r-agent',
    LOGNAME: 'r-agent',
    http_proxy: 'http://127.0.0.1:3128',
    https_proxy: 'http://127.0.0.1:3128',
    HTTP_PROXY: 'http://127.0.0.1:3128',
    HTTPS_PROXY: 'http://127.0.0.1:3128',
    no_proxy: '127.0.0.1,localhost,::1',
    NO_PROXY: '127.0.0.1,localhost,::1',
  });
  t.equal(service.started(), 1);
});

t.test('a start as the gate: no proxy variable at all, whatever the runner asked', async (t) => {
  const { process, launcher } = setup(BOTH, (child) => setImmediate(() => child.exit(0)));
  await launcher.processFor('gate').run({
    program: '/bin/sh',
    args: ['gates.sh'],
    env: { PATH: '/usr/bin', https_proxy: 'http://127.0.0.1:3128', NO_PROXY: '*', all_proxy: 'x', KEEP: 'yes' },
    cwd: '/home/r-gate/candidates/c1',
  });
  const root = dropped(process.last());
  t.same(root.setpriv.slice(0, 2), ['--reuid=2002', '--regid=2002']);
  t.same(root.env, { PATH: '/usr/bin', KEEP: 'yes', HOME: '/home/r-gate', USER: 'r-gate', LOGNAME: 'r-gate' });
});

t.test('an identity the run does not offer is refused: exit 126, the reason on stderr, nothing started', async (t) => {
  const { process, launcher } = setup(new Map([account('agent', agentAccount)]));
  const lines: string[] = [];
  const child = launcher
    .processFor('gate')
    .start(
      { program: '/bin/true', args: [], env: {}, cwd: '/' },
      { onStdoutLine: (line) => lines.push(line), onStderrLine: (line) => lines.push(line) },
    );
  t.same(await child.exited, { exitCode: 126, signal: null });
  t.match(lines, [/refused to start \/bin\/true as the gate: this run does not launch commands as the gate/]);
  t.equal(process.started.length, 0);
});

t.test('a request the runner itself can see is bad never leaves it', async (t) => {
  const { process, launcher } = setup();
  const result = await launcher.processFor('agent').run({ program: 'bin/echo', args: [], env: {}, cwd: '/' });
  t.equal(result.exitCode, 126);
  t.match(result.stderr, /program is neither an absolute path nor a bare name/);
  t.equal(process.started.length, 0);
});

t.test('pid is 0 until root says it started; a signal reaches that child only', async (t) => {
  const { process, launcher } = setup();
  const agent = launcher.processFor('agent');
  const quiet = { onStdoutLine: () => undefined, onStderrLine: () => undefined };
  const first = agent.start({ program: '/bin/sleep', args: ['100'], env: {}, cwd: '/' }, quiet);
  const second = agent.start({ program: '/bin/sleep', args: ['100'], env: {}, cwd: '/' }, quiet);
  t.equal(first.pid, 0, 'not known yet');
  await tick();
  await tick();
  t.equal(first.pid, process.started[0]!.pid, "root's child's pid, once started");
  first.signalGroup('SIGTERM');
  t.same(await first.exited, { exitCode: null, signal: 'SIGTERM' });
  t.same(process.started[0]!.signals, ['SIGTERM']);
  t.same(process.started[1]!.signals, [], 'the other child was not signalled');
  t.notOk(process.started[1]!.exitedYet);
  second.signalGroup('SIGKILL');
  t.same(await second.exited, { exitCode: null, signal: 'SIGKILL' });
});

t.test('the channel closing: root kills every group it started, the runner sees each ended', async (t) => {
  const { process, launcher, runnerEnd } = setup();
  const stderr: string[] = [];
  const handlers = { onStdoutLine: () => undefined, onStderrLine: (line: string) => stderr.push(line) };
  const children = [1, 2, 3].map(() =>
    launcher.processFor('agent').start({ program: '/bin/sleep', args: ['100'], env: {}, cwd: '/' }, handlers),
  );
  await tick();
  await tick();
  t.equal(process.started.length, 3);
  runnerEnd.close();
  const exits = await Promise.all(children.map((child) => child.exited));
  t.same(exits, Array(3).fill({ exitCode: null, signal: 'SIGKILL' }));
  t.match(stderr, Array(3).fill(/the launcher went away/));
  await tick();
  t.same(
    process.started.map((child) => child.signals),
    Array(3).fill(['SIGKILL']),
    'root SIGKILLed each group',
  );
  const late = await launcher.processFor('agent').run({ program: '/bin/true', args: [], env: {}, cwd: '/' });
  t.match(late, { exitCode: null, signal: 'SIGKILL', stderr: /went away: \/bin\/true as the agent was not started/ });
});

t.test('stop(): every live group killed, resolved once all exited; later starts refused', async (t) => {
  // One child dies only a while after its SIGKILL: stop waits for it.
  const process = fakeProcess({ onSignal: (child) => setTimeout(() => child.exit(null, 'SIGKILL'), 50) });
  const [rootEnd, runnerEnd] = fakeChannelPair();
  const service = serveLaunches({ process }, rootEnd, BOTH);
  const launcher = remoteLauncher(runnerEnd, fakeProcess());
  const quiet = { onStdoutLine: () => undefined, onStderrLine: () => undefined };
  launcher.processFor('agent').start({ program: '/bin/sleep', args: ['1'], env: {}, cwd: '/' }, quiet);
  launcher.processFor('gate').start({ program: '/bin/sleep', args: ['1'], env: {}, cwd: '/' }, quiet);
  await tick();
  await tick();
  await service.stop();
  t.ok(
    process.started.every((child) => child.exitedYet),
    'both had exited when stop resolved',
  );
  t.equal(service.started(), 2);
  const late = await launcher.processFor('agent').run({ program: '/bin/true', args: [], env: {}, cwd: '/' });
  t.match(late, { exitCode: 126, stderr: /the run is ending/ });
  t.equal(process.started.length, 2);
});

t.test('hostile lines: answered refused when they have an id, ignored when not, never an end', async (t) => {
  const process = fakeProcess();
  const [rootEnd, raw] = fakeChannelPair();
  serveLaunches({ process }, rootEnd, BOTH);
  const events: LaunchEvent[] = [];
  raw.onLine((line) => events.push(JSON.parse(line) as LaunchEvent));
  for (const line of [
    'garbage',
    '{"op":"start"}',
    '{"op":"start","id":1,"as":"root","program":"/bin/sh","args":[],"env":{},"cwd":"/"}',
    '{"op":"signal","id":1,"signal":"SIGKILL"}',
    '{"op":"start","id":1,"as":"agent","program":"/bin/sh","args":[],"env":{},"cwd":"/"}',
    '{"op":"start","id":1,"as":"agent","program":"/bin/sh","args":[],"env":{},"cwd":"/"}',
    '{"op":"signal","id":2,"signal":"SIGTERM"}',
  ])
    raw.send(line);
  await tick();
  await tick();
  t.same(
    events.map((event) => [event.id, event.event]),
    [
      [1, 'refused'],
      [1, 'refused'],
      [1, 'started'],
      [1, 'refused'],
      [2, 'refused'],
    ],
  );
  t.match(events[0], { reason: /"as" must be one of/ });
  t.match(events[1], { reason: /no process was started with id 1/ });
  t.match(events[3], { reason: /id 1 is not fresh/ });
  t.equal(process.started.length, 1, 'one start, the valid one');
  t.same(process.started[0]!.signals, [], 'no signal reached it');
});

t.test('events the runner cannot use are dropped and reported', async (t) => {
  const [rootEnd, runnerEnd] = fakeChannelPair();
  const bad: string[] = [];
  const launcher = remoteLauncher(runnerEnd, fakeProcess(), { onBadEvent: (reason) => bad.push(reason) });
  const lines: string[] = [];
  const child = launcher
    .processFor('agent')
    .start(
      { program: '/bin/x', args: [], env: {}, cwd: '/' },
      { onStdoutLine: (l) => lines.push(l), onStderrLine: () => undefined },
    );
  for (const line of [
    '{"id":1,"event":"stdout","line":"ok"}',
    '{"id":1,"event":"stdout","line":7}',
    '{"id":99,"event":"exited","exitCode":0,"signal":null}',
    'not json',
    '{"id":1,"event":"exited","exitCode":0,"signal":null}',
  ])
    rootEnd.send(line);
  t.same(await child.exited, { exitCode: 0, signal: null });
  t.same(lines, ['ok']);
  t.match(bad, [/line is not a string/, /not JSON/]);
});
