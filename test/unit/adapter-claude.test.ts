import t from 'tap';
import { claudeAdapter } from '../../src/agent/adapters/claude.js';
import { adapterFor } from '../../src/agent/adapters/index.js';
import type { AgentInvocation, AgentOutput } from '../../src/types.js';

const invocation: AgentInvocation = {
  binary: '/usr/local/bin/claude',
  prompt: 'Your task: TASK-3 "Add x" (file backlog/tasks/task-3 - Add-x.md)\n',
  workspace: '/srv/repo/.worktrees/task-3',
  taskId: 'TASK-3',
  model: 'opus',
  effort: 'high',
  env: { HOME: '/home/agent', PATH: '/usr/bin' },
};

const output = (lines: string[], extra: Partial<AgentOutput> = {}): AgentOutput => ({
  stdoutLines: lines,
  stderrTail: '',
  exitCode: 0,
  signal: null,
  endedBy: 'exit',
  ...extra,
});

const init = JSON.stringify({
  type: 'system',
  subtype: 'init',
  cwd: '/w',
  session_id: 'sess-init',
  model: 'claude-opus',
});
const assistant = JSON.stringify({
  type: 'assistant',
  message: { role: 'assistant', content: [{ type: 'text', text: 'Working on it' }] },
  session_id: 'sess-1',
});
const success = JSON.stringify({
  type: 'result',
  subtype: 'success',
  is_error: false,
  num_turns: 7,
  result: 'Done.',
  session_id: 'sess-1',
  total_cost_usd: 0.4321,
  usage: { input_tokens: 100, cache_creation_input_tokens: 20, cache_read_input_tokens: 3000, output_tokens: 456 },
});
// Captured from claude 2.1.197 with no credentials (trimmed to the fields that matter).
const notLoggedIn = [
  JSON.stringify({
    type: 'system',
    subtype: 'init',
    session_id: '82622085-97b7-4e02-b47c-0a5b474d18ef',
    permissionMode: 'bypassPermissions',
  }),
  JSON.stringify({
    type: 'assistant',
    message: { content: [{ type: 'text', text: 'Not logged in · Please run /login' }] },
    session_id: '82622085-97b7-4e02-b47c-0a5b474d18ef',
    error: 'authentication_failed',
  }),
  JSON.stringify({
    type: 'result',
    subtype: 'success',
    is_error: true,
    api_error_status: null,
    num_turns: 1,
    result: 'Not logged in · Please run /login',
    session_id: '82622085-97b7-4e02-b47c-0a5b474d18ef',
    total_cost_usd: 0,
    usage: { input_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 0 },
  }),
];

t.test('buildCommand: claude argv, prompt on stdin, workspace as cwd, env as given', async (t) => {
  const command = claudeAdapter.buildCommand(invocation);
  t.same(command, {
    program: '/usr/local/bin/claude',
    args: [
      '-p',
      '--output-format',
      'stream-json',
      '--verbose',
      '--dangerously-skip-permissions',
      '--model',
      'opus',
      '--effort',
      'high',
    ],
    env: { HOME: '/home/agent', PATH: '/usr/bin', AGENT_ROLE: 'implement' },
    cwd: '/srv/repo/.worktrees/task-3',
    stdin: invocation.prompt,
    modelSessionOf: 'TASK-3',
  });
  t.notOk(
    command.args.some((arg) => arg.includes('TASK-3')),
    'the prompt is not in argv',
  );
});

t.test('buildCommand: no model or effort means no flags for them', async (t) => {
  const command = claudeAdapter.buildCommand({ ...invocation, model: undefined, effort: undefined });
  t.same(command.args, ['-p', '--output-format', 'stream-json', '--verbose', '--dangerously-skip-permissions']);
});

t.test('buildCommand: the budget left goes to --max-budget-usd; none, or nothing left, passes no flag', async (t) => {
  t.same(claudeAdapter.buildCommand({ ...invocation, maxBudgetUsd: 1.75 }).args.slice(-2), [
    '--max-budget-usd',
    '1.75',
  ]);
  t.same(
    claudeAdapter.buildCommand({ ...invocation, maxBudgetUsd: 0.000001 }).args.slice(-2),
    ['--max-budget-usd', '0.000001'],
    'a micro-dollar is written as a plain decimal',
  );
  for (const maxBudgetUsd of [undefined, 0, -1]) {
    t.notOk(
      claudeAdapter
        .buildCommand({ ...invocation, ...(maxBudgetUsd !== undefined ? { maxBudgetUsd } : {}) })
        .args.includes('--max-budget-usd'),
      `maxBudgetUsd ${maxBudgetUsd}: no flag (claude refuses <= 0)`,
    );
  }
});

t.test(
  'error_max_budget_usd (the result claude prints at --max-budget-usd): over-budget, with its cost and usage',
  async (t) => {
    const line = JSON.stringify({
      type: 'result',
      subtype: 'error_max_budget_usd',
      duration_ms: 61234,
      duration_api_ms: 58877,
      is_error: true,
      num_turns: 12,
      stop_reason: 'tool_use',
      session_id: 's7',
      total_cost_usd: 0.5031,
      usage: { input_tokens: 40, cache_creation_input_tokens: 100, cache_read_input_tokens: 9000, output_tokens: 700 },
      modelUsage: {},
      permission_denials: [],
      errors: ['Reached maximum budget ($0.5)'],
    });
    t.same(claudeAdapter.parseResult(output([init, assistant, line], { exitCode: 1 })), {
      ok: false,
      failure: 'over-budget',
      detail: 'stopped at its budget: Reached maximum budget ($0.5) (error_max_budget_usd)',
      sessionId: 's7',
      turns: 12,
      inputTokens: 9140,
      outputTokens: 700,
      costUsd: 0.5031,
      usage: { input: 40, output: 700, cacheRead: 9000, cacheWrite: 100 },
      model: 'claude-opus',
    });
    const bare = JSON.stringify({
      type: 'result',
      subtype: 'error_max_budget_usd',
      is_error: true,
      total_cost_usd: 0.61,
    });
    t.equal(
      claudeAdapter.parseResult(output([bare], { exitCode: 1 })).detail,
      'stopped at its budget: $0.61 spent (error_max_budget_usd)',
      'without errors[] the cost says it',
    );
  },
);

t.test('costReported: the cumulative cost only a result line carries; anything else reports none', async (t) => {
  t.equal(claudeAdapter.costReported?.(success), 0.4321);
  t.equal(claudeAdapter.costReported?.(notLoggedIn[2]!), 0, 'a cost of 0 is a cost');
  for (const line of [
    init,
    assistant,
    notLoggedIn[1]!,
    '{"type":"result"',
    'total_cost_usd "result" 5',
    JSON.stringify({ type: 'assistant', total_cost_usd: 9, result: 'x' }),
    JSON.stringify({ type: 'result', subtype: 'success', total_cost_usd: '9' }),
  ]) {
    t.equal(claudeAdapter.costReported?.(line), undefined, line.slice(0, 60));
  }
});

t.test(
  'ended by the runner at its budget: a success result stays the work it reported; no result is over-budget',
  async (t) => {
    const ended = claudeAdapter.parseResult(
      output([init, success], { exitCode: null, signal: 'SIGTERM', endedBy: 'over-budget' }),
    );
    t.same([ended.ok, ended.costUsd, ended.detail], [true, 0.4321, 'ended by over-budget after its result line']);
    t.same(
      claudeAdapter.parseResult(
        output([init, assistant], { exitCode: null, signal: 'SIGTERM', endedBy: 'over-budget' }),
      ),
      {
        ok: false,
        failure: 'over-budget',
        detail: 'the runner ended it: its reported cost passed its budget',
        sessionId: 'sess-init',
        model: 'claude-opus',
      },
    );
  },
);

t.test('a success result is ok, with session, turns, tokens and cost', async (t) => {
  t.same(claudeAdapter.parseResult(output([init, assistant, success])), {
    ok: true,
    sessionId: 'sess-1',
    turns: 7,
    inputTokens: 3120,
    outputTokens: 456,
    costUsd: 0.4321,
    usage: { input: 100, output: 456, cacheRead: 3000, cacheWrite: 20 },
    model: 'claude-opus',
    finalMessage: 'Done.',
  });
});

t.test('garbage lines between JSON lines do not break parsing', async (t) => {
  const lines = [
    'npm WARN something',
    init,
    '',
    '{not json',
    'Progress: 50%',
    assistant,
    '{"type":"result"',
    '[1,2]',
    success,
    'trailing noise',
  ];
  const result = claudeAdapter.parseResult(output(lines));
  t.equal(result.ok, true);
  t.equal(result.sessionId, 'sess-1');
  t.equal(result.costUsd, 0.4321);
});

t.test('not logged in: subtype success but is_error true', async (t) => {
  t.same(claudeAdapter.parseResult(output(notLoggedIn, { exitCode: 1 })), {
    ok: false,
    failure: 'not-logged-in',
    detail: 'Not logged in · Please run /login',
    sessionId: '82622085-97b7-4e02-b47c-0a5b474d18ef',
    turns: 1,
    inputTokens: 0,
    outputTokens: 0,
    costUsd: 0,
    usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
  });
});

t.test('rate limited, with an epoch reset time', async (t) => {
  const line = JSON.stringify({
    type: 'result',
    subtype: 'success',
    is_error: true,
    result: 'Claude AI usage limit reached|1762952400',
    session_id: 's',
  });
  const result = claudeAdapter.parseResult(output([init, line], { exitCode: 1 }));
  t.equal(result.failure, 'rate-limited');
  t.equal(result.resetAt, '2025-11-12T13:00:00.000Z');
  t.equal(result.detail, 'Claude AI usage limit reached|1762952400');
});

t.test('rate limited, with a wall-clock reset time in a named zone, anchored at endedAt', async (t) => {
  const line = JSON.stringify({
    type: 'result',
    subtype: 'success',
    is_error: true,
    result: "You've hit your limit · resets 7pm (America/Los_Angeles)",
  });
  // 2026-02-05T02:07:03Z is 2026-02-04 18:07 in Los Angeles (PST, UTC-8): next 7pm is 2026-02-05T03:00Z.
  const result = claudeAdapter.parseResult(
    output([line], { exitCode: 1, endedAt: Date.parse('2026-02-05T02:07:03Z') }),
  );
  t.equal(result.failure, 'rate-limited');
  t.equal(result.resetAt, '2026-02-05T03:00:00.000Z');
});

t.test('rate limited without a reset time it can place', async (t) => {
  const line = JSON.stringify({
    type: 'result',
    subtype: 'error_during_execution',
    is_error: true,
    api_error_status: 429,
    result: 'API Error: Request rejected',
  });
  const result = claudeAdapter.parseResult(output([line], { exitCode: 1 }));
  t.same(result, { ok: false, failure: 'rate-limited', detail: 'API Error: Request rejected' });
});

t.test('max turns', async (t) => {
  const line = JSON.stringify({
    type: 'result',
    subtype: 'error_max_turns',
    is_error: true,
    num_turns: 30,
    session_id: 's9',
  });
  t.same(claudeAdapter.parseResult(output([init, line], { exitCode: 1 })), {
    ok: false,
    failure: 'max-turns',
    detail: 'stopped after 30 turns (error_max_turns)',
    sessionId: 's9',
    turns: 30,
    model: 'claude-opus',
  });
});

t.test('another error is agent-error with the message', async (t) => {
  const line = JSON.stringify({
    type: 'result',
    subtype: 'error_during_execution',
    is_error: true,
    errors: ['Tool crashed', 'gave up'],
  });
  t.same(claudeAdapter.parseResult(output([line], { exitCode: 1 })), {
    ok: false,
    failure: 'agent-error',
    detail: 'Tool crashed; gave up',
  });
});

t.test('a non-zero exit without a result line is a crash, with the stderr tail', async (t) => {
  t.same(
    claudeAdapter.parseResult(
      output([init, assistant], { exitCode: 137, signal: null, stderrTail: 'first\nKilled\n' }),
    ),
    {
      ok: false,
      failure: 'crashed',
      detail: 'exit 137 without a result line: Killed',
      sessionId: 'sess-init',
      model: 'claude-opus',
    },
  );
  t.same(claudeAdapter.parseResult(output([init], { exitCode: null, signal: 'SIGSEGV' })), {
    ok: false,
    failure: 'crashed',
    detail: 'signal SIGSEGV without a result line',
    sessionId: 'sess-init',
    model: 'claude-opus',
  });
});

t.test('nothing at all on stdout is no-output', async (t) => {
  const result = claudeAdapter.parseResult(
    output([], {
      exitCode: 1,
      stderrTail: '--dangerously-skip-permissions cannot be used with root/sudo privileges for security reasons',
    }),
  );
  t.same(result, {
    ok: false,
    failure: 'no-output',
    detail:
      "nothing on stdout (exit 1): --dangerously-skip-permissions cannot be used with root/sudo privileges for security reasons; claude never runs as root: run it as the repo's user (agent-runner dispatch REPO, or run/orchestrate as a non-root user that owns the checkout)",
  });
  t.equal(claudeAdapter.parseResult(output(['', '  '])).failure, 'no-output', 'blank lines are nothing');
});

t.test('the watchdog decides when there is no result line', async (t) => {
  t.same(claudeAdapter.parseResult(output([init], { exitCode: null, signal: 'SIGTERM', endedBy: 'idle-timeout' })), {
    ok: false,
    failure: 'idle-timeout',
    detail: 'no result line before the idle-timeout watchdog ended it',
    sessionId: 'sess-init',
    model: 'claude-opus',
  });
  t.equal(
    claudeAdapter.parseResult(output([], { exitCode: null, signal: 'SIGKILL', endedBy: 'wall-clock' })).failure,
    'wall-clock',
  );
});

t.test('a success result stays ok when claude lingered and the watchdog ended it', async (t) => {
  const result = claudeAdapter.parseResult(
    output([init, success], { exitCode: null, signal: 'SIGTERM', endedBy: 'idle-timeout' }),
  );
  t.equal(result.ok, true);
  t.equal(result.detail, 'ended by idle-timeout after its result line');
});

t.test('adapterFor returns the claude adapter', async (t) => {
  t.equal(adapterFor('claude'), claudeAdapter);
  t.equal(claudeAdapter.defaultBinary, 'claude');
});

t.test('claude as root: its refusal with the remedy (the text of claude 2.1.197 as root)', async (t) => {
  const refused = claudeAdapter.parseResult(
    output([], {
      exitCode: 1,
      stderrTail: '--dangerously-skip-permissions cannot be used with root/sudo privileges for security reasons',
    }),
  );
  t.equal(refused.ok, false);
  t.match(
    refused.detail,
    /cannot be used with root\/sudo privileges for security reasons; claude never runs as root: run it as the repo's user \(agent-runner dispatch REPO/,
  );
});

// ---------------------------------------------------------------- roles (issue 24)

const review = {
  schemaText: '{"type":"object","properties":{},"required":[],"additionalProperties":false}',
  schemaFile: '/srv/handoff/review/TASK-3/schema.json',
  verdictFile: '/srv/handoff/review/TASK-3/verdict.json',
};

t.test('buildCommand: a reviewer loses the write tools and gets the verdict schema; bypass stays', async (t) => {
  const command = claudeAdapter.buildCommand({ ...invocation, role: 'review', review });
  t.same(command.args, [
    '-p',
    '--output-format',
    'stream-json',
    '--verbose',
    '--dangerously-skip-permissions',
    '--disallowedTools',
    'Edit,Write,NotebookEdit',
    '--json-schema',
    review.schemaText,
    '--model',
    'opus',
    '--effort',
    'high',
  ]);
  t.same(command.env, { HOME: '/home/agent', PATH: '/usr/bin', AGENT_ROLE: 'review' });
  t.same(command.stdin, invocation.prompt, 'the prompt still goes on stdin');
  t.same(
    claudeAdapter.buildCommand({ ...invocation, review }).args.slice(5, 9),
    ['--disallowedTools', 'Edit,Write,NotebookEdit', '--json-schema', review.schemaText],
    'review files without a role: a reviewer',
  );
  t.same(
    claudeAdapter.buildCommand({ ...invocation, role: 'review' }).args.slice(5),
    ['--disallowedTools', 'Edit,Write,NotebookEdit', '--model', 'opus', '--effort', 'high'],
    'a reviewer without files is still read-only, with no schema to give',
  );
});

t.test('buildCommand: a fixer is an implementer with AGENT_ROLE=fix, review files or not', async (t) => {
  const command = claudeAdapter.buildCommand({ ...invocation, role: 'fix', review });
  t.same(command.args, claudeAdapter.buildCommand(invocation).args);
  t.same(command.env.AGENT_ROLE, 'fix');
});

t.test("parseResult: the result's structured_output comes back as JSON text, whatever it holds", async (t) => {
  const verdict = { task_id: 'TASK-3', round: 1, verdict: 'approve', criteria: [] };
  const withOutput = JSON.stringify({ ...JSON.parse(success), structured_output: verdict });
  const result = claudeAdapter.parseResult(output([init, withOutput]));
  t.equal(result.ok, true);
  t.equal(result.structuredOutput, JSON.stringify(verdict));
  t.same(JSON.parse(result.structuredOutput!), verdict);
  t.equal(claudeAdapter.parseResult(output([init, success])).structuredOutput, undefined, 'none: absent');
  for (const held of ['not a verdict', null, [1, 2], {}]) {
    const line = JSON.stringify({ ...JSON.parse(success), structured_output: held });
    t.equal(claudeAdapter.parseResult(output([line])).structuredOutput, JSON.stringify(held), JSON.stringify(held));
  }
});

t.test('error_max_structured_output_retries (no valid structured output): an agent error, no output', async (t) => {
  // The shape claude 2.1.197 yields when the model never produced output that passed the schema.
  const line = JSON.stringify({
    type: 'result',
    subtype: 'error_max_structured_output_retries',
    is_error: true,
    num_turns: 6,
    stop_reason: 'tool_use',
    session_id: 's9',
    total_cost_usd: 0.02,
    usage: { input_tokens: 1, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 2 },
    modelUsage: {},
    permission_denials: [],
  });
  const result = claudeAdapter.parseResult(output([init, line], { exitCode: 1 }));
  t.same(
    [result.ok, result.failure, result.detail, result.structuredOutput, result.costUsd],
    [false, 'agent-error', 'result error_max_structured_output_retries with is_error', undefined, 0.02],
  );
});
