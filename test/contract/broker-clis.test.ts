// Contract: the real Claude Code (2.1.197) and Codex (0.171) CLIs, pointed at the broker the way the runner will
// point them (claude: ANTHROPIC_BASE_URL and ANTHROPIC_AUTH_TOKEN, the session in ANTHROPIC_CUSTOM_HEADERS; codex:
// a model_providers entry passed with -c, base_url, env_key, wire_api = "responses", the session in http_headers),
// reach the local fake provider carrying the capability token, which the broker swaps for the real key; their
// usage is metered; and the broker's over-budget answer ends each at its first request. No real API call: the
// broker and the fake listen on 127.0.0.1, and every other connection the CLIs try goes to a loopback proxy that
// refuses it (its CONNECTs are listed as a comment). HOME is a temp dir; the environment is built by hand.
import t, { type Test } from 'tap';
import { spawn } from 'node:child_process';
import { realpathSync } from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ANTHROPIC_KEY, OPENAI_KEY, brokerFixture } from '../helpers/broker-fixture.js';
import { OVER_BUDGET_ERROR_TYPE, OVER_BUDGET_MESSAGE_PREFIX } from '../../src/broker/providers.js';
import { tempDir } from '../helpers/temp.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const claude = realpathSync(path.join(root, 'node_modules/.bin/claude'));
const codex = realpathSync(path.join(root, 'node_modules/.bin/codex'));
const PATH = `${path.dirname(process.execPath)}:/usr/local/bin:/usr/bin:/bin`;

/** A proxy on loopback that refuses everything: what the CLIs try besides the broker never leaves the host. */
async function refusingProxy(t: Test): Promise<{ url: string; tried: string[] }> {
  const tried: string[] = [];
  const sockets = new Set<Socket>();
  const proxy = http.createServer((request, response) => {
    tried.push(request.url ?? '');
    response.writeHead(403).end();
  });
  proxy.on('connection', (socket: Socket) => {
    sockets.add(socket);
    // A CLI that resets the tunnel it was refused is no failure of the test.
    socket.on('error', () => undefined);
  });
  proxy.on('connect', (request: http.IncomingMessage, socket: Socket) => {
    tried.push(request.url ?? '');
    socket.end('HTTP/1.1 403 Forbidden\r\n\r\n');
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    for (const socket of sockets) socket.destroy();
    proxy.close();
  });
  return { url: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`, tried };
}

interface Ran {
  readonly exitCode: number | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly seconds: number;
}

function run(program: string, args: readonly string[], env: Record<string, string>, cwd: string): Promise<Ran> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(program, args, { env, cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    // A CLI that retries forever is a failure of this test, not a hang of the suite.
    const timer = setTimeout(() => child.kill('SIGKILL'), 90_000);
    child.on('error', reject);
    child.on('close', (exitCode) => {
      clearTimeout(timer);
      resolve({ exitCode, stdout, stderr, seconds: (Date.now() - started) / 1000 });
    });
  });
}

const lines = (text: string) =>
  text
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);

async function runClaude(t: Test, url: string, token: string, proxy: string): Promise<Ran> {
  const home = tempDir(t, 'broker-claude-home-');
  return run(
    claude,
    ['-p', 'Say hello.', '--output-format', 'json'],
    {
      HOME: home,
      PATH,
      LANG: 'C.UTF-8',
      ANTHROPIC_BASE_URL: url,
      ANTHROPIC_AUTH_TOKEN: token,
      ANTHROPIC_CUSTOM_HEADERS: 'X-Agent-Runner-Session: ses-claude',
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      HTTPS_PROXY: proxy,
      HTTP_PROXY: proxy,
      NO_PROXY: '127.0.0.1',
    },
    home,
  );
}

async function runCodex(t: Test, url: string, token: string, proxy: string): Promise<Ran> {
  const home = tempDir(t, 'broker-codex-home-');
  const provider = 'model_providers.agent_runner';
  return run(
    codex,
    [
      'exec',
      '--json',
      '--skip-git-repo-check',
      '-s',
      'read-only',
      '-m',
      'gpt-5-codex',
      '-c',
      'model_provider="agent_runner"',
      '-c',
      `${provider}.name="agent-runner broker"`,
      '-c',
      `${provider}.base_url="${url}/v1"`,
      '-c',
      `${provider}.env_key="AGENT_RUNNER_BROKER_TOKEN"`,
      '-c',
      `${provider}.wire_api="responses"`,
      '-c',
      `${provider}.http_headers={ "X-Agent-Runner-Session" = "ses-codex" }`,
      'Say hello.',
    ],
    {
      HOME: home,
      PATH,
      LANG: 'C.UTF-8',
      AGENT_RUNNER_BROKER_TOKEN: token,
      HTTPS_PROXY: proxy,
      HTTP_PROXY: proxy,
      NO_PROXY: '127.0.0.1',
    },
    home,
  );
}

t.test('claude reaches the fake provider through the broker with its capability token', async (t) => {
  const proxy = await refusingProxy(t);
  const broker = await brokerFixture(t);
  const ran = await runClaude(t, broker.url, broker.token(), proxy.url);
  t.equal(ran.exitCode, 0, `claude exits 0 (stderr: ${ran.stderr.slice(-500)})`);
  const result = lines(ran.stdout).find((line) => line.type === 'result') as
    { is_error: boolean; result: string; usage: Record<string, number> } | undefined;
  t.equal(result?.is_error, false);
  t.equal(result?.result, 'HelloHelloHello', "the fake's answer came back through the broker");
  const messages = broker.fake.requests.filter((request) => request.url.startsWith('/v1/messages'));
  t.ok(messages.length >= 1, `the fake got claude's request (${messages.length})`);
  t.ok(
    messages.every((request) => request.headers['x-api-key'] === ANTHROPIC_KEY && !request.headers.authorization),
    'with the real key, never the capability token',
  );
  t.ok(broker.sealed.length >= 1 && broker.sealed.every((record) => record.session === 'ses-claude'));
  t.match(broker.sealed, [{ run: 'run-1', task: 'TASK-1', provider: 'anthropic', usage: 'read' }]);
  const metered = broker.sealed.reduce(
    (sum, record) => ({
      input: sum.input + (record.inputTokens ?? 0),
      output: sum.output + (record.outputTokens ?? 0),
      cacheRead: sum.cacheRead + (record.cacheReadTokens ?? 0),
      cacheWrite: sum.cacheWrite + (record.cacheWriteTokens ?? 0),
    }),
    { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
  );
  t.same(metered, broker.fake.totals, "metered = the fake's totals");
  t.same(
    {
      input: result?.usage.input_tokens,
      output: result?.usage.output_tokens,
      cacheRead: result?.usage.cache_read_input_tokens,
      cacheWrite: result?.usage.cache_creation_input_tokens,
    },
    metered,
    'and = what claude itself reports (kept beside it, never believed over it)',
  );
  t.comment(`claude tried besides the broker: ${proxy.tried.join(', ') || 'nothing'}`);
});

t.test('codex reaches the fake provider through the broker with its capability token', async (t) => {
  const proxy = await refusingProxy(t);
  const broker = await brokerFixture(t);
  const ran = await runCodex(t, broker.url, broker.token(), proxy.url);
  t.equal(ran.exitCode, 0, `codex exits 0 (stderr: ${ran.stderr.slice(-500)})`);
  const events = lines(ran.stdout);
  const message = events.find((event) => (event.item as { type?: string } | undefined)?.type === 'agent_message');
  t.equal((message?.item as { text?: string } | undefined)?.text, 'HelloHelloHello');
  const responses = broker.fake.requests.filter((request) => request.url === '/v1/responses');
  t.equal(responses.length, 1);
  t.equal(responses[0]!.headers.authorization, `Bearer ${OPENAI_KEY}`, 'the real key in place of the token');
  t.match(broker.sealed, [{ run: 'run-1', task: 'TASK-1', provider: 'openai', session: 'ses-codex', usage: 'read' }]);
  const record = broker.sealed[0]!;
  const turn = events.find((event) => event.type === 'turn.completed') as
    { usage: { input_tokens: number; cached_input_tokens: number; output_tokens: number } } | undefined;
  t.same(
    {
      input: (record.inputTokens ?? 0) + (record.cacheReadTokens ?? 0),
      cached: record.cacheReadTokens,
      output: record.outputTokens,
    },
    { input: turn?.usage.input_tokens, cached: turn?.usage.cached_input_tokens, output: turn?.usage.output_tokens },
    'metered = what codex itself reports',
  );
  t.same(
    { input: record.inputTokens, output: record.outputTokens, cacheRead: record.cacheReadTokens, cacheWrite: 0 },
    broker.fake.totals,
    "metered = the fake's totals",
  );
  t.comment(`codex tried besides the broker: ${proxy.tried.join(', ') || 'nothing'}`);
});

t.test('over budget: each CLI ends at its first request with the broker message, nothing forwarded', async (t) => {
  const proxy = await refusingProxy(t);
  const broker = await brokerFixture(t, {
    budget: () => ({ allow: false, reason: 'over its budget: $1.00 of $1.00 (task_usd)' }),
  });
  const fromClaude = await runClaude(t, broker.url, broker.token(), proxy.url);
  t.equal(fromClaude.exitCode, 1);
  const result = lines(fromClaude.stdout).find((line) => line.type === 'result') as
    { is_error: boolean; result: string } | undefined;
  t.equal(result?.is_error, true);
  t.match(result?.result ?? '', `${OVER_BUDGET_MESSAGE_PREFIX}over its budget: $1.00 of $1.00 (task_usd)`);
  const fromCodex = await runCodex(t, broker.url, broker.token(), proxy.url);
  t.equal(fromCodex.exitCode, 1);
  const failed = lines(fromCodex.stdout).find((event) => event.type === 'turn.failed') as
    { error: { message: string } } | undefined;
  t.match(failed?.error.message ?? '', OVER_BUDGET_MESSAGE_PREFIX);
  t.match(failed?.error.message ?? '', OVER_BUDGET_ERROR_TYPE);
  const refusals = broker.log.filter((event) => event.event === 'refused');
  t.equal(refusals.length, 2, 'one request each: neither CLI retried the refusal');
  t.equal(broker.fake.requests.length, 0, 'nothing reached the provider');
  t.ok(fromClaude.seconds < 30 && fromCodex.seconds < 30, 'both ended at once, not after retries');
});
