// The broker over real sockets: its node:http listener and undici egress in front of the local fake provider
// (both on 127.0.0.1, ephemeral ports), which records all it receives. The key never reaches the client and every
// agent credential is replaced; each smuggling shape is a 400 with nothing forwarded; a token unknown, expired or
// used after its run is a 401; the metered totals equal the fake's for streamed and non-streamed answers of both
// APIs; a session's second request is refused over budget; a 429 is recorded; the body cap holds; a key rotated in
// place is used at once; the egress goes through a proxy when one is set; the peer's uid is checked.
import t from 'tap';
import * as http from 'node:http';
import * as net from 'node:net';
import { renameSync, symlinkSync, unlinkSync, writeFileSync, chmodSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { ANTHROPIC_KEY, OPENAI_KEY, brokerFixture, writeKey, type BrokerFixture } from '../helpers/broker-fixture.js';
import { meteredSpend, spendBudget } from '../../src/broker/budget.js';
import { OVER_BUDGET_ERROR_TYPE, OVER_BUDGET_STATUS } from '../../src/broker/providers.js';
import { reportTokens, SPEND_DEFAULTS, utcDay } from '../../src/spend/verdict.js';
import { procPeerUid } from '../../src/io/broker/index.js';

interface Call {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
}

async function call(
  broker: BrokerFixture,
  path: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<Call> {
  const response = await fetch(`${broker.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: response.status, headers: response.headers, text: await response.text() };
}

const claudeAsk = (stream: boolean) => ({
  model: 'claude-sonnet-4-5',
  max_tokens: 64,
  stream,
  messages: [{ role: 'user', content: 'hi' }],
});
const codexAsk = (stream: boolean) => ({ model: 'gpt-5-codex', stream, input: 'hi' });
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** Sends raw bytes; the answer's text once the broker closes the connection (or after a second). */
function raw(port: number, text: string): Promise<string> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write(text));
    let answer = '';
    socket.on('data', (chunk: Buffer) => (answer += chunk.toString('latin1')));
    socket.on('close', () => resolve(answer));
    socket.on('error', () => undefined);
    setTimeout(() => socket.destroy(), 1000);
  });
}

t.test('the key goes upstream, never back; forged credentials are replaced', async (t) => {
  const broker = await brokerFixture(t);
  const token = broker.token();
  const answer = await call(broker, '/v1/messages?beta=true', claudeAsk(true), {
    ...bearer(token),
    'x-api-key': 'sk-ant-api03-FORGED',
    cookie: 'session=stolen',
    'accept-encoding': 'gzip, br',
  });
  t.equal(answer.status, 200);
  t.match(answer.text, /event: message_stop/);
  const received = broker.fake.requests[0]!;
  t.equal(received.url, '/v1/messages?beta=true');
  t.equal(received.headers['x-api-key'], ANTHROPIC_KEY, 'the real key, not the forged one');
  t.equal(received.headers.authorization, undefined, 'the capability token stays at the broker');
  t.equal(received.headers.cookie, undefined);
  t.equal(received.headers['accept-encoding'], 'identity');
  t.equal(received.headers.host, new URL(broker.fake.origin).host, 'Host is the upstream, not the broker');
  t.same(JSON.parse(received.body), claudeAsk(true), 'the body arrives unchanged');
  const seen = JSON.stringify([...answer.headers]) + answer.text;
  t.notOk(seen.includes(ANTHROPIC_KEY) || seen.includes(OPENAI_KEY), 'no key in what the client saw');

  const openai = await call(broker, '/v1/responses', codexAsk(true), {
    authorization: `Bearer ${broker.token()}`,
    'openai-organization': 'org-forged',
  });
  t.equal(openai.status, 200);
  const second = broker.fake.requests[1]!;
  t.equal(second.headers.authorization, `Bearer ${OPENAI_KEY}`, 'the OpenAI key replaces the token');
  t.equal(second.headers['openai-organization'], undefined);
});

t.test('smuggling shapes: 400, and nothing reaches the provider', async (t) => {
  const broker = await brokerFixture(t);
  const token = broker.token();
  const host = `127.0.0.1:${broker.port}`;
  const auth = `Authorization: Bearer ${token}\r\n`;
  const body = JSON.stringify(claudeAsk(false));
  const cases: Record<string, string> = {
    'two Host headers': `POST /v1/messages HTTP/1.1\r\nHost: ${host}\r\nHost: evil.example\r\n${auth}Content-Length: ${body.length}\r\n\r\n${body}`,
    'Transfer-Encoding and Content-Length': `POST /v1/messages HTTP/1.1\r\nHost: ${host}\r\n${auth}Transfer-Encoding: chunked\r\nContent-Length: 4\r\n\r\n0\r\n\r\n`,
    'Transfer-Encoding gzip, chunked': `POST /v1/messages HTTP/1.1\r\nHost: ${host}\r\n${auth}Transfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n`,
    'Transfer-Encoding twice': `POST /v1/messages HTTP/1.1\r\nHost: ${host}\r\n${auth}Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`,
    'Transfer-Encoding with a space before the colon': `POST /v1/messages HTTP/1.1\r\nHost: ${host}\r\n${auth}Transfer-Encoding : chunked\r\n\r\n0\r\n\r\n`,
    'two Content-Lengths': `POST /v1/messages HTTP/1.1\r\nHost: ${host}\r\n${auth}Content-Length: 2\r\nContent-Length: 3\r\n\r\n{}`,
    'obs-fold (a folded header line)': `POST /v1/messages HTTP/1.1\r\nHost: ${host}\r\n${auth}X-A: b\r\n c\r\nContent-Length: 2\r\n\r\n{}`,
    'a bare CR in a header': `POST /v1/messages HTTP/1.1\r\nHost: ${host}\r\n${auth}X-A: b\rX-Api-Key: k\r\nContent-Length: 2\r\n\r\n{}`,
    'a bare LF line end': `POST /v1/messages HTTP/1.1\nHost: ${host}\n${auth}Content-Length: 2\n\n{}`,
    'an absolute URL to another host': `POST http://evil.example/v1/messages HTTP/1.1\r\nHost: ${host}\r\n${auth}Content-Length: 2\r\n\r\n{}`,
    'an absolute URL to the provider': `POST https://api.anthropic.com/v1/messages HTTP/1.1\r\nHost: ${host}\r\n${auth}Content-Length: 2\r\n\r\n{}`,
    CONNECT: `CONNECT api.anthropic.com:443 HTTP/1.1\r\nHost: api.anthropic.com:443\r\n${auth}\r\n`,
    'an Upgrade to websocket': `GET /v1/messages HTTP/1.1\r\nHost: ${host}\r\n${auth}Connection: Upgrade\r\nUpgrade: websocket\r\n\r\n`,
    'HTTP/1.0': `POST /v1/messages HTTP/1.0\r\nHost: ${host}\r\n${auth}Content-Length: 2\r\n\r\n{}`,
    'no Host': `POST /v1/messages HTTP/1.1\r\n${auth}Content-Length: 2\r\n\r\n{}`,
  };
  for (const [name, request] of Object.entries(cases)) {
    const answer = await raw(broker.port, request);
    t.match(answer, /^HTTP\/1\.1 400 /, `${name}: 400`);
    t.equal(broker.fake.requests.length, 0, `${name}: nothing forwarded`);
  }
  const pipelined = await raw(
    broker.port,
    `POST /v1/messages HTTP/1.1\r\nHost: ${host}\r\nHost: x\r\n${auth}Content-Length: 2\r\n\r\n{}` +
      `POST /v1/messages HTTP/1.1\r\nHost: ${host}\r\n${auth}Content-Length: ${body.length}\r\n\r\n${body}`,
  );
  t.equal(
    pipelined.match(/HTTP\/1\.1 /g)?.length,
    1,
    'after a refusal the connection closes: the next request is never read',
  );
  t.equal(broker.fake.requests.length, 0);
  const fine = await raw(
    broker.port,
    `POST /v1/messages HTTP/1.1\r\nHost: ${host}\r\n${auth}Connection: close\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
  );
  t.match(fine, /^HTTP\/1\.1 200 /, 'control: the same request, well formed, goes through');
  t.equal(broker.fake.requests.length, 1);
});

t.test('tokens: unknown, expired, revoked after a run: 401 and nothing forwarded', async (t) => {
  const broker = await brokerFixture(t);
  const live = broker.token({ run: 'run-7' });
  t.equal((await call(broker, '/v1/messages', claudeAsk(false), bearer(live))).status, 200, 'live');
  broker.store.revokeRun('run-7', Date.now());
  const cases: Record<string, Record<string, string>> = {
    'reused after its run was revoked': bearer(live),
    unknown: bearer('arcap_' + 'A'.repeat(43)),
    'a provider key instead': { 'x-api-key': 'sk-ant-api03-guess' },
    expired: bearer(broker.token({ expiresAt: Date.now() - 1 })),
    "another repo's": bearer(broker.token({ repo: 'api' })),
    none: {},
  };
  for (const [name, headers] of Object.entries(cases)) {
    const answer = await call(broker, '/v1/messages', claudeAsk(false), headers);
    t.equal(answer.status, 401, name);
    t.equal((JSON.parse(answer.text) as { error: { type: string } }).error.type, 'authentication_error', name);
  }
  t.equal(broker.fake.requests.length, 1, 'only the live request went upstream');
});

t.test("metering: the sealed totals equal the fake provider's, streamed and not, both APIs", async (t) => {
  const broker = await brokerFixture(t);
  const token = broker.token();
  for (const stream of [true, false, true, false, true])
    for (const [path, ask] of [
      ['/v1/messages?beta=true', claudeAsk],
      ['/v1/responses', codexAsk],
    ] as const) {
      const answer = await call(broker, path, ask(stream), { ...bearer(token), 'x-agent-runner-session': 'ses-1' });
      t.equal(answer.status, 200);
    }
  t.equal(broker.sealed.length, 10, 'one record per response');
  const sum = (key: 'inputTokens' | 'outputTokens' | 'cacheReadTokens' | 'cacheWriteTokens') =>
    broker.sealed.reduce((total, record) => total + (record[key] ?? 0), 0);
  t.same(
    {
      input: sum('inputTokens'),
      output: sum('outputTokens'),
      cacheRead: sum('cacheReadTokens'),
      cacheWrite: sum('cacheWriteTokens'),
    },
    broker.fake.totals,
  );
  t.ok(
    broker.sealed.every((record) => record.usage === 'read' && record.session === 'ses-1' && record.task === 'TASK-1'),
  );
  t.same(broker.sealed.map((record) => `${record.provider}:${record.stream}`).slice(0, 4), [
    'anthropic:true',
    'openai:true',
    'anthropic:false',
    'openai:false',
  ]);
  t.same(
    broker.sealed.map((record) => record.model),
    Array.from({ length: 10 }, (_, i) => (i % 2 ? 'gpt-5-codex' : 'claude-sonnet-4-5')),
  );
  const count = await call(broker, '/v1/messages/count_tokens', claudeAsk(false), bearer(token));
  t.equal(count.text, '{"input_tokens":42}');
  t.equal(broker.sealed.length, 10, 'count_tokens costs nothing and is not metered');
});

t.test('a stream the provider cuts is passed on cut and sealed partial', async (t) => {
  const broker = await brokerFixture(t);
  broker.fake.queue({ kind: 'cut' });
  await t.rejects(call(broker, '/v1/messages', claudeAsk(true), bearer(broker.token())));
  await new Promise((resolve) => setTimeout(resolve, 50));
  t.match(broker.sealed, [{ usage: 'partial', inputTokens: 11, cacheReadTokens: 1000, outputTokens: 1 }]);
});

t.test("over budget mid-session: the session's second request is refused, nothing of it forwarded", async (t) => {
  const metered = meteredSpend(() => undefined);
  const policy = spendBudget(
    {
      limits: { ...SPEND_DEFAULTS, dailyTokens: 500 },
      day: utcDay(Date.now()),
      spentToday: { usd: 0, tokens: 0 },
      taskSpentUsd: {},
    },
    metered,
  );
  const broker = await brokerFixture(t, { budget: policy, alsoSeal: metered });
  const token = broker.token();
  const session = { ...bearer(token), 'x-agent-runner-session': 'ses-1' };
  const first = await call(broker, '/v1/messages', claudeAsk(true), session);
  t.equal(first.status, 200, 'the first request starts under the budget');
  t.ok(reportTokens(broker.sealed[0]!) > 500, 'and its answer spends past it');
  const second = await call(broker, '/v1/messages', claudeAsk(true), session);
  t.equal(second.status, OVER_BUDGET_STATUS, 'the second is refused');
  const error = (JSON.parse(second.text) as { error: { type: string; message: string } }).error;
  t.equal(error.type, OVER_BUDGET_ERROR_TYPE);
  t.match(error.message, /over budget: over its daily token budget: \d+ of 500 tokens today/);
  t.equal(second.headers.get('x-should-retry'), 'false');
  const codex = await call(broker, '/v1/responses', codexAsk(true), session);
  t.equal(codex.status, OVER_BUDGET_STATUS, 'the same budget stops the other API');
  t.equal((JSON.parse(codex.text) as { error: { code: string } }).error.code, OVER_BUDGET_ERROR_TYPE);
  t.equal(broker.fake.requests.length, 1, 'only the first request reached the provider');
  t.equal(broker.sealed.length, 1, 'a refusal is no response of the provider: nothing sealed');
});

t.test("a provider's 429 is recorded with its retry-after and passed on", async (t) => {
  const broker = await brokerFixture(t);
  broker.fake.queue({ kind: 'rate-limit', retryAfterSec: 42 });
  const before = Date.now();
  const answer = await call(broker, '/v1/messages', claudeAsk(true), bearer(broker.token()));
  t.equal(answer.status, 429);
  t.equal(answer.headers.get('retry-after'), '42');
  t.equal(broker.limited.length, 1);
  t.match(broker.limited[0], { repo: 'web', run: 'run-1', task: 'TASK-1', provider: 'anthropic', retryAfterSec: 42 });
  const reset = Date.parse(broker.limited[0]!.resetAt!);
  t.ok(reset >= before + 42_000 && reset <= Date.now() + 42_000, 'reset is 42 s after the answer');
});

t.test('the body cap: announced or streamed past it, 413, nothing forwarded', async (t) => {
  const broker = await brokerFixture(t, { maxBodyBytes: 4096 });
  const big = JSON.stringify({ ...claudeAsk(false), padding: 'x'.repeat(5000) });
  const announced = await call(broker, '/v1/messages', big, bearer(broker.token()));
  t.equal(announced.status, 413);
  t.equal((JSON.parse(announced.text) as { error: { type: string } }).error.type, 'request_too_large');
  const chunked = await new Promise<number>((resolve, reject) => {
    const request = http.request(
      `${broker.url}/v1/messages`,
      { method: 'POST', headers: { ...bearer(broker.token()), 'content-type': 'application/json' } },
      (response) => {
        response.resume();
        resolve(response.statusCode ?? 0);
      },
    );
    request.on('error', reject);
    for (let i = 0; i < 10; i++) request.write('x'.repeat(1000));
    request.end();
  });
  t.equal(chunked, 413, 'chunked past the cap');
  t.equal(broker.fake.requests.length, 0);
  t.equal((await call(broker, '/v1/messages', claudeAsk(false), bearer(broker.token()))).status, 200, 'control');
});

t.test('key files: a key rotated in place is used at once; a readable or linked one is refused', async (t) => {
  const broker = await brokerFixture(t);
  const token = broker.token();
  const file = broker.keyFiles.anthropic;
  writeKey(`${file}.new`, 'sk-ant-api03-ROTATED-key-000000');
  renameSync(`${file}.new`, file);
  t.equal((await call(broker, '/v1/messages', claudeAsk(false), bearer(token))).status, 200);
  t.equal(broker.fake.requests[0]!.headers['x-api-key'], 'sk-ant-api03-ROTATED-key-000000', 'no restart needed');
  chmodSync(file, 0o644);
  const readable = await call(broker, '/v1/messages', claudeAsk(false), bearer(token));
  t.equal(readable.status, 502);
  t.match(broker.log.at(-1)?.detail ?? '', /readable or writable by group or others \(mode 0644\); run chmod 600/);
  unlinkSync(file);
  writeKey(`${file}.real`, ANTHROPIC_KEY);
  symlinkSync(`${file}.real`, file);
  t.equal((await call(broker, '/v1/messages', claudeAsk(false), bearer(token))).status, 502);
  t.match(broker.log.at(-1)?.detail ?? '', /is a symbolic link/);
  unlinkSync(file);
  writeFileSync(file, ANTHROPIC_KEY, { mode: 0o600 });
  t.equal((await call(broker, '/v1/messages', claudeAsk(false), bearer(token))).status, 200, 'fixed: served again');
  t.equal(broker.fake.requests.length, 2, 'the refused requests never left');
});

t.test("the egress goes through the broker's proxy (a CONNECT tunnel) when one is set", async (t) => {
  const tunnels: string[] = [];
  const proxy = http.createServer((_request, response) => response.writeHead(405).end());
  const sockets = new Set<net.Socket>();
  proxy.on('connect', (request: http.IncomingMessage, client: net.Socket) => {
    tunnels.push(request.url ?? '');
    const [host, port] = (request.url ?? '').split(':');
    const upstream = net.connect(Number(port), host, () => {
      client.write('HTTP/1.1 200 Connection established\r\n\r\n');
      upstream.pipe(client);
      client.pipe(upstream);
    });
    sockets.add(client).add(upstream);
    upstream.on('error', () => client.destroy());
    client.on('error', () => upstream.destroy());
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    for (const socket of sockets) socket.destroy();
    proxy.close();
  });
  const broker = await brokerFixture(t, { proxy: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}` });
  const answer = await call(broker, '/v1/messages', claudeAsk(true), bearer(broker.token()));
  t.equal(answer.status, 200);
  t.same(tunnels, [new URL(broker.fake.origin).host], 'one tunnel, to the fixed origin');
  t.equal(broker.sealed.length, 1);
});

t.test("the peer's uid, read from /proc/net/tcp, must be the run's", async (t) => {
  const broker = await brokerFixture(t, { peerUid: procPeerUid() });
  const mine = await call(broker, '/v1/messages', claudeAsk(false), bearer(broker.token()));
  t.equal(mine.status, 200, 'this process, the token of this uid');
  const other = await call(
    broker,
    '/v1/messages',
    claudeAsk(false),
    bearer(broker.token({ uid: process.getuid!() + 4242 })),
  );
  t.equal(other.status, 401);
  t.match(other.text, /presented from uid \d+, not the run's/);
  t.equal(broker.fake.requests.length, 1);
});

t.test('paths and methods the broker does not forward', async (t) => {
  const broker = await brokerFixture(t);
  const token = broker.token();
  t.equal((await call(broker, '/v1/models', {}, bearer(token))).status, 404);
  t.equal((await call(broker, '/v1/complete', {}, bearer(token))).status, 404);
  const get = await fetch(`${broker.url}/v1/messages`, { headers: bearer(token) });
  t.equal(get.status, 405);
  t.equal(get.headers.get('allow'), 'POST');
  t.equal(broker.fake.requests.length, 0);
});
