import t from 'tap';
import { commandAdapter } from '../../src/agent/adapters/command.js';
import { adapterFor } from '../../src/agent/adapters/index.js';
import type { AgentInvocation, AgentOutput } from '../../src/types.js';

const invocation: AgentInvocation = {
  binary: '/srv/repo/tools/agent.sh',
  prompt: 'Your task: TASK-1 "A" (file backlog/tasks/task-1 - A.md)\n',
  workspace: '/srv/wt/task-1',
  taskId: 'TASK-1',
  model: undefined,
  effort: undefined,
  env: { HOME: '/home/agent', PATH: '/usr/bin' },
  command: ['tools/agent.sh', '--fast', 'x y'],
};
const output = (extra: Partial<AgentOutput> = {}): AgentOutput => ({
  stdoutLines: [],
  stderrTail: '',
  exitCode: 0,
  signal: null,
  endedBy: 'exit',
  ...extra,
});

t.test('buildCommand: the resolved program, the rest of argv, task and workspace in env', async (t) => {
  t.same(commandAdapter.buildCommand(invocation), {
    program: '/srv/repo/tools/agent.sh',
    args: ['--fast', 'x y'],
    env: {
      HOME: '/home/agent',
      PATH: '/usr/bin',
      AGENT_TASK_ID: 'TASK-1',
      AGENT_WORKSPACE: '/srv/wt/task-1',
      AGENT_ROLE: 'implement',
    },
    cwd: '/srv/wt/task-1',
    stdin: invocation.prompt,
    modelSessionOf: 'TASK-1',
  });
});

t.test('buildCommand: without a resolved binary, argv[0] is the program', async (t) => {
  t.equal(commandAdapter.buildCommand({ ...invocation, binary: '' }).program, 'tools/agent.sh');
  t.throws(() => commandAdapter.buildCommand({ ...invocation, binary: '', command: [] }), /TASK-1: no program/);
});

t.test('exit 0 is ok, even silent', async (t) => {
  t.same(commandAdapter.parseResult(output()), { ok: true });
});

t.test('a non-zero exit is crashed with the exit code and the last stderr line', async (t) => {
  t.same(commandAdapter.parseResult(output({ exitCode: 3, stderrTail: 'boom\n' })), {
    ok: false,
    failure: 'crashed',
    detail: 'exit 3: boom',
  });
  t.same(commandAdapter.parseResult(output({ exitCode: 4 })), { ok: false, failure: 'crashed', detail: 'exit 4' });
  t.same(commandAdapter.parseResult(output({ exitCode: null, signal: 'SIGSEGV' })), {
    ok: false,
    failure: 'crashed',
    detail: 'signal SIGSEGV',
  });
});

t.test('the watchdog decides idle-timeout and wall-clock', async (t) => {
  t.same(commandAdapter.parseResult(output({ exitCode: null, signal: 'SIGTERM', endedBy: 'idle-timeout' })), {
    ok: false,
    failure: 'idle-timeout',
    detail: 'ended by the idle-timeout watchdog',
  });
  t.same(commandAdapter.parseResult(output({ exitCode: 0, endedBy: 'wall-clock' })), {
    ok: false,
    failure: 'wall-clock',
    detail: 'ended by the wall-clock watchdog',
  });
});

t.test('adapterFor returns the command adapter', async (t) => {
  t.equal(adapterFor('command'), commandAdapter);
});

t.test('buildCommand: the role in AGENT_ROLE; a reviewer also gets the verdict and schema files', async (t) => {
  const review = {
    schemaText: '{}',
    schemaFile: '/srv/handoff/review/TASK-1/schema.json',
    verdictFile: '/srv/handoff/review/TASK-1/verdict.json',
  };
  const reviewer = commandAdapter.buildCommand({ ...invocation, role: 'review', review });
  t.same(reviewer.env, {
    HOME: '/home/agent',
    PATH: '/usr/bin',
    AGENT_TASK_ID: 'TASK-1',
    AGENT_WORKSPACE: '/srv/wt/task-1',
    AGENT_ROLE: 'review',
    AGENT_REVIEW_VERDICT: '/srv/handoff/review/TASK-1/verdict.json',
    AGENT_REVIEW_SCHEMA: '/srv/handoff/review/TASK-1/schema.json',
  });
  t.same(reviewer.args, ['--fast', 'x y'], 'argv unchanged');
  const fixer = commandAdapter.buildCommand({ ...invocation, role: 'fix', review });
  t.equal(fixer.env.AGENT_ROLE, 'fix');
  t.notOk('AGENT_REVIEW_VERDICT' in fixer.env, 'a fixer gets no verdict file');
  t.notOk('AGENT_REVIEW_SCHEMA' in fixer.env);
});
