// The scripted agent's model call, decided without a socket: where a pose finds the broker and its session, the
// request it sends, what it reads of the answer (the broker's own recorded-shape fixtures, test/fixtures/broker/, so
// the agent and the meter read the same figures), how it ends on each error as the CLI it plays ends, and the demo's
// broker config and its launcher's session environment.
import t from 'tap';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  DEFAULT_MODELS,
  FAKE_ANSWER_HEADER,
  modelRequest,
  modelTargetOf,
  readModelAnswer,
  reportedUsage,
} from '../../src/scripted-agent/model-call.js';
import { modelErrorLines, type ModelError } from '../../src/scripted-agent/model-error.js';
import { readPose, sessionFacts, type Pose } from '../../src/scripted-agent/pose.js';
import { parseUsageInstructions } from '../../src/scripted-agent/instructions.js';
import { OVER_BUDGET_ERROR_TYPE, OVER_BUDGET_MESSAGE_PREFIX, errorBody } from '../../src/broker/providers.js';
import { modelPrice } from '../../src/broker/prices.js';
import { readServeConfig } from '../../src/broker/serve/config.js';
import { brokerEnvironment } from '../../src/agent/broker-env.js';
import { demoBrokerConfig, demoGrantUid } from '../../src/demo/model-broker.js';
import { sessionCommand } from '../../src/demo/launcher.js';
import { SPEND_DEFAULTS } from '../../src/spend/verdict.js';

const FIXTURES = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../test/fixtures/broker');
const fixture = (name: string) => readFileSync(path.join(FIXTURES, name), 'utf8');

const claudeArgv = ['-p', '--output-format', 'stream-json', '--verbose'];
const codexArgv = (...configs: string[]) => ['exec', '--json', ...configs.flatMap((config) => ['-c', config]), '-'];
const pose = (argv: string[]) => readPose(argv) as Pose;
const BROKER = { url: 'http://127.0.0.1:4100', token: 'arcap_tok' };

t.test('each pose finds the broker in the variables its CLI reads, and only there', async (t) => {
  const claudeEnv = {
    ANTHROPIC_BASE_URL: BROKER.url,
    ANTHROPIC_AUTH_TOKEN: BROKER.token,
    ANTHROPIC_CUSTOM_HEADERS: 'X-Other: 1\nX-Agent-Runner-Session: TASK-3-2',
  };
  t.same(modelTargetOf(pose(claudeArgv), claudeEnv), {
    api: 'anthropic',
    ...BROKER,
    session: 'TASK-3-2',
    model: DEFAULT_MODELS.anthropic,
  });
  t.equal(modelTargetOf(pose([...claudeArgv, '--model', 'claude-opus-4-5']), claudeEnv)?.model, 'claude-opus-4-5');
  t.equal(modelTargetOf(pose(claudeArgv), {}), undefined, 'no broker: claude invents its figures as before');
  t.equal(modelTargetOf(pose(claudeArgv), { ANTHROPIC_BASE_URL: BROKER.url }), undefined, 'a URL without a token');
  t.equal(modelTargetOf(pose(codexArgv()), claudeEnv), undefined, "codex does not read claude's variables");

  const runnerEnv = { AGENT_RUNNER_BROKER_URL: BROKER.url, AGENT_RUNNER_BROKER_TOKEN: BROKER.token };
  const header = 'model_providers.agent_runner.http_headers={ "X-Agent-Runner-Session" = "TASK-3-5" }';
  t.same(modelTargetOf(pose(codexArgv('model_provider="agent_runner"', header)), runnerEnv), {
    api: 'openai',
    ...BROKER,
    session: 'TASK-3-5',
    model: DEFAULT_MODELS.openai,
  });
  t.equal(modelTargetOf(pose(codexArgv()), runnerEnv)?.session, undefined, 'no http_headers: no session');
  t.same(modelTargetOf(pose(['x']), { ...runnerEnv, AGENT_RUNNER_BROKER_SESSION: 'TASK-3-7' }), {
    api: 'anthropic',
    ...BROKER,
    session: 'TASK-3-7',
    model: DEFAULT_MODELS.anthropic,
  });
  t.ok(modelPrice(DEFAULT_MODELS.anthropic) && modelPrice(DEFAULT_MODELS.openai), 'both default models have a price');
});

t.test('the request: the path, streamed, Bearer capability, the session header, a 429 asked of the fake', async (t) => {
  const target = { api: 'anthropic' as const, ...BROKER, session: 'TASK-3-1', model: 'claude-sonnet-4-5' };
  const claude = modelRequest(target, 'hello');
  t.equal(claude.path, '/v1/messages?beta=true');
  t.match(claude.headers, { authorization: 'Bearer arcap_tok', 'x-agent-runner-session': 'TASK-3-1' });
  t.notOk(FAKE_ANSWER_HEADER in claude.headers);
  t.match(JSON.parse(claude.body), { model: 'claude-sonnet-4-5', stream: true, messages: [{ content: 'hello' }] });
  const codex = modelRequest({ ...target, api: 'openai', session: undefined }, 'hi', 'rate-limit');
  t.equal(codex.path, '/v1/responses');
  t.match(JSON.parse(codex.body), { stream: true, input: 'hi' });
  t.equal(codex.headers[FAKE_ANSWER_HEADER], 'rate-limit');
  t.notOk('x-agent-runner-session' in codex.headers);
});

t.test("the answer's usage, read as the broker's meter reads the same streams", async (t) => {
  t.same(readModelAnswer('anthropic', 200, fixture('anthropic-stream.sse')), {
    kind: 'answered',
    model: 'claude-sonnet-4-5-20250929',
    usage: { inputTokens: 472, outputTokens: 89, cacheReadTokens: 2048, cacheWriteTokens: 128 },
  });
  t.match(readModelAnswer('anthropic', 200, fixture('anthropic-stream-two-deltas.sse')), {
    usage: { inputTokens: 10682, outputTokens: 510 },
  });
  t.same(readModelAnswer('openai', 200, fixture('openai-stream.sse')), {
    kind: 'answered',
    model: 'gpt-5-codex',
    usage: { inputTokens: 3120 - 2048, outputTokens: 211, cacheReadTokens: 2048, cacheWriteTokens: 0 },
  });
  t.match(readModelAnswer('anthropic', 200, fixture('anthropic-stream-cut.sse')), { kind: 'failed', status: 200 });
  t.match(readModelAnswer('openai', 200, fixture('openai-stream-incomplete.sse')), { kind: 'failed' });
});

t.test('the error answers, by status and message', async (t) => {
  const overBudget = errorBody('openai', 400, `${OVER_BUDGET_MESSAGE_PREFIX}over its budget`, OVER_BUDGET_ERROR_TYPE);
  t.same(readModelAnswer('openai', 400, overBudget), {
    kind: 'over-budget',
    status: 400,
    message: `${OVER_BUDGET_MESSAGE_PREFIX}over its budget`,
    body: overBudget,
  });
  t.match(readModelAnswer('anthropic', 400, errorBody('anthropic', 400, 'max_tokens too large')), { kind: 'failed' });
  t.match(readModelAnswer('anthropic', 429, '{"type":"error","error":{"message":"slow down"}}'), {
    kind: 'rate-limited',
    message: 'slow down',
  });
  t.match(readModelAnswer('anthropic', 401, errorBody('anthropic', 401, 'agent-runner broker: no token')), {
    kind: 'unauthorized',
    message: 'agent-runner broker: no token',
  });
  t.match(readModelAnswer('openai', 502, 'Bad Gateway'), { kind: 'failed', message: 'Bad Gateway' });
});

t.test('each error ends the session as the CLI it plays ends (shapes captured from claude and codex)', async (t) => {
  const facts = sessionFacts(pose(claudeArgv), 'sess-1', '/w');
  const url = `${BROKER.url}/v1/messages`;
  const error = (kind: ModelError['kind'], status: number, message: string, body = message): ModelError =>
    ({ kind, status, message, body }) as ModelError;
  const claudeEnd = (answer: ModelError) => modelErrorLines(pose(claudeArgv), facts, answer, url, 0);
  const lines = (ending: { stdout: readonly string[] }) =>
    ending.stdout.map((line) => JSON.parse(line) as Record<string, unknown>);

  const over = claudeEnd(error('over-budget', 400, `${OVER_BUDGET_MESSAGE_PREFIX}daily_tokens`));
  t.equal(over.exitCode, 1);
  t.match(lines(over), [
    { type: 'assistant', error: 'unknown' },
    {
      type: 'result',
      subtype: 'success',
      is_error: true,
      api_error_status: 400,
      result: `API Error: 400 ${OVER_BUDGET_MESSAGE_PREFIX}daily_tokens`,
    },
  ]);
  const denied = lines(claudeEnd(error('unauthorized', 401, 'agent-runner broker: revoked')));
  t.match(denied, [
    { type: 'assistant', error: 'authentication_failed' },
    {
      is_error: true,
      api_error_status: 401,
      result: 'Failed to authenticate. API Error: 401 agent-runner broker: revoked',
    },
  ]);
  t.match(lines(claudeEnd(error('rate-limited', 429, 'slow down'))), [
    { type: 'rate_limit_event', rate_limit_info: { status: 'rejected' } },
    { type: 'assistant', error: 'rate_limit' },
    { type: 'result', is_error: true, api_error_status: 429 },
  ]);
  t.match(lines(claudeEnd(error('failed', 0, 'Connection error: ECONNREFUSED'))), [
    {},
    { api_error_status: null, result: 'API Error: Connection error: ECONNREFUSED' },
  ]);

  const codex = pose(codexArgv());
  const codexFacts = sessionFacts(codex, 'sess-2', '/w');
  const codexEnd = (answer: ModelError) => modelErrorLines(codex, codexFacts, answer, `${BROKER.url}/v1/responses`, 0);
  const body = errorBody('openai', 400, `${OVER_BUDGET_MESSAGE_PREFIX}x`, OVER_BUDGET_ERROR_TYPE);
  t.same(lines(codexEnd(error('over-budget', 400, `${OVER_BUDGET_MESSAGE_PREFIX}x`, body))), [
    { type: 'error', message: body },
    { type: 'turn.failed', error: { message: body } },
  ]);
  const unauthorized = `unexpected status 401 Unauthorized: nope, url: ${BROKER.url}/v1/responses`;
  t.same(lines(codexEnd(error('unauthorized', 401, 'nope'))), [
    { type: 'error', message: unauthorized },
    { type: 'turn.failed', error: { message: unauthorized } },
  ]);
  t.match(lines(codexEnd(error('rate-limited', 429, 'slow'))), [
    { type: 'error', message: /usage limit/ },
    { type: 'turn.failed' },
  ]);

  const command = modelErrorLines(pose(['x']), facts, error('over-budget', 400, 'over'), url, 0);
  t.same(command, { stdout: [], stderr: ['scripted-agent: the model call failed: 400 over'], exitCode: 1 });
});

t.test('usage: report-zero reports nothing; otherwise the tokens and their list price', async (t) => {
  const usage = { inputTokens: 1_000_000, outputTokens: 1_000_000, cacheReadTokens: 0, cacheWriteTokens: 0 };
  t.same(reportedUsage('claude-sonnet-4-5', usage, false), { ...usage, costUsd: 18 });
  t.equal(reportedUsage('no-such-model', usage, false).costUsd, 0, 'an unpriced model costs nothing known');
  t.same(reportedUsage('claude-sonnet-4-5', usage, true), {
    inputTokens: 0,
    outputTokens: 0,
    cacheReadTokens: 0,
    cacheWriteTokens: 0,
    costUsd: 0,
  });
  t.same(parseUsageInstructions('x\nusage: report-zero\n').instructions, [{ kind: 'report-zero' }]);
  t.same(parseUsageInstructions('usage: report-half').problems, [
    'line 1 of the description: unknown usage instruction "report-half" (known: report-zero)',
  ]);
});

t.test("the demo's broker config passes broker-serve's own check; root grants for nobody, unchecked", async (t) => {
  const spend = { limits: SPEND_DEFAULTS, day: '2026-12-06', spentToday: { usd: 0, tokens: 0 }, taskSpentUsd: {} };
  const config = demoBrokerConfig({ runId: 'run-1', uid: 1000, spend }, 'http://127.0.0.1:4000', '/tmp/d/broker/key');
  t.same(readServeConfig(JSON.parse(JSON.stringify(config))), { config });
  t.match(config, { port: 0, peerCheck: true, repo: { brokerUid: 1000 } });
  t.notOk('dropTo' in config || 'proxy' in config);
  t.equal(demoGrantUid(1000), 1000);
  t.equal(demoGrantUid(0), 65534);
  t.equal(demoBrokerConfig({ runId: 'run-1', uid: 0, spend }, 'http://127.0.0.1:4000', '/k').peerCheck, false);
});

t.test("a model session's command: the broker's variables over its own, no provider login", async (t) => {
  const command = {
    program: 'claude',
    args: [],
    cwd: '/w',
    env: { PATH: '/bin', ANTHROPIC_API_KEY: 'sk-ant-mine', ANTHROPIC_BASE_URL: 'https://elsewhere' },
    modelSessionOf: 'TASK-1',
  };
  const started = sessionCommand(command, brokerEnvironment(BROKER.url, BROKER.token));
  t.same(started.env, { PATH: '/bin', ...brokerEnvironment(BROKER.url, BROKER.token) });
  t.equal(started.program, 'claude');
});
