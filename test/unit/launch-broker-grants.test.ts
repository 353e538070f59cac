// Root's launcher with a run broker: an agent command naming its task is a model session that starts only with a
// capability granted for that task and the agent's uid, the broker's variables over everything the runner asked (no
// provider login passes), revoked when it exits, its exit carrying the broker's word on a rate limit. Every other
// command (the agent's git steps, the gate) starts as before, with no capability.
import t from 'tap';
import { fakeChannelPair, fakeProcess, type FakeRunningProcess } from '../helpers/fake-ports.js';
import { serveLaunches, type LaunchAccount } from '../../src/control/dispatch/index.js';
import { forcedLaunchEnvironment, type UserAccount } from '../../src/control/repo-user/index.js';
import type { LaunchedIdentity } from '../../src/identities.js';
import { SESSION_GRANT_TTL_SEC } from '../../src/control/broker/index.js';

const agent: UserAccount = { name: 'r-agent', uid: 2001, gid: 2001, home: '/home/r-agent', shell: '/bin/sh' };
const gate: UserAccount = { name: 'r-gate', uid: 2002, gid: 2002, home: '/home/r-gate', shell: '/bin/sh' };
const IDENTITIES = new Map<LaunchedIdentity, LaunchAccount>([
  ['agent', { account: agent, env: forcedLaunchEnvironment('agent', agent, 3128) }],
  ['gate', { account: gate, env: forcedLaunchEnvironment('gate', gate, 3128) }],
]);
const TOKEN = `arcap_${'A'.repeat(43)}`;
const tick = () => new Promise((resolve) => setImmediate(resolve));

/** The env=value words after `env -i` in a dropped command. */
function envOf(process: FakeRunningProcess): Record<string, string> {
  const args = process.command.args;
  const env: Record<string, string> = {};
  for (const word of args.slice(args.indexOf('-i') + 1)) {
    if (word.startsWith('--chdir=')) continue;
    if (!/^[A-Za-z_][A-Za-z0-9_]*=/.test(word)) break;
    env[word.slice(0, word.indexOf('='))] = word.slice(word.indexOf('=') + 1);
  }
  return env;
}

function fakeBroker(options: { refuse?: string; resetAt?: string } = {}) {
  const grants: { task: string; uid: number; ttlSec: number }[] = [];
  const revoked: number[] = [];
  let release: () => void = () => undefined;
  let held = false;
  const gate = { hold: () => (held = true), release: () => release() };
  return {
    grants,
    revoked,
    gate,
    handle: {
      broker: {
        url: 'http://127.0.0.1:701',
        async grant(task: string, uid: number, ttlSec: number) {
          grants.push({ task, uid, ttlSec });
          if (held) await new Promise<void>((resolve) => (release = resolve));
          if (options.refuse) throw new Error(options.refuse);
          return { id: grants.length, token: TOKEN };
        },
        revoke: (id: number) => void revoked.push(id),
      },
      rateLimitResetOf: (id: number) => (id === 1 ? options.resetAt : undefined),
    },
  };
}

function setup(broker: ReturnType<typeof fakeBroker>, onStart: (child: FakeRunningProcess) => void = () => undefined) {
  const process = fakeProcess({ onStart });
  const [rootEnd, runnerEnd] = fakeChannelPair();
  const service = serveLaunches({ process }, rootEnd, IDENTITIES, undefined, broker.handle);
  const events: Record<string, unknown>[] = [];
  runnerEnd.onLine((line) => events.push(JSON.parse(line) as Record<string, unknown>));
  const request = (fields: Record<string, unknown>) =>
    runnerEnd.send(
      JSON.stringify({
        op: 'start',
        program: '/usr/bin/claude',
        args: ['-p'],
        env: {},
        cwd: '/home/r-agent/t',
        ...fields,
      }),
    );
  return { process, service, events, request, runnerEnd };
}

t.test(
  'a model session: granted for its task and uid, the broker variables over the rest, revoked at exit',
  async (t) => {
    const broker = fakeBroker({ resetAt: '2026-12-06T10:00:00.000Z' });
    const { process, events, request } = setup(broker);
    request({
      id: 1,
      as: 'agent',
      task: 'TASK-3',
      env: {
        PATH: '/usr/bin',
        ANTHROPIC_API_KEY: 'sk-ant-runner',
        OPENAI_API_KEY: 'sk-x',
        ANTHROPIC_AUTH_TOKEN: 'forged',
      },
    });
    await tick();
    await tick();
    t.same(broker.grants, [{ task: 'TASK-3', uid: 2001, ttlSec: SESSION_GRANT_TTL_SEC }]);
    const env = envOf(process.last());
    t.equal(env.ANTHROPIC_AUTH_TOKEN, TOKEN, 'the capability, not what the runner asked');
    t.equal(env.AGENT_RUNNER_BROKER_TOKEN, TOKEN);
    t.equal(env.ANTHROPIC_BASE_URL, 'http://127.0.0.1:701');
    t.equal(env.AGENT_RUNNER_BROKER_URL, 'http://127.0.0.1:701');
    t.equal(env.ANTHROPIC_API_KEY, undefined, 'no provider login passes');
    t.equal(env.OPENAI_API_KEY, undefined);
    t.equal(env.HOME, '/home/r-agent', "root's own variables still hold");
    t.equal(env.http_proxy, 'http://127.0.0.1:3128');
    await tick();
    t.same(
      events.map((event) => event.event),
      ['started'],
      'started once the grant came',
    );
    t.same(broker.revoked, [], 'nothing revoked while it runs');
    process.last().exit(1);
    await tick();
    await tick();
    t.same(broker.revoked, [1], 'revoked when it exits');
    t.match(events.at(-1), { id: 1, event: 'exited', exitCode: 1, rateLimitResetAt: '2026-12-06T10:00:00.000Z' });
  },
);

t.test("the agent's git steps and the gate's commands get no capability", async (t) => {
  const broker = fakeBroker();
  const { process, request } = setup(broker, (child) => setImmediate(() => child.exit(0)));
  request({ id: 1, as: 'agent', program: '/usr/bin/git', env: { PATH: '/usr/bin' } });
  request({ id: 2, as: 'gate', task: 'TASK-3', program: '/bin/sh', env: { PATH: '/usr/bin' } });
  await tick();
  await tick();
  await tick();
  t.equal(broker.grants.length, 0);
  t.equal(process.started.length, 2);
  for (const child of process.started) {
    t.equal(envOf(child).ANTHROPIC_AUTH_TOKEN, undefined);
    t.equal(envOf(child).AGENT_RUNNER_BROKER_TOKEN, undefined);
  }
});

t.test('a grant the broker refuses: nothing starts, the reason is said, the command could not run', async (t) => {
  const broker = fakeBroker({ refuse: 'the broker has ended' });
  const { process, events, request } = setup(broker);
  request({ id: 1, as: 'agent', task: 'TASK-3' });
  for (let i = 0; i < 4; i++) await tick();
  t.equal(process.started.length, 0);
  t.match(events[0], { id: 1, event: 'stderr', line: /refused a capability for TASK-3: the broker has ended/ });
  t.match(events.at(-1), { id: 1, event: 'exited', exitCode: 126 });
});

t.test('a session signalled while its grant is on its way never starts, and its grant is revoked', async (t) => {
  const broker = fakeBroker();
  broker.gate.hold();
  const { process, events, request, runnerEnd } = setup(broker);
  request({ id: 1, as: 'agent', task: 'TASK-3' });
  await tick();
  await tick();
  runnerEnd.send(JSON.stringify({ op: 'signal', id: 1, signal: 'SIGTERM' }));
  await tick();
  await tick();
  broker.gate.release();
  for (let i = 0; i < 4; i++) await tick();
  t.equal(process.started.length, 0, 'never started');
  t.same(broker.revoked, [1]);
  t.match(events.at(-1), { id: 1, event: 'exited', signal: 'SIGTERM' });
});

t.test('the end of the run kills a session still running, and revokes its capability', async (t) => {
  const broker = fakeBroker();
  const { process, service, request } = setup(broker);
  request({ id: 1, as: 'agent', task: 'TASK-3' });
  for (let i = 0; i < 3; i++) await tick();
  t.equal(process.started.length, 1);
  await service.stop();
  t.same(process.last().signals, ['SIGKILL']);
  t.same(broker.revoked, [1]);
});
