// The broker process of a run as root's dispatch drives it: the real `broker-serve` started through the real process
// port with its control socket on fd 3, in front of the local fake provider (127.0.0.1, ephemeral ports). A grant
// gives a token that reaches the provider as the real key; every metered response comes back to root as a checked
// usage record equal to the fake's own totals, streamed and not, Anthropic and OpenAI; a revoked token is a 401; a
// run whose snapshot is already at daily_tokens is refused over budget with nothing forwarded; a key file problem
// fails the start with the file named; closing the channel ends the process and frees the port. As root, the
// process drops to a throwaway identity once its port is bound: its /proc files are root's and another uid can read
// none of them.
import t, { type Test } from 'tap';
import { execFileSync } from 'node:child_process';
import { chmodSync, writeFileSync } from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { realPorts } from '../../src/io/real-ports.js';
import { startFakeProvider, type FakeProvider } from '../../src/io/broker/index.js';
import { brokerServeCommand, startRunBroker, type RunBroker } from '../../src/control/broker/index.js';
import type { BrokerServeConfig } from '../../src/broker/serve/config.js';
import type { UsageRecord } from '../../src/broker/types.js';
import { DEFAULT_MAX_BODY_BYTES } from '../../src/broker/config.js';
import { OVER_BUDGET_ERROR_TYPE } from '../../src/broker/providers.js';
import { SPEND_DEFAULTS, utcDay } from '../../src/spend/verdict.js';
import { PROJECT_ROOT } from '../helpers/drain-fixture.js';
import { tempDir } from '../helpers/temp.js';
import { skipWithReason } from '../helpers/system.js';

const ANTHROPIC_KEY = 'sk-ant-api03-TEST-ONLY-serve-key-0123456789';
const OPENAI_KEY = 'sk-proj-TEST-ONLY-serve-key-0123456789';
const install = { node: process.execPath, main: path.join(PROJECT_ROOT, 'dist', 'src', 'main.js') };

interface Started {
  readonly broker: RunBroker;
  readonly fake: FakeProvider;
  readonly usage: UsageRecord[];
  readonly log: string[];
}

function keyFiles(t: Test, owner?: string) {
  const dir = tempDir(t, 'agent-runner-broker-serve-');
  chmodSync(dir, 0o711);
  const files = { anthropic: path.join(dir, 'anthropic'), openai: path.join(dir, 'openai') };
  writeFileSync(files.anthropic, `${ANTHROPIC_KEY}\n`, { mode: 0o600 });
  writeFileSync(files.openai, `${OPENAI_KEY}\n`, { mode: 0o600 });
  if (owner) execFileSync('chown', [owner, files.anthropic, files.openai]);
  return files;
}

async function start(
  t: Test,
  fields: {
    spend?: BrokerServeConfig['spend'];
    dropTo?: { uid: number; gid: number };
    port?: number;
    owner?: string;
  } = {},
): Promise<Started> {
  const fake = await startFakeProvider();
  t.teardown(() => fake.close());
  const files = keyFiles(t, fields.owner);
  const config: BrokerServeConfig = {
    repo: {
      repo: 'web',
      providers: {
        anthropic: { origin: fake.origin, keyFile: files.anthropic, keyKind: 'api-key' },
        openai: { origin: fake.origin, keyFile: files.openai, keyKind: 'api-key' },
      },
      maxBodyBytes: DEFAULT_MAX_BODY_BYTES,
      brokerUid: fields.dropTo?.uid ?? process.getuid!(),
    },
    run: 'run-1',
    host: '127.0.0.1',
    port: fields.port ?? 0,
    ...(fields.dropTo ? { dropTo: fields.dropTo } : {}),
    spend: fields.spend ?? {
      limits: SPEND_DEFAULTS,
      day: utcDay(Date.now()),
      spentToday: { usd: 0, tokens: 0 },
      taskSpentUsd: {},
    },
    peerCheck: false,
  };
  const log: string[] = [];
  const broker = await startRunBroker(realPorts(), {
    command: brokerServeCommand(install),
    config,
    log: (line) => log.push(line),
  });
  t.teardown(() => broker.stop());
  const usage: UsageRecord[] = [];
  broker.onUsage((record) => usage.push(record));
  return { broker, fake, usage, log };
}

async function ask(url: string, token: string, api: 'anthropic' | 'openai', stream: boolean) {
  const anthropic = api === 'anthropic';
  const response = await fetch(`${url}${anthropic ? '/v1/messages?beta=true' : '/v1/responses'}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      authorization: `Bearer ${token}`,
      'x-api-key': 'sk-ant-forged',
      'x-agent-runner-session': 'TASK-1-1',
    },
    body: JSON.stringify(
      anthropic
        ? { model: 'claude-sonnet-4-5', max_tokens: 64, stream, messages: [{ role: 'user', content: 'hi' }] }
        : { model: 'gpt-5-codex', stream, input: 'hi' },
    ),
  });
  return { status: response.status, text: await response.text() };
}

/** Waits until `check` holds (usage events cross the socket after the answer ends). */
async function until(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 200 && !check(); i++) await new Promise((resolve) => setTimeout(resolve, 10));
  if (!check()) throw new Error(`timed out waiting for ${what}`);
}

const sum = (records: readonly UsageRecord[], field: keyof UsageRecord) =>
  records.reduce((total, record) => total + ((record[field] as number | null) ?? 0), 0);

t.test('a grant reaches the provider as the real key; usage comes back to root, equal to the fake', async (t) => {
  const { broker, fake, usage } = await start(t);
  t.match(broker.url, /^http:\/\/127\.0\.0\.1:\d+$/);
  const { id, token } = await broker.grant('TASK-1', 1001, 600);
  t.match(token, /^arcap_[A-Za-z0-9_-]{43}$/, 'a capability token');
  for (const [api, stream] of [
    ['anthropic', true],
    ['anthropic', false],
    ['openai', true],
    ['openai', false],
  ] as const) {
    const answer = await ask(broker.url, token, api, stream);
    t.equal(answer.status, 200, `${api} ${stream ? 'streamed' : 'whole'}: 200`);
  }
  await until(() => usage.length === 4, 'four usage records');
  t.equal(fake.requests[0]!.headers['x-api-key'], ANTHROPIC_KEY, 'Anthropic got the real key, not the forged one');
  t.equal(fake.requests[2]!.headers.authorization, `Bearer ${OPENAI_KEY}`, 'OpenAI got the real key');
  t.notMatch(JSON.stringify(fake.requests.map((request) => request.rawHeaders)), /arcap_|forged/, 'nothing else');
  t.match(usage[0], { repo: 'web', run: 'run-1', task: 'TASK-1', session: 'TASK-1-1', usage: 'read' });
  t.same(
    {
      input: sum(usage, 'inputTokens'),
      output: sum(usage, 'outputTokens'),
      cacheRead: sum(usage, 'cacheReadTokens'),
      cacheWrite: sum(usage, 'cacheWriteTokens'),
    },
    fake.totals,
    "root's records add up to the fake's own totals",
  );
  broker.revoke(id);
  await until(() => true, 'the revoke to cross');
  await new Promise((resolve) => setTimeout(resolve, 50));
  const late = await ask(broker.url, token, 'anthropic', true);
  t.equal(late.status, 401, 'a revoked token: 401');
  t.equal(fake.requests.length, 4, 'nothing of it reached the provider');
});

t.test('a run already at daily_tokens is refused over budget, nothing forwarded', async (t) => {
  const { broker, fake } = await start(t, {
    spend: {
      limits: { ...SPEND_DEFAULTS, dailyTokens: 100 },
      day: utcDay(Date.now()),
      spentToday: { usd: 0, tokens: 100 },
      taskSpentUsd: {},
    },
  });
  const { token } = await broker.grant('TASK-2', 1001, 600);
  const answer = await ask(broker.url, token, 'anthropic', true);
  t.equal(answer.status, 400);
  t.match(answer.text, OVER_BUDGET_ERROR_TYPE);
  t.equal(fake.requests.length, 0);
});

t.test('a key file others may read fails the start, naming the file', async (t) => {
  const fake = await startFakeProvider();
  t.teardown(() => fake.close());
  const files = keyFiles(t);
  chmodSync(files.anthropic, 0o644);
  const started = startRunBroker(realPorts(), {
    command: brokerServeCommand(install),
    config: {
      repo: {
        repo: 'web',
        providers: { anthropic: { origin: fake.origin, keyFile: files.anthropic, keyKind: 'api-key' } },
        maxBodyBytes: DEFAULT_MAX_BODY_BYTES,
        brokerUid: process.getuid!(),
      },
      run: 'run-2',
      host: '127.0.0.1',
      port: 0,
      spend: { limits: SPEND_DEFAULTS, day: utcDay(Date.now()), spentToday: { usd: 0, tokens: 0 }, taskSpentUsd: {} },
      peerCheck: false,
    },
    log: () => undefined,
  });
  await t.rejects(started, new RegExp(`did not start: .*${files.anthropic}.*mode 0644`));
});

t.test('a config with problems fails the start with every one of them', async (t) => {
  const started = startRunBroker(realPorts(), {
    command: brokerServeCommand(install),
    config: { repo: { repo: 'web', providers: {} }, run: '../x', host: '0.0.0.0', port: 0 } as never,
    log: () => undefined,
  });
  await t.rejects(started, /no provider has a key file.*run is not a run id.*host must be 127\.0\.0\.1/);
});

t.test('a broker that ends before root asked it to is told once; one asked to end is not', async (t) => {
  const { broker } = await start(t);
  const lost: string[] = [];
  broker.onLost((why) => lost.push(why));
  process.kill(broker.pid, 'SIGKILL');
  for (let i = 0; i < 100 && lost.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 20));
  t.same(lost, ['the broker ended before the run did']);
  await broker.stop();
  t.equal(lost.length, 1, 'told once');
  await t.rejects(broker.grant('TASK-1', 1001, 60), /ended/, 'no grant once it is gone');

  const { broker: asked } = await start(t);
  const told: string[] = [];
  asked.onLost((why) => told.push(why));
  await asked.stop();
  t.same(told, [], 'an end root asked for is no loss');
});

t.test('closing the channel ends the broker and frees its port', async (t) => {
  const { broker } = await start(t);
  await broker.stop();
  const free = await new Promise<boolean>((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen(broker.port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
  t.ok(free, `port ${broker.port} is free again`);
  await t.rejects(broker.grant('TASK-1', 1001, 60), /ended/, 'no grant after the end');
});

t.test('as root: bound, then the broker identity; its /proc files are closed to other uids', async (t) => {
  if (process.getuid?.() !== 0) return skipWithReason(t, 'privilege drop', 'needs root (CI runs it as root)');
  const user = `ar-brk-${process.pid % 100000}`;
  execFileSync('useradd', [
    '--system',
    '--no-create-home',
    '--home-dir',
    '/nonexistent',
    '--shell',
    '/usr/sbin/nologin',
    '--user-group',
    user,
  ]);
  t.teardown(() => execFileSync('userdel', [user], { stdio: 'ignore' }));
  const uid = Number(execFileSync('id', ['-u', user], { encoding: 'utf8' }));
  const gid = Number(execFileSync('id', ['-g', user], { encoding: 'utf8' }));
  const port = await new Promise<number>((resolve) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port: free } = server.address() as net.AddressInfo;
      server.close(() => resolve(free));
    });
  });
  const { broker, fake } = await start(t, { dropTo: { uid, gid }, port, owner: user });
  const status = execFileSync('cat', [`/proc/${broker.pid}/status`], { encoding: 'utf8' });
  t.match(status, new RegExp(`^Uid:\\s+${uid}\\s+${uid}\\s+${uid}\\s+${uid}$`, 'm'), 'it runs as the broker identity');
  t.match(status, new RegExp(`^Groups:\\s*$`, 'm'), 'with no supplementary groups');
  const asNobody = (file: string) =>
    execFileSync(
      'setpriv',
      ['--reuid=nobody', '--regid=nogroup', '--clear-groups', 'sh', '-c', `cat ${file} >/dev/null 2>&1; echo $?`],
      {
        encoding: 'utf8',
      },
    ).trim();
  t.not(asNobody(`/proc/${broker.pid}/environ`), '0', 'another uid cannot read its environ');
  t.not(asNobody(`/proc/${broker.pid}/mem`), '0', 'nor its memory');
  const { token } = await broker.grant('TASK-1', 1001, 600);
  t.equal((await ask(broker.url, token, 'anthropic', true)).status, 200, 'and it serves, reading the key as itself');
  t.equal(fake.requests[0]!.headers['x-api-key'], ANTHROPIC_KEY);
});
