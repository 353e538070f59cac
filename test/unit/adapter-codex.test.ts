import t from 'tap';
import { codexAdapter } from '../../src/agent/adapters/codex.js';
import { adapterFor } from '../../src/agent/adapters/index.js';
import type { AgentInvocation, AgentOutput } from '../../src/types.js';

const invocation: AgentInvocation = {
  binary: 'codex',
  prompt: 'Your task: TASK-9 "Fix y" (file backlog/tasks/task-9 - Fix-y.md)\n',
  workspace: '/srv/repo/.worktrees/task-9',
  taskId: 'TASK-9',
  model: 'gpt-5-codex',
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
const line = (value: unknown) => JSON.stringify(value);

const started = line({ type: 'thread.started', thread_id: '0199a213-81c0-7800-8aa1-bbab2a035a53' });
const turnStarted = line({ type: 'turn.started' });
const message = line({ type: 'item.completed', item: { id: 'item_1', type: 'agent_message', text: 'Done' } });
const completed = line({
  type: 'turn.completed',
  usage: { input_tokens: 2946, cached_input_tokens: 1000, output_tokens: 7 },
});
// Captured from codex 0.171 without network.
const reconnecting = line({
  type: 'error',
  message:
    'Reconnecting... 2/5 (stream disconnected before completion: failed to lookup address information: Name does not resolve)',
});

t.test('buildCommand: codex exec argv, prompt on stdin via -, workspace as -C and cwd', async (t) => {
  t.same(codexAdapter.buildCommand(invocation), {
    program: 'codex',
    args: [
      'exec',
      '--json',
      '-m',
      'gpt-5-codex',
      '-c',
      'model_reasoning_effort=high',
      '-s',
      'workspace-write',
      '-C',
      '/srv/repo/.worktrees/task-9',
      '-',
    ],
    env: { HOME: '/home/agent', PATH: '/usr/bin', AGENT_ROLE: 'implement' },
    cwd: '/srv/repo/.worktrees/task-9',
    stdin: invocation.prompt,
    modelSessionOf: 'TASK-9',
  });
  t.same(codexAdapter.buildCommand({ ...invocation, model: undefined, effort: undefined }).args, [
    'exec',
    '--json',
    '-s',
    'workspace-write',
    '-C',
    '/srv/repo/.worktrees/task-9',
    '-',
  ]);
});

t.test('a completed turn with exit 0 is ok, with thread id, turns and tokens', async (t) => {
  t.same(codexAdapter.parseResult(output([started, turnStarted, reconnecting, message, completed])), {
    ok: true,
    sessionId: '0199a213-81c0-7800-8aa1-bbab2a035a53',
    turns: 1,
    inputTokens: 2946,
    outputTokens: 7,
    usage: { input: 1946, output: 7, cacheRead: 1000 },
    finalMessage: 'Done',
  });
});

t.test('garbage between events does not break parsing', async (t) => {
  const result = codexAdapter.parseResult(
    output(['WARNING: proceeding', started, '{oops', turnStarted, 'x', completed, '']),
  );
  t.equal(result.ok, true);
  t.equal(result.inputTokens, 2946);
});

t.test('turn.failed: rate limit with a relative reset time', async (t) => {
  const failed = line({
    type: 'turn.failed',
    error: { message: "You've hit your usage limit. Upgrade to Pro or try again in 2 hours 5 minutes." },
  });
  const result = codexAdapter.parseResult(
    output([started, turnStarted, failed], { exitCode: 1, endedAt: Date.parse('2026-03-01T10:00:00Z') }),
  );
  t.same(result, {
    ok: false,
    failure: 'rate-limited',
    detail: "You've hit your usage limit. Upgrade to Pro or try again in 2 hours 5 minutes.",
    resetAt: '2026-03-01T12:05:00.000Z',
    sessionId: '0199a213-81c0-7800-8aa1-bbab2a035a53',
  });
});

t.test('turn.failed: unauthorized is not-logged-in', async (t) => {
  const failed = line({
    type: 'turn.failed',
    error: { message: 'unexpected status 401 Unauthorized: Missing bearer authentication' },
  });
  t.equal(codexAdapter.parseResult(output([started, failed], { exitCode: 1 })).failure, 'not-logged-in');
});

t.test('turn.failed with another message is agent-error', async (t) => {
  const failed = line({ type: 'turn.failed', error: { message: 'context window exceeded' } });
  t.same(codexAdapter.parseResult(output([started, failed], { exitCode: 1 })), {
    ok: false,
    failure: 'agent-error',
    detail: 'context window exceeded',
    sessionId: '0199a213-81c0-7800-8aa1-bbab2a035a53',
  });
});

t.test('a non-zero exit without turn.failed is a crash with the last error', async (t) => {
  const error = line({ type: 'error', message: 'stream error: connection reset' });
  t.same(codexAdapter.parseResult(output([started, error], { exitCode: 1 })), {
    ok: false,
    failure: 'crashed',
    detail: 'exit 1: stream error: connection reset',
    sessionId: '0199a213-81c0-7800-8aa1-bbab2a035a53',
  });
  t.same(codexAdapter.parseResult(output([started], { exitCode: null, signal: 'SIGKILL' })), {
    ok: false,
    failure: 'crashed',
    detail: 'signal SIGKILL',
    sessionId: '0199a213-81c0-7800-8aa1-bbab2a035a53',
  });
});

t.test('the watchdog: idle-timeout or wall-clock, with the last error as context', async (t) => {
  t.same(
    codexAdapter.parseResult(
      output([started, turnStarted, reconnecting], { exitCode: null, signal: 'SIGTERM', endedBy: 'wall-clock' }),
    ),
    {
      ok: false,
      failure: 'wall-clock',
      detail:
        'ended by the wall-clock watchdog; last error: Reconnecting... 2/5 (stream disconnected before completion: failed to lookup address information: Name does not resolve)',
      sessionId: '0199a213-81c0-7800-8aa1-bbab2a035a53',
    },
  );
  t.equal(
    codexAdapter.parseResult(output([], { exitCode: null, signal: 'SIGTERM', endedBy: 'idle-timeout' })).failure,
    'idle-timeout',
  );
});

t.test('nothing on stdout is no-output; exit 0 without a completed turn is agent-error', async (t) => {
  t.same(
    codexAdapter.parseResult(output([], { exitCode: 2, stderrTail: "error: unexpected argument '--bogus' found" })),
    {
      ok: false,
      failure: 'no-output',
      detail: "nothing on stdout (exit 2): error: unexpected argument '--bogus' found",
    },
  );
  t.same(codexAdapter.parseResult(output([started, turnStarted])), {
    ok: false,
    failure: 'agent-error',
    detail: 'exit 0 without a completed turn',
    sessionId: '0199a213-81c0-7800-8aa1-bbab2a035a53',
  });
});

t.test('tokens add up over several turns', async (t) => {
  const second = line({
    type: 'turn.completed',
    usage: { input_tokens: 10, cached_input_tokens: 0, output_tokens: 3 },
  });
  const result = codexAdapter.parseResult(output([started, completed, second]));
  t.equal(result.turns, 2);
  t.equal(result.inputTokens, 2956);
  t.equal(result.outputTokens, 10);
});

t.test('adapterFor returns the codex adapter', async (t) => {
  t.equal(adapterFor('codex'), codexAdapter);
  t.equal(codexAdapter.defaultBinary, 'codex');
});

// ---------------------------------------------------------------- roles (issue 24)

const review = {
  schemaText: '{}',
  schemaFile: '/srv/handoff/review/TASK-9/schema.json',
  verdictFile: '/srv/handoff/review/TASK-9/verdict.json',
};

t.test(
  'buildCommand: a reviewer runs read-only with the schema file and its last message to the verdict',
  async (t) => {
    const command = codexAdapter.buildCommand({ ...invocation, role: 'review', review });
    t.same(command.args, [
      'exec',
      '--json',
      '-m',
      'gpt-5-codex',
      '-c',
      'model_reasoning_effort=high',
      '-s',
      'read-only',
      '--output-schema',
      '/srv/handoff/review/TASK-9/schema.json',
      '-o',
      '/srv/handoff/review/TASK-9/verdict.json',
      '-C',
      '/srv/repo/.worktrees/task-9',
      '-',
    ]);
    t.same(command.env, { HOME: '/home/agent', PATH: '/usr/bin', AGENT_ROLE: 'review' });
    t.same(codexAdapter.buildCommand({ ...invocation, review }).args, command.args, 'review files alone: a reviewer');
    t.same(
      codexAdapter.buildCommand({ ...invocation, role: 'review' }).args.slice(6),
      ['-s', 'read-only', '-C', '/srv/repo/.worktrees/task-9', '-'],
      'a reviewer without files: read-only, nothing to write',
    );
  },
);

t.test('buildCommand: a fixer writes its workspace like an implementer', async (t) => {
  const command = codexAdapter.buildCommand({ ...invocation, role: 'fix', review });
  t.same(command.args, codexAdapter.buildCommand(invocation).args);
  t.equal(command.env.AGENT_ROLE, 'fix');
});
