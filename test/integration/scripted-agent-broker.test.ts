// bin/scripted-agent posing as claude, codex and a command agent, started as model sessions (Command.modelSessionOf)
// through the demo's launcher in front of a real broker-serve process and the local fake provider, as the demo
// starts them: each session reaches the fake through the broker with a capability (never the key), what it reports
// is what the broker metered, and the metered records add up to the fake's own totals; `usage: report-zero` shows
// the meter is the broker's, not the agent's word. An over-budget refusal, a 429 and a 401 end each pose the way the
// real CLI ends (captured shapes), and the adapters read those endings as the real CLIs'.
import t, { type Test } from 'tap';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { claudeAdapter } from '../../src/agent/adapters/claude.js';
import { codexAdapter } from '../../src/agent/adapters/codex.js';
import { commandAdapter } from '../../src/agent/adapters/command.js';
import { superviseAgent } from '../../src/agent/supervise.js';
import { parseTaskFile } from '../../src/board/parse.js';
import { realClock, realPorts, realProcess } from '../../src/io/real-ports.js';
import { startFakeProvider, type FakeProvider } from '../../src/io/broker/index.js';
import { startDemoModelBroker, type DemoModelBroker } from '../../src/demo/model-broker.js';
import { brokeredProcess } from '../../src/demo/launcher.js';
import { OVER_BUDGET_ERROR_TYPE, OVER_BUDGET_MESSAGE_PREFIX } from '../../src/broker/providers.js';
import { priceOf } from '../../src/broker/prices.js';
import type { UsageRecord } from '../../src/broker/types.js';
import type { SpendPolicy } from '../../src/spend/policy.js';
import { SPEND_DEFAULTS, utcDay } from '../../src/spend/verdict.js';
import type { AgentAdapter, Command, Task } from '../../src/types.js';
import { PROJECT_ROOT, SCRIPTED_AGENT } from '../helpers/drain-fixture.js';
import { TASK_FILE, forkRepo, invocation, limits, type Cli } from '../helpers/scripted-review.js';
import { git, tempDir } from '../helpers/temp.js';

const install = { node: process.execPath, main: path.join(PROJECT_ROOT, 'dist', 'src', 'main.js') };
const ADAPTERS: Readonly<Record<Cli, AgentAdapter>> = {
  claude: claudeAdapter,
  codex: codexAdapter,
  command: commandAdapter,
};
const PROMPT = 'Your task: TASK-3 "Greet" (file backlog/tasks/task-3 - Greet.md)\n';
const FREE: SpendPolicy = {
  limits: SPEND_DEFAULTS,
  day: utcDay(Date.now()),
  spentToday: { usd: 0, tokens: 0 },
  taskSpentUsd: {},
};

interface Brokered {
  readonly model: DemoModelBroker;
  readonly fake: FakeProvider;
  readonly log: string[];
}

async function brokered(t: Test, spend: SpendPolicy = FREE): Promise<Brokered> {
  let fake: FakeProvider | undefined;
  const log: string[] = [];
  const model = await startDemoModelBroker(realPorts(), {
    startProvider: async () => (fake = await startFakeProvider()),
    install,
    dir: tempDir(t, 'scripted-broker-'),
    runId: 'run-1',
    uid: process.getuid!(),
    spend,
    log: (line) => log.push(line),
  });
  t.teardown(() => model.stop());
  return { model, fake: fake!, log };
}

/** The adapter's command for a session of TASK-3, with the session header where the runner puts it for that CLI. */
function sessionCommand(t: Test, cli: Cli, repo: string, session: string): Command {
  const call = { ...invocation(t, cli, repo, PROMPT, 'implement'), model: undefined };
  const command = ADAPTERS[cli].buildCommand(call);
  switch (cli) {
    case 'claude':
      return { ...command, env: { ...command.env, ANTHROPIC_CUSTOM_HEADERS: `X-Agent-Runner-Session: ${session}` } };
    case 'codex':
      return {
        ...command,
        args: [
          ...command.args.slice(0, -1),
          '-c',
          `model_providers.agent_runner.http_headers={ "X-Agent-Runner-Session" = "${session}" }`,
          '-',
        ],
      };
    case 'command':
      return { ...command, env: { ...command.env, AGENT_RUNNER_BROKER_SESSION: session } };
  }
}

/** One session of TASK-3 as `cli`, started as a model session through the demo's launcher. */
async function run(t: Test, brokerOf: Brokered, cli: Cli, lines: readonly string[] = [], session = `TASK-3-${cli}`) {
  const { repo } = forkRepo(t, lines);
  const process = brokeredProcess(realProcess, brokerOf.model.broker, brokerOf.model.grantUid);
  const command = { ...sessionCommand(t, cli, repo, session), modelSessionOf: 'TASK-3' };
  const ran = await superviseAgent({ process, clock: realClock }, command, limits, () => undefined);
  const events = ran.stdoutLines.filter((line) => line.startsWith('{')).map((line) => JSON.parse(line) as Event);
  return { ran, events, result: ADAPTERS[cli].parseResult(ran), repo };
}

type Event = Record<string, unknown> & { type: string };
const tokens = (record: UsageRecord) => ({
  input: record.inputTokens ?? 0,
  output: record.outputTokens ?? 0,
  cacheRead: record.cacheReadTokens ?? 0,
  cacheWrite: record.cacheWriteTokens ?? 0,
});
const sum = (records: readonly UsageRecord[]) =>
  records.map(tokens).reduce(
    (total, one) => ({
      input: total.input + one.input,
      output: total.output + one.output,
      cacheRead: total.cacheRead + one.cacheRead,
      cacheWrite: total.cacheWrite + one.cacheWrite,
    }),
    { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
  );
const statusOf = (repo: string) =>
  (parseTaskFile(TASK_FILE, readFileSync(path.join(repo, TASK_FILE), 'utf8')) as Task).status;

t.test('each pose reaches the fake through the broker; it reports what was metered; the sum is the fake', async (t) => {
  const brokerOf = await brokered(t);
  const claude = await run(t, brokerOf, 'claude');
  const codex = await run(t, brokerOf, 'codex');
  const command = await run(t, brokerOf, 'command');
  for (const [cli, session] of [
    ['claude', claude],
    ['codex', codex],
    ['command', command],
  ] as const) {
    t.equal(session.ran.exitCode, 0, `${cli}: exit 0 (${session.ran.stderrTail})`);
    t.equal(session.result.ok, true, `${cli}: the adapter reads a good session`);
    t.equal(statusOf(session.repo), 'Done', `${cli}: the work was done`);
  }
  await brokerOf.model.stop();
  const { metered } = brokerOf.model;
  const { fake } = brokerOf;
  t.match(metered, [
    { repo: 'demo', run: 'run-1', task: 'TASK-3', session: 'TASK-3-claude', provider: 'anthropic', usage: 'read' },
    { task: 'TASK-3', session: 'TASK-3-codex', provider: 'openai', model: 'gpt-5-codex', usage: 'read' },
    { task: 'TASK-3', session: 'TASK-3-command', provider: 'anthropic', model: 'claude-sonnet-4-5', usage: 'read' },
  ]);
  t.equal(metered.length, 3, 'one model call per session');
  t.same(sum(metered), fake.totals, "the metered records add up to the fake's own totals");
  t.ok(
    metered.every((record) => typeof priceOf(record) === 'number' && priceOf(record)! > 0),
    'every answer names a model the price table knows',
  );
  t.equal(fake.requests.length, 3);
  t.ok(
    fake.requests.every((request) => !JSON.stringify(request.rawHeaders).includes('arcap_')),
    'no capability reached the provider',
  );
  t.match(
    fake.requests.map((request) => request.url),
    ['/v1/messages?beta=true', '/v1/responses', '/v1/messages?beta=true'],
  );

  const [forClaude, forCodex] = metered;
  const result = claude.events.find((event) => event.type === 'result') as
    { usage: Record<string, number>; total_cost_usd: number } | undefined;
  t.same(
    {
      input: result?.usage.input_tokens,
      output: result?.usage.output_tokens,
      cacheRead: result?.usage.cache_read_input_tokens,
      cacheWrite: result?.usage.cache_creation_input_tokens,
    },
    tokens(forClaude!),
    'claude reports the tokens the broker metered',
  );
  t.equal(result?.total_cost_usd, Math.round(priceOf(forClaude!)! * 1e6) / 1e6, 'and their list price as its cost');
  t.equal(
    (claude.events[0] as { model?: string }).model,
    'claude-sonnet-4-5',
    'its init event names the model it asks for',
  );
  const turn = codex.events.find((event) => event.type === 'turn.completed') as
    { usage: { input_tokens: number; cached_input_tokens: number; output_tokens: number } } | undefined;
  t.same(
    turn?.usage,
    {
      input_tokens: forCodex!.inputTokens! + forCodex!.cacheReadTokens!,
      cached_input_tokens: forCodex!.cacheReadTokens,
      output_tokens: forCodex!.outputTokens,
    },
    'codex reports the tokens the broker metered (input counting the cached ones, as codex does)',
  );
  t.same(brokerOf.model.rateLimits, []);
});

t.test(
  'usage: report-zero: the agent says nothing was spent, the broker metered what the provider answered',
  async (t) => {
    const brokerOf = await brokered(t);
    const claude = await run(t, brokerOf, 'claude', ['usage: report-zero']);
    t.equal(claude.ran.exitCode, 0, claude.ran.stderrTail);
    const result = claude.events.find((event) => event.type === 'result') as
      { usage: Record<string, number>; total_cost_usd: number } | undefined;
    t.same(
      [
        result?.usage.input_tokens,
        result?.usage.output_tokens,
        result?.usage.cache_read_input_tokens,
        result?.total_cost_usd,
      ],
      [0, 0, 0, 0],
    );
    await brokerOf.model.stop();
    t.equal(brokerOf.model.metered.length, 1);
    t.ok(tokens(brokerOf.model.metered[0]!).output > 0, 'the broker metered the answer');
    t.same(sum(brokerOf.model.metered), brokerOf.fake.totals);
  },
);

t.test(
  'over budget: claude and codex end at once, as the real CLIs end on the refusal; nothing forwarded',
  async (t) => {
    const brokerOf = await brokered(t, {
      limits: { ...SPEND_DEFAULTS, dailyTokens: 100 },
      day: utcDay(Date.now()),
      spentToday: { usd: 0, tokens: 100 },
      taskSpentUsd: {},
    });
    const claude = await run(t, brokerOf, 'claude');
    t.equal(claude.ran.exitCode, 1);
    t.same(
      claude.events.map((event) => event.type),
      ['system', 'assistant', 'result'],
    );
    t.match(claude.events[2], {
      subtype: 'success',
      is_error: true,
      api_error_status: 400,
      result: new RegExp(`^API Error: 400 ${OVER_BUDGET_MESSAGE_PREFIX}`),
    });
    t.equal(claude.result.ok, false);
    t.match(
      claude.result,
      { failure: 'over-budget', detail: /^over its daily token budget: 100 of 100 tokens/ },
      "the adapter reads the broker's reason",
    );
    t.equal(statusOf(claude.repo), 'To Do', 'claude did nothing');
    t.equal(git(claude.repo, 'rev-list', '--count', 'HEAD'), '1');

    const codex = await run(t, brokerOf, 'codex');
    t.equal(codex.ran.exitCode, 1);
    const failed = codex.events.find((event) => event.type === 'turn.failed') as
      { error: { message: string } } | undefined;
    t.match(failed?.error.message, OVER_BUDGET_MESSAGE_PREFIX);
    t.match(failed?.error.message, OVER_BUDGET_ERROR_TYPE, 'the whole error JSON, as codex shows a 400');
    t.equal(codex.result.ok, false);
    t.match(codex.result, { failure: 'over-budget', detail: /^over its daily token budget: 100 of 100 tokens/ });
    t.equal(statusOf(codex.repo), 'To Do', 'codex did nothing');

    t.equal(brokerOf.fake.requests.length, 0, 'nothing reached the provider');
    await brokerOf.model.stop();
    t.same(brokerOf.model.metered, [], 'a refusal is no provider response: nothing metered');
    t.match(brokerOf.log.join('\n'), /"event":"refused".*over budget/);
  },
);

t.test('a 429 through the broker ends claude and codex as rate-limited; the broker records each', async (t) => {
  const brokerOf = await brokered(t);
  brokerOf.fake.queue({ kind: 'rate-limit', retryAfterSec: 30 });
  const claude = await run(t, brokerOf, 'claude');
  t.equal(claude.ran.exitCode, 1);
  t.match(claude.events.slice(1), [
    { type: 'rate_limit_event', rate_limit_info: { status: 'rejected' } },
    { type: 'assistant', error: 'rate_limit' },
    { type: 'result', is_error: true, api_error_status: 429 },
  ]);
  t.equal(claude.result.failure, 'rate-limited');
  brokerOf.fake.queue({ kind: 'rate-limit', retryAfterSec: 30 });
  const codex = await run(t, brokerOf, 'codex');
  t.equal(codex.ran.exitCode, 1);
  t.match(codex.events.at(-1), { type: 'turn.failed', error: { message: /usage limit/ } });
  t.equal(codex.result.failure, 'rate-limited');
  // The instruction that rate-limits a task's first session asks the fake for the 429 itself.
  const asked = await run(t, brokerOf, 'claude', ['agent: rate-limit 1']);
  t.equal(asked.result.failure, 'rate-limited');
  t.equal(statusOf(asked.repo), 'To Do');
  await brokerOf.model.stop();
  t.match(brokerOf.model.rateLimits, [
    { run: 'run-1', task: 'TASK-3', provider: 'anthropic', retryAfterSec: 30 },
    { run: 'run-1', task: 'TASK-3', provider: 'openai', retryAfterSec: 30 },
    { run: 'run-1', task: 'TASK-3', provider: 'anthropic', retryAfterSec: 60 },
  ]);
  t.match(brokerOf.model.metered, [{ status: 429, usage: 'none' }, { status: 429 }, { status: 429 }]);
  t.same(sum(brokerOf.model.metered), brokerOf.fake.totals, 'nothing billed, nothing metered');
});

/** The scripted agent with the broker variables set by hand (a token the broker never granted). */
function direct(cli: 'claude' | 'codex', repo: string, env: Record<string, string>, args: string[]) {
  return new Promise<{ code: number | null; events: Event[] }>((resolve, reject) => {
    const child = spawn(SCRIPTED_AGENT, args, {
      cwd: repo,
      env: { PATH: `${path.dirname(process.execPath)}:/usr/bin:/bin`, HOME: repo, ...env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) =>
      resolve({
        code,
        events: out
          .split('\n')
          .filter((line) => line.startsWith('{'))
          .map((line) => JSON.parse(line) as Event),
      }),
    );
    child.stdin.end(PROMPT);
  });
}

t.test('a token the broker does not know: claude fails to authenticate, codex shows its 401', async (t) => {
  const brokerOf = await brokered(t);
  const { repo } = forkRepo(t, []);
  const forged = `arcap_${'A'.repeat(43)}`;
  const url = brokerOf.model.broker.url;
  const claude = await direct('claude', repo, { ANTHROPIC_BASE_URL: url, ANTHROPIC_AUTH_TOKEN: forged }, [
    '-p',
    '--output-format',
    'stream-json',
    '--verbose',
  ]);
  t.equal(claude.code, 1);
  t.match(claude.events.slice(1), [
    { type: 'assistant', error: 'authentication_failed' },
    { type: 'result', is_error: true, api_error_status: 401, result: /^Failed to authenticate\. API Error: 401 / },
  ]);
  const parsedClaude = claudeAdapter.parseResult({
    exitCode: claude.code,
    signal: null,
    endedBy: 'exit',
    stdoutLines: claude.events.map((event) => JSON.stringify(event)),
    stderrTail: '',
  } as Parameters<AgentAdapter['parseResult']>[0]);
  t.equal(parsedClaude.failure, 'not-logged-in', 'the adapter reads it as a login failure');
  const codex = await direct('codex', repo, { AGENT_RUNNER_BROKER_URL: url, AGENT_RUNNER_BROKER_TOKEN: forged }, [
    'exec',
    '--json',
    '-s',
    'workspace-write',
    '-',
  ]);
  t.equal(codex.code, 1);
  t.match(codex.events.at(-1), {
    type: 'turn.failed',
    error: { message: new RegExp(`^unexpected status 401 Unauthorized: .*, url: ${url}/v1/responses$`) },
  });
  t.equal(brokerOf.fake.requests.length, 0);
  t.equal(statusOf(repo), 'To Do');
});

t.test('a command without modelSessionOf starts as it always did: no capability, no broker variables', async (t) => {
  const brokerOf = await brokered(t);
  const process = brokeredProcess(realProcess, brokerOf.model.broker, brokerOf.model.grantUid);
  const lines: string[] = [];
  const plain = process.start(
    { program: '/usr/bin/env', args: [], env: { PATH: '/usr/bin:/bin', ANTHROPIC_API_KEY: 'sk-ant-own' }, cwd: '/' },
    { onStdoutLine: (line) => lines.push(line), onStderrLine: () => undefined },
  );
  t.same(await plain.exited, { exitCode: 0, signal: null });
  // (The test runner adds its own variables to every child; only the ones that speak of a model matter.)
  const modelLines = (all: string[]) => all.filter((line) => /^(ANTHROPIC|AGENT_RUNNER|CLAUDE)_/.test(line)).sort();
  t.same(modelLines(lines), ['ANTHROPIC_API_KEY=sk-ant-own'], 'its own variables, and no broker ones');
  const session: string[] = [];
  const granted = process.start(
    {
      program: '/usr/bin/env',
      args: [],
      env: { PATH: '/usr/bin:/bin', ANTHROPIC_API_KEY: 'sk-ant-own' },
      cwd: '/',
      modelSessionOf: 'TASK-3',
    },
    { onStdoutLine: (line) => session.push(line), onStderrLine: () => undefined },
  );
  t.same(await granted.exited, { exitCode: 0, signal: null });
  t.notOk(
    session.some((line) => line.startsWith('ANTHROPIC_API_KEY=')),
    'no provider login passes',
  );
  t.ok(session.includes(`ANTHROPIC_BASE_URL=${brokerOf.model.broker.url}`));
  t.match(
    session.find((line) => line.startsWith('ANTHROPIC_AUTH_TOKEN=')),
    /^ANTHROPIC_AUTH_TOKEN=arcap_/,
  );
});
