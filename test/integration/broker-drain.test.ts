// A session the provider broker refuses over budget, through a real drain (the real CLI, real git, a real broker on
// 127.0.0.1): for claude, codex and a command agent, the task is parked "over its budget" with the broker's reason
// and no attempt is charged. The agent is a stand-in (test/fixtures/agents/broker-cli.mjs) that reaches the broker
// only through what the adapter gave it (--broker-url) and the capability root's launcher would add (here passed
// with --pass-env), and prints the refusal as the real CLI does (the contract test runs the real ones).
import t, { type Test } from 'tap';
import { mkdirSync, symlinkSync } from 'node:fs';
import * as path from 'node:path';
import { attemptsFile, workspaceStateDir } from '../../src/paths.js';
import type { SessionReport, TaskSummary } from '../../src/drain/types.js';
import { brokerFixture } from '../helpers/broker-fixture.js';
import {
  drainFixture,
  PROJECT_ROOT,
  readJson,
  runOrchestrate,
  SCRIPTED_AGENT,
  taskOn,
} from '../helpers/drain-fixture.js';
import { tempDir } from '../helpers/temp.js';
import type { AssistantName } from '../../src/types.js';

const BROKER_CLI = path.join(PROJECT_ROOT, 'test/fixtures/agents/broker-cli.mjs');
const REASON = 'over its budget: $1.00 of $1.00 (task_usd)';

type Summary = { tasks: TaskSummary[]; sessions: SessionReport[] };

/** A one-task drain whose assistant is the stand-in playing `assistant`, and the capability in its environment. */
async function drainWith(t: Test, assistant: AssistantName, withBroker = true) {
  const broker = await brokerFixture(t, { budget: () => ({ allow: false, reason: REASON }) });
  const token = broker.token();
  const fixture = drainFixture(t, [{ id: 'TASK-1', title: 'Refused', description: 'anything' }], {
    config: { assistant, command: assistant === 'command' ? [BROKER_CLI] : undefined, maxAttempts: 3 },
  });
  const bin = tempDir(t, 'broker-cli-bin-');
  mkdirSync(bin, { recursive: true });
  if (assistant !== 'command') symlinkSync(BROKER_CLI, path.join(bin, assistant));
  const env = {
    ...fixture.env,
    PATH: `${bin}:${path.dirname(process.execPath)}:${fixture.env.PATH}`,
    // What root's launcher lays over a model session's environment: the capability, never through the runner's flags.
    ANTHROPIC_AUTH_TOKEN: token,
    AGENT_RUNNER_BROKER_TOKEN: token,
    // A login the runner passes on by default: with a broker the adapter drops it (the stand-in refuses to run).
    ANTHROPIC_API_KEY: 'sk-ant-api03-a-login-that-must-not-reach-the-agent',
  };
  const run = await runOrchestrate({ ...fixture, env }, [
    '--pass-env',
    'ANTHROPIC_AUTH_TOKEN,AGENT_RUNNER_BROKER_TOKEN',
    ...(withBroker ? ['--broker-url', broker.url] : []),
  ]);
  t.equal(run.code, 0, run.stderr.slice(-800));
  const summary = JSON.parse(run.stdout) as Summary;
  const attempts = readJson(attemptsFile(workspaceStateDir(fixture.state, fixture.clone))) as
    Record<string, unknown> | undefined;
  return { broker, fixture, run, summary, attempts, token };
}

for (const assistant of ['claude', 'codex', 'command'] as const) {
  t.test(
    `${assistant}: the broker's over-budget answer parks the task "over its budget", no attempt charged`,
    async (t) => {
      const { broker, fixture, run, summary, attempts, token } = await drainWith(t, assistant);
      const task = summary.tasks.find((entry) => entry.id === 'TASK-1');
      t.same([task?.outcome, task?.reason], ['parked', `over its budget: the broker refused the session (${REASON})`]);
      t.same(
        summary.sessions.map((session) => [session.taskId, session.outcome, session.rateLimited]),
        [['TASK-1', 'over-budget', false]],
        'one session, not run again',
      );
      t.notOk(attempts?.['TASK-1'], 'no attempt charged');
      t.match(taskOn(fixture.clone, 'auto/work', 'TASK-1', 'Refused'), /over its budget/, 'the park is on the board');
      const refusals = broker.log.filter((event) => event.event === 'refused');
      t.same(
        refusals.map((event) => [event.status, event.task]),
        [[400, 'TASK-1']],
        'the capability was good: the broker refused on budget, once',
      );
      t.equal(broker.fake.requests.length, 0, 'nothing reached the provider');
      t.notOk(run.stdout.includes(token) || run.stderr.includes(token), 'the token is in no output of the drain');
    },
  );
}

t.test('control: without --broker-url the login stays and nothing reaches the broker; the task fails', async (t) => {
  const { broker, summary } = await drainWith(t, 'claude', false);
  const task = summary.tasks.find((entry) => entry.id === 'TASK-1');
  t.match(
    task?.reason ?? '',
    /^failed 3 time\(s\); last: .*a provider login beside the capability: ANTHROPIC_API_KEY$/,
    'ordinary failed attempts, not a budget park',
  );
  t.same(broker.log, [], 'the broker heard nothing');
});

t.test("the broker's refusal for the repo's daily budget stops the drain; the task waits uncharged", async (t) => {
  const DAILY = 'over its daily token budget: 5000 of 5000 tokens today (UTC); no new task starts until tomorrow';
  const broker = await brokerFixture(t, { budget: () => ({ allow: false, reason: DAILY }) });
  const token = broker.token();
  const fixture = drainFixture(
    t,
    [
      { id: 'TASK-1', title: 'First', description: 'anything' },
      { id: 'TASK-2', title: 'Second', description: 'anything' },
    ],
    { config: { assistant: 'command', command: [BROKER_CLI], maxParallel: 1, maxAttempts: 3 } },
  );
  const env = { ...fixture.env, AGENT_RUNNER_BROKER_TOKEN: token };
  const run = await runOrchestrate({ ...fixture, env }, [
    '--pass-env',
    'AGENT_RUNNER_BROKER_TOKEN',
    '--broker-url',
    broker.url,
  ]);
  t.equal(run.code, 0, run.stderr.slice(-800));
  const summary = JSON.parse(run.stdout) as Summary & { budgetStop?: string };
  t.equal(summary.budgetStop, DAILY, "the drain stops for the day in the broker's words");
  t.same(
    summary.tasks.map((task) => [task.id, task.outcome]),
    [['TASK-1', 'interrupted']],
    'the refused task is left for the next day, and no other task starts',
  );
  const attempts = readJson(attemptsFile(workspaceStateDir(fixture.state, fixture.clone))) as
    Record<string, unknown> | undefined;
  t.notOk(attempts?.['TASK-1'], 'no attempt charged');
  t.match(taskOn(fixture.clone, 'auto/work', 'TASK-1', 'First'), /status: To Do/, 'still To Do on the board');
});

t.test("review: the reviewer's session is pointed at the broker too, and its refusal parks the task", async (t) => {
  // The implementer's call is served; the reviewer's (its session id names its role) is refused.
  const broker = await brokerFixture(t, {
    budget: ({ session }) => (session?.includes(':review:') ? { allow: false, reason: REASON } : { allow: true }),
  });
  const token = broker.token();
  const fixture = drainFixture(
    t,
    [{ id: 'TASK-1', title: 'Reviewed', description: 'agent: write one.txt "1"', acceptanceCriteria: ['one.txt'] }],
    { config: { assistant: 'command', command: [SCRIPTED_AGENT], review: { enabled: true, assistant: 'codex' } } },
  );
  const bin = tempDir(t, 'broker-cli-bin-');
  mkdirSync(bin, { recursive: true });
  symlinkSync(BROKER_CLI, path.join(bin, 'codex'));
  const env = { ...fixture.env, PATH: `${bin}:${fixture.env.PATH}`, AGENT_RUNNER_BROKER_TOKEN: token };
  const run = await runOrchestrate({ ...fixture, env }, [
    '--pass-env',
    'AGENT_RUNNER_BROKER_TOKEN',
    '--broker-url',
    broker.url,
  ]);
  t.equal(run.code, 0, run.stderr.slice(-800));
  const summary = JSON.parse(run.stdout) as Summary;
  const task = summary.tasks.find((entry) => entry.id === 'TASK-1');
  t.same(
    [task?.outcome, task?.reason],
    ['parked', `over its budget (the broker refused the reviewer's session (${REASON}))`],
  );
  t.same(
    summary.sessions.map((session) => [session.role, session.outcome]),
    [
      ['implement', 'ok'],
      ['review', 'over-budget'],
    ],
  );
  t.same(
    broker.log.filter((event) => event.event === 'refused').map((event) => event.status),
    [400],
    'one request of the reviewer, refused on budget',
  );
});
