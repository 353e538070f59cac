// The runner's side of the launch protocol for a model session: the start request names its task (root grants the
// capability for it), a command that is no model session names none, and the broker's rate-limit reset on the exit
// event reaches the session's result through the remote launcher, superviseAgent and the adapter.
import t from 'tap';
import { fakeChannelPair, fakeClock } from '../helpers/fake-ports.js';
import { remoteLauncher, type LaunchEvent, type StartRequest } from '../../src/launch/index.js';
import { encodeMessage } from '../../src/launch/protocol.js';
import { superviseAgent } from '../../src/agent/supervise.js';
import { codexAdapter } from '../../src/agent/adapters/codex.js';
import { commandAdapter } from '../../src/agent/adapters/command.js';
import type { ProcessPort } from '../../src/ports.js';
import type { AgentInvocation } from '../../src/types.js';

const local: Pick<ProcessPort, 'which' | 'startTimeOf'> = {
  which: async (program) => program,
  startTimeOf: async () => undefined,
};
const tick = () => new Promise((resolve) => setImmediate(resolve));
const limits = { idleTimeoutMs: 60_000, wallClockMs: 600_000, killGraceMs: 5000 };

/** Root's end: every request it got, and a way to answer. */
function rootEnd() {
  const [runnerSide, root] = fakeChannelPair();
  const requests: StartRequest[] = [];
  root.onLine((line) => {
    const message = JSON.parse(line) as StartRequest;
    if (message.op === 'start') requests.push(message);
  });
  const send = (event: LaunchEvent) => root.send(encodeMessage(event));
  return { launcher: remoteLauncher(runnerSide, local), requests, send };
}

const invocation: AgentInvocation = {
  binary: '/usr/bin/codex',
  prompt: 'Your task: TASK-4\n',
  workspace: '/home/agent/tasks/TASK-4',
  taskId: 'TASK-4',
  model: undefined,
  effort: undefined,
  env: { HOME: '/home/agent', PATH: '/usr/bin' },
  broker: { url: 'http://127.0.0.1:701', session: 'run-1:TASK-4:implement:1' },
};

t.test("a model session's start names its task; a git step as the agent names none", async (t) => {
  const { launcher, requests, send } = rootEnd();
  const agent = launcher.processFor('agent');
  const quiet = { onStdoutLine: () => undefined, onStderrLine: () => undefined };
  const session = agent.start(codexAdapter.buildCommand(invocation), quiet);
  const git = agent.start({ program: 'git', args: ['status'], env: { PATH: '/usr/bin' }, cwd: '/home/agent' }, quiet);
  await tick();
  await tick();
  t.same(
    requests.map((request) => [request.program, request.task]),
    [
      ['/usr/bin/codex', 'TASK-4'],
      ['git', undefined],
    ],
  );
  t.notOk('task' in requests[1]!, 'no task field at all');
  send({ id: 1, event: 'exited', exitCode: 0, signal: null });
  send({ id: 2, event: 'exited', exitCode: 0, signal: null });
  t.same(await session.exited, { exitCode: 0, signal: null }, 'no broker reset: none on the exit');
  await git.exited;
});

t.test("a task id the runner itself would refuse is not sent: the launcher's check says why", async (t) => {
  const { launcher, requests } = rootEnd();
  const result = await launcher
    .processFor('agent')
    .run({ ...commandAdapter.buildCommand({ ...invocation, command: ['/bin/true'] }), modelSessionOf: '../etc' });
  t.equal(result.exitCode, 126);
  t.match(result.stderr, /the launcher refused to start \/usr\/bin\/codex as the agent: .*task/);
  t.same(requests, []);
});

t.test("the broker's reset on the exit event: through superviseAgent into a rate-limited result", async (t) => {
  const { launcher, send } = rootEnd();
  const clock = fakeClock(Date.parse('2026-12-06T12:00:00Z'));
  const resetAt = '2026-12-06T12:45:00.000Z';
  // codex retries a 429 on its own; here it gave up with an error that says nothing of the limit.
  const running = superviseAgent(
    { process: launcher.processFor('agent'), clock },
    codexAdapter.buildCommand(invocation),
    limits,
    () => undefined,
  );
  await tick();
  send({ id: 1, event: 'started', pid: 4242 });
  send({ id: 1, event: 'stdout', line: '{"type":"thread.started","thread_id":"t-1"}' });
  send({ id: 1, event: 'stdout', line: '{"type":"turn.started"}' });
  send({ id: 1, event: 'stdout', line: '{"type":"turn.failed","error":{"message":"stream disconnected"}}' });
  send({ id: 1, event: 'exited', exitCode: 1, signal: null, rateLimitResetAt: resetAt });
  const run = await running;
  t.equal(run.rateLimitResetAt, resetAt, 'the supervised run carries it');
  const result = codexAdapter.parseResult(run);
  t.same([result.ok, result.failure, result.resetAt], [false, 'rate-limited', resetAt]);
  t.match(result.detail, /the CLI said: stream disconnected/);
});
