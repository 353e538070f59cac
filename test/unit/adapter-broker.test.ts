// The adapters with a provider broker: what each points its CLI at (and never a login or the token), the session id
// the broker takes, and the broker's word on a session's end: its over-budget refusal as each CLI shows it (claude's
// and codex's captured from the real CLIs), and the reset of a 429 it recorded.
import t from 'tap';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { claudeAdapter } from '../../src/agent/adapters/claude.js';
import { brokerProviderFlags, codexAdapter } from '../../src/agent/adapters/codex.js';
import { commandAdapter } from '../../src/agent/adapters/command.js';
import {
  BROKER_SESSION_VARIABLE,
  brokerSessionId,
  overBudgetReason,
  withBrokerWord,
} from '../../src/agent/adapters/broker.js';
import { SESSION_HEADER, sessionOf } from '../../src/broker/headers.js';
import { OVER_BUDGET_ERROR_TYPE, OVER_BUDGET_MESSAGE_PREFIX } from '../../src/broker/providers.js';
import { PROVIDER_LOGIN_VARIABLES } from '../../src/agent/broker-env.js';
import type { AgentAdapter, AgentInvocation, AgentOutput } from '../../src/types.js';

const fixtures = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../test/fixtures/agents');
const fixture = (name: string) => readFileSync(path.join(fixtures, name), 'utf8').split('\n').filter(Boolean);

const URL = 'http://127.0.0.1:701';
const SESSION = 'run-7:TASK-3:implement:2';
const invocation: AgentInvocation = {
  binary: '/usr/bin/agent',
  prompt: 'Your task: TASK-3\n',
  workspace: '/home/agent/tasks/TASK-3',
  taskId: 'TASK-3',
  model: undefined,
  effort: undefined,
  env: {
    HOME: '/home/agent',
    PATH: '/usr/bin',
    ANTHROPIC_API_KEY: 'sk-ant-api03-login-of-the-runner',
    CLAUDE_CODE_OAUTH_TOKEN: 'sk-ant-oat01-login',
    OPENAI_API_KEY: 'sk-proj-login',
    CODEX_API_KEY: 'codex-login',
  },
  command: ['/usr/bin/agent', '--go'],
};
const withBroker: AgentInvocation = { ...invocation, broker: { url: URL, session: SESSION } };
const ADAPTERS: readonly AgentAdapter[] = [claudeAdapter, codexAdapter, commandAdapter];

const output = (extra: Partial<AgentOutput> = {}): AgentOutput => ({
  stdoutLines: [],
  stderrTail: '',
  exitCode: 1,
  signal: null,
  endedBy: 'exit',
  ...extra,
});

const REASON = 'over its budget: $1.00 of $1.00 (task_usd)';

t.test('claude with a broker: its base URL, the session header, no nonessential traffic, no login', async (t) => {
  const { env } = claudeAdapter.buildCommand(withBroker);
  t.same(
    [env.ANTHROPIC_BASE_URL, env.ANTHROPIC_CUSTOM_HEADERS, env.CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC],
    [URL, `${SESSION_HEADER}: ${SESSION}`, '1'],
  );
  t.same(
    PROVIDER_LOGIN_VARIABLES.filter((name) => name in env),
    [],
  );
  t.equal(env.ANTHROPIC_AUTH_TOKEN, undefined, "the token is root's to set");
  t.same(claudeAdapter.buildCommand(withBroker).args, claudeAdapter.buildCommand(invocation).args, 'argv unchanged');
});

t.test('codex with a broker: the six -c settings of its model provider, no login', async (t) => {
  const command = codexAdapter.buildCommand(withBroker);
  const flags = [
    '-c',
    'model_provider="agent_runner"',
    '-c',
    'model_providers.agent_runner.name="agent-runner broker"',
    '-c',
    `model_providers.agent_runner.base_url="${URL}/v1"`,
    '-c',
    'model_providers.agent_runner.env_key="AGENT_RUNNER_BROKER_TOKEN"',
    '-c',
    'model_providers.agent_runner.wire_api="responses"',
    '-c',
    `model_providers.agent_runner.http_headers={ "${SESSION_HEADER}" = "${SESSION}" }`,
  ];
  t.same(brokerProviderFlags(withBroker.broker!), flags);
  t.same(command.args.slice(-2), ['-C', invocation.workspace, '-'].slice(-2), 'the prompt is still read from stdin');
  const at = command.args.indexOf('-c');
  t.same(command.args.slice(at, at + flags.length), flags);
  t.same(
    PROVIDER_LOGIN_VARIABLES.filter((name) => name in command.env),
    [],
  );
  t.equal(command.env.AGENT_RUNNER_BROKER_TOKEN, undefined);
  t.notOk(codexAdapter.buildCommand(invocation).args.includes('model_provider="agent_runner"'), 'none without one');
});

t.test('a command agent with a broker: its URL and session id, no login', async (t) => {
  const { env } = commandAdapter.buildCommand(withBroker);
  t.same([env.AGENT_RUNNER_BROKER_URL, env[BROKER_SESSION_VARIABLE]], [URL, SESSION]);
  t.same(
    PROVIDER_LOGIN_VARIABLES.filter((name) => name in env),
    [],
  );
  t.equal(env.AGENT_RUNNER_BROKER_TOKEN, undefined);
  t.equal(env.AGENT_TASK_ID, 'TASK-3', 'the task variables stay');
});

t.test('without a broker nothing changes: the logins the runner passes stay, no broker variable', async (t) => {
  for (const adapter of ADAPTERS) {
    const { env } = adapter.buildCommand(invocation);
    t.equal(env.ANTHROPIC_API_KEY, invocation.env.ANTHROPIC_API_KEY, adapter.name);
    t.notOk('ANTHROPIC_BASE_URL' in env || 'AGENT_RUNNER_BROKER_URL' in env, adapter.name);
  }
});

t.test('every adapter names the task its model session is for (the launcher grants it a capability)', async (t) => {
  for (const adapter of ADAPTERS) {
    t.equal(adapter.buildCommand(invocation).modelSessionOf, 'TASK-3', adapter.name);
    t.equal(adapter.buildCommand({ ...withBroker, role: 'review' }).modelSessionOf, 'TASK-3', `${adapter.name} review`);
  }
});

t.test('brokerSessionId: run, task, role and number, in the shape the broker records', async (t) => {
  const id = brokerSessionId('20261206T010419Z-a1b2', 'TASK-12', 'implement', 3);
  t.equal(id, '20261206T010419Z-a1b2:TASK-12:implement:3');
  t.equal(sessionOf([[SESSION_HEADER, id]]), id, 'the broker takes it');
  const odd = brokerSessionId('run one/2', 'TASK-1', 'review', '1.2');
  t.equal(odd, 'run-one-2:TASK-1:review:1.2', 'what the broker refuses is replaced');
  t.equal(sessionOf([[SESSION_HEADER, odd]]), odd);
  const long = brokerSessionId('r'.repeat(200), 'TASK-1', 'fix', 1);
  t.equal(long.length, 128);
  t.equal(sessionOf([[SESSION_HEADER, long]]), long, 'cut to what the broker takes');
});

t.test('overBudgetReason: after the prefix, to the end of the line or of the JSON string', async (t) => {
  t.equal(overBudgetReason(`API Error: 400 ${OVER_BUDGET_MESSAGE_PREFIX}${REASON}`), REASON);
  const json = JSON.stringify({
    error: { message: `${OVER_BUDGET_MESSAGE_PREFIX}over "it" \\ ${REASON}`, type: OVER_BUDGET_ERROR_TYPE },
  });
  t.equal(overBudgetReason(json), `over "it" \\ ${REASON}`, 'escapes undone, cut at the closing quote');
  t.equal(overBudgetReason(JSON.stringify({ message: json })), `over "it" \\ ${REASON}`, 'quoted twice (codex)');
  t.equal(overBudgetReason(`${OVER_BUDGET_MESSAGE_PREFIX}\nnext line`), 'no reason given');
  t.equal(overBudgetReason('API Error: 400 invalid_request_error'), undefined);
  t.equal(overBudgetReason('over budget: x'), undefined, 'only the broker prefix counts');
});

t.test("claude: the broker's refusal as the real CLI shows it is over-budget, its reason the detail", async (t) => {
  const result = claudeAdapter.parseResult(output({ stdoutLines: fixture('claude-2.1.197-broker-over-budget.jsonl') }));
  t.same([result.ok, result.failure, result.detail, result.brokerOverBudget], [false, 'over-budget', REASON, REASON]);
  t.equal(result.costUsd, 0, "the session's facts stay");
});

t.test("codex: the broker's refusal as the real CLI shows it is over-budget, its reason the detail", async (t) => {
  const result = codexAdapter.parseResult(output({ stdoutLines: fixture('codex-0.171-broker-over-budget.jsonl') }));
  t.same([result.ok, result.failure, result.detail, result.brokerOverBudget], [false, 'over-budget', REASON, REASON]);
  t.equal(result.sessionId, '01a248f2-f2fe-7051-8f8b-9a06456b78ce');
});

t.test('a command agent: the refusal wherever it printed it, on stderr or stdout', async (t) => {
  const body = JSON.stringify({
    type: 'error',
    error: { type: OVER_BUDGET_ERROR_TYPE, message: `${OVER_BUDGET_MESSAGE_PREFIX}${REASON}` },
  });
  const cases: Partial<AgentOutput>[] = [
    { stderrTail: `curl: (22) The requested URL returned error: 400\n${body}\nexiting` },
    { stdoutLines: ['working', `HTTP 400: ${OVER_BUDGET_MESSAGE_PREFIX}${REASON}`, 'giving up'] },
  ];
  for (const extra of cases) {
    const result = commandAdapter.parseResult(output(extra));
    t.same([result.ok, result.failure, result.detail, result.brokerOverBudget], [false, 'over-budget', REASON, REASON]);
  }
  t.same(commandAdapter.parseResult(output({ exitCode: 0, stderrTail: body })), { ok: true }, 'a success stays one');
  t.equal(commandAdapter.parseResult(output({ stderrTail: 'boom' })).failure, 'crashed', 'any other failure stays');
});

const rejected = JSON.stringify({
  type: 'result',
  subtype: 'success',
  is_error: true,
  api_error_status: 429,
  result: "You've hit your limit · resets 7pm (UTC)",
});

t.test("a rate limit: the broker's reset time over the CLI's words", async (t) => {
  const endedAt = Date.parse('2026-12-06T12:00:00Z');
  const cliOnly = claudeAdapter.parseResult(output({ stdoutLines: [rejected], endedAt }));
  t.same([cliOnly.failure, cliOnly.resetAt], ['rate-limited', '2026-12-06T19:00:00.000Z'], 'the CLI alone');
  const both = claudeAdapter.parseResult(
    output({ stdoutLines: [rejected], endedAt, rateLimitResetAt: '2026-12-06T12:30:00.000Z' }),
  );
  t.same([both.failure, both.resetAt], ['rate-limited', '2026-12-06T12:30:00.000Z'], "the broker's word");
});

t.test(
  'another failure with a 429 the broker recorded counts as rate-limited; a success or over-budget does not',
  async (t) => {
    const resetAt = '2026-12-06T12:30:00.000Z';
    const codexStuck = codexAdapter.parseResult(
      output({
        stdoutLines: ['{"type":"thread.started","thread_id":"t1"}'],
        endedBy: 'idle-timeout',
        rateLimitResetAt: resetAt,
      }),
    );
    t.same([codexStuck.failure, codexStuck.resetAt], ['rate-limited', resetAt], 'codex retrying until the watchdog');
    t.match(codexStuck.detail, /the broker's record of a 429.*idle-timeout/);
    const crashed = commandAdapter.parseResult(output({ stderrTail: 'HTTP 429', rateLimitResetAt: resetAt }));
    t.same([crashed.failure, crashed.resetAt], ['rate-limited', resetAt], 'a command agent');
    const ok = commandAdapter.parseResult(output({ exitCode: 0, rateLimitResetAt: resetAt }));
    t.same(ok, { ok: true }, 'the CLI got past the 429');
    const over = claudeAdapter.parseResult(
      output({ stdoutLines: fixture('claude-2.1.197-broker-over-budget.jsonl'), rateLimitResetAt: resetAt }),
    );
    t.same([over.failure, over.resetAt], ['over-budget', undefined], 'a refusal over budget stays one');
  },
);

t.test('withBrokerWord leaves a result without the broker in it as it was', async (t) => {
  const result = { ok: false, failure: 'agent-error' as const, detail: 'Model not found' };
  t.equal(withBrokerWord(result, output()), result);
});
