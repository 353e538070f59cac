// Contract: the real Claude Code (2.1.197) and Codex (0.171) CLIs, started with the command the runner's adapters
// build for a session with a broker (claude: ANTHROPIC_BASE_URL, the session in ANTHROPIC_CUSTOM_HEADERS; codex: a
// model_providers entry passed with -c, base_url, env_key, wire_api = "responses", the session in http_headers) and
// only the capability added, as root's launcher adds it (claude: ANTHROPIC_AUTH_TOKEN; codex: the env_key),
// reach the local fake provider carrying the capability token, which the broker swaps for the real key; their
// usage is metered; and the broker's over-budget answer ends each at its first request. No real API call: the
// broker and the fake listen on 127.0.0.1, and every other connection the CLIs try goes to a loopback proxy that
// refuses it (its CONNECTs are listed as a comment). HOME is a temp dir; the environment is built by hand.
import t, { type Test } from 'tap';
import { chownSync, realpathSync } from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ANTHROPIC_KEY, OPENAI_KEY, brokerFixture } from '../helpers/broker-fixture.js';
import { OVER_BUDGET_ERROR_TYPE, OVER_BUDGET_MESSAGE_PREFIX } from '../../src/broker/providers.js';
import { gitRepo, tempDir } from '../helpers/temp.js';
import { claudeAdapter } from '../../src/agent/adapters/claude.js';
import { codexAdapter } from '../../src/agent/adapters/codex.js';
import { brokerSessionId } from '../../src/agent/adapters/index.js';
import { superviseAgent } from '../../src/agent/supervise.js';
import { realClock, realProcess } from '../../src/io/real-ports.js';
import { dropPrivileges } from '../../src/control/repo-user/privdrop.js';
import { BROKER_TOKEN_VARIABLE, PROVIDER_LOGIN_VARIABLES, brokerEnvironment } from '../../src/agent/broker-env.js';
import type { AgentAdapter, AgentResult } from '../../src/types.js';

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
  readonly stdoutLines: readonly string[];
  readonly stderr: string;
  readonly seconds: number;
  /** What the adapter made of the run. */
  readonly result: AgentResult;
}

const lines = (stdoutLines: readonly string[]) =>
  stdoutLines.filter((line) => line.startsWith('{')).map((line) => JSON.parse(line) as Record<string, unknown>);

const isRoot = process.getuid?.() === 0;
const NOBODY = { name: 'nobody', uid: 65534, gid: 65534, home: '/nonexistent', shell: '/usr/sbin/nologin' };
// A CLI that retries forever is a failure of this test, not a hang of the suite.
const limits = { idleTimeoutMs: 60_000, wallClockMs: 90_000, killGraceMs: 2000 };

/** The session id each run sends: the shape the runner builds (run, task, role, number). */
const SESSION = {
  claude: brokerSessionId('run-1', 'TASK-1', 'implement', 1),
  codex: brokerSessionId('run-1', 'TASK-1', 'review', '1.1'),
};

/**
 * The adapter's command for a session pointed at the broker, run as root's launcher would start it: with the
 * capability added to its environment, nothing else (so where the CLI connects, and with which header, is the
 * adapter's doing). A provider login in the runner's environment must not reach it.
 */
async function runAgent(
  t: Test,
  adapter: AgentAdapter,
  binary: string,
  broker: { url: string; token: string; proxy: string; session: string },
  options: { workspace: string; home: string; role?: 'review'; asNobody?: boolean },
): Promise<Ran> {
  const command = adapter.buildCommand({
    binary,
    prompt: 'Say hello.',
    workspace: options.workspace,
    taskId: 'TASK-1',
    model: adapter.name === 'codex' ? 'gpt-5-codex' : undefined,
    effort: undefined,
    env: {
      HOME: options.home,
      PATH,
      LANG: 'C.UTF-8',
      HTTPS_PROXY: broker.proxy,
      HTTP_PROXY: broker.proxy,
      NO_PROXY: '127.0.0.1',
      ANTHROPIC_API_KEY: 'sk-ant-api03-runner-login-must-not-be-used',
      OPENAI_API_KEY: 'sk-proj-runner-login-must-not-be-used',
    },
    ...(options.role ? { role: options.role } : {}),
    broker: { url: broker.url, session: broker.session },
  });
  t.equal(command.modelSessionOf, 'TASK-1', 'a model session names its task for the launcher');
  t.notOk(
    Object.keys(command.env).some((name) => PROVIDER_LOGIN_VARIABLES.includes(name)),
    'no provider login in the command',
  );
  t.notOk(JSON.stringify(command).includes(broker.token), 'the adapter never holds the token');
  // The variable root's launcher sets for this CLI (brokerEnvironment): its capability.
  const tokenVariable = adapter.name === 'claude' ? 'ANTHROPIC_AUTH_TOKEN' : BROKER_TOKEN_VARIABLE;
  const withToken = {
    ...command,
    env: { ...command.env, [tokenVariable]: brokerEnvironment(broker.url, broker.token)[tokenVariable]! },
  };
  // claude refuses bypass mode as root, and agents never are root: as root it runs as nobody (loopback stays: the
  // broker and the refusing proxy are there).
  const launched = options.asNobody && isRoot ? dropPrivileges(NOBODY, withToken) : withToken;
  const started = Date.now();
  const run = await superviseAgent({ process: realProcess, clock: realClock }, launched, limits, () => undefined);
  return {
    exitCode: run.exitCode,
    stdoutLines: run.stdoutLines,
    stderr: run.stderrTail,
    seconds: (Date.now() - started) / 1000,
    result: adapter.parseResult(run),
  };
}

async function runClaude(t: Test, url: string, token: string, proxy: string): Promise<Ran> {
  const home = tempDir(t, 'broker-claude-home-');
  if (isRoot) chownSync(home, NOBODY.uid, NOBODY.gid);
  return runAgent(
    t,
    claudeAdapter,
    claude,
    { url, token, proxy, session: SESSION.claude },
    {
      workspace: home,
      home,
      asNobody: true,
    },
  );
}

async function runCodex(t: Test, url: string, token: string, proxy: string): Promise<Ran> {
  const home = tempDir(t, 'broker-codex-home-');
  // A reviewer session: read-only sandbox, so the test's repository stays as it was.
  return runAgent(
    t,
    codexAdapter,
    codex,
    { url, token, proxy, session: SESSION.codex },
    {
      workspace: gitRepo(t),
      home,
      role: 'review',
    },
  );
}

t.test('claude reaches the fake provider through the broker with its capability token', async (t) => {
  const proxy = await refusingProxy(t);
  const broker = await brokerFixture(t);
  const ran = await runClaude(t, broker.url, broker.token(), proxy.url);
  t.equal(ran.exitCode, 0, `claude exits 0 (stderr: ${ran.stderr.slice(-500)})`);
  const result = lines(ran.stdoutLines).find((line) => line.type === 'result') as
    { is_error: boolean; result: string; usage: Record<string, number> } | undefined;
  t.equal(result?.is_error, false);
  t.equal(result?.result, 'HelloHelloHello', "the fake's answer came back through the broker");
  const messages = broker.fake.requests.filter((request) => request.url.startsWith('/v1/messages'));
  t.ok(messages.length >= 1, `the fake got claude's request (${messages.length})`);
  t.ok(
    messages.every((request) => request.headers['x-api-key'] === ANTHROPIC_KEY && !request.headers.authorization),
    'with the real key, never the capability token',
  );
  t.ok(broker.sealed.length >= 1 && broker.sealed.every((record) => record.session === SESSION.claude));
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
  t.same([ran.result.ok, ran.result.finalMessage], [true, 'HelloHelloHello'], 'and the adapter reads it as a success');
  t.comment(`claude tried besides the broker: ${proxy.tried.join(', ') || 'nothing'}`);
});

t.test('codex reaches the fake provider through the broker with its capability token', async (t) => {
  const proxy = await refusingProxy(t);
  const broker = await brokerFixture(t);
  const ran = await runCodex(t, broker.url, broker.token(), proxy.url);
  t.equal(ran.exitCode, 0, `codex exits 0 (stderr: ${ran.stderr.slice(-500)})`);
  const events = lines(ran.stdoutLines);
  const message = events.find((event) => (event.item as { type?: string } | undefined)?.type === 'agent_message');
  t.equal((message?.item as { text?: string } | undefined)?.text, 'HelloHelloHello');
  const responses = broker.fake.requests.filter((request) => request.url === '/v1/responses');
  t.equal(responses.length, 1);
  t.equal(responses[0]!.headers.authorization, `Bearer ${OPENAI_KEY}`, 'the real key in place of the token');
  t.match(broker.sealed, [{ run: 'run-1', task: 'TASK-1', provider: 'openai', session: SESSION.codex, usage: 'read' }]);
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
  t.same([ran.result.ok, ran.result.finalMessage], [true, 'HelloHelloHello'], 'and the adapter reads it as a success');
  t.comment(`codex tried besides the broker: ${proxy.tried.join(', ') || 'nothing'}`);
});

t.test('over budget: each CLI ends at its first request with the broker message, nothing forwarded', async (t) => {
  const proxy = await refusingProxy(t);
  const broker = await brokerFixture(t, {
    budget: () => ({ allow: false, reason: 'over its budget: $1.00 of $1.00 (task_usd)' }),
  });
  const fromClaude = await runClaude(t, broker.url, broker.token(), proxy.url);
  t.equal(fromClaude.exitCode, 1);
  const result = lines(fromClaude.stdoutLines).find((line) => line.type === 'result') as
    { is_error: boolean; result: string } | undefined;
  t.equal(result?.is_error, true);
  t.match(result?.result ?? '', `${OVER_BUDGET_MESSAGE_PREFIX}over its budget: $1.00 of $1.00 (task_usd)`);
  const fromCodex = await runCodex(t, broker.url, broker.token(), proxy.url);
  t.equal(fromCodex.exitCode, 1);
  const failed = lines(fromCodex.stdoutLines).find((event) => event.type === 'turn.failed') as
    { error: { message: string } } | undefined;
  t.match(failed?.error.message ?? '', OVER_BUDGET_MESSAGE_PREFIX);
  t.match(failed?.error.message ?? '', OVER_BUDGET_ERROR_TYPE);
  const refusals = broker.log.filter((event) => event.event === 'refused');
  t.equal(refusals.length, 2, 'one request each: neither CLI retried the refusal');
  t.equal(broker.fake.requests.length, 0, 'nothing reached the provider');
  t.ok(fromClaude.seconds < 30 && fromCodex.seconds < 30, 'both ended at once, not after retries');
  const reason = 'over its budget: $1.00 of $1.00 (task_usd)';
  for (const [cli, ran] of [
    ['claude', fromClaude],
    ['codex', fromCodex],
  ] as const)
    t.same(
      [ran.result.ok, ran.result.failure, ran.result.detail, ran.result.brokerOverBudget],
      [false, 'over-budget', reason, reason],
      `the ${cli} adapter reads the refusal as over-budget, with the broker's reason`,
    );
});
