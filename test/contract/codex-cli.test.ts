// Contract: the real Codex CLI (0.171) accepts the argv codexAdapter builds,
// and, with no credentials and no network, retries forever: the supervisor's
// watchdog must end it, parseResult must say so, and nothing of its process
// group may survive. As root the run gets its own empty network namespace
// (unshare -n), so nothing leaves the machine.
import t from 'tap';
import { readFileSync, readdirSync, realpathSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { codexAdapter } from '../../src/agent/adapters/codex.js';
import { superviseAgent } from '../../src/agent/supervise.js';
import { realClock, realProcess } from '../../src/io/real-ports.js';
import type { Command } from '../../src/types.js';
import { gitRepo, tempDir } from '../helpers/temp.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const codex = realpathSync(path.join(root, 'node_modules/.bin/codex'));
const isRoot = process.getuid?.() === 0;

function isolated(command: Command): Command {
  return isRoot ? { ...command, program: 'unshare', args: ['-n', '--', command.program, ...command.args] } : command;
}

function groupMembers(pgid: number): number[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .map(Number)
    .filter((pid) => {
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        return Number(fields[2]) === pgid && fields[0] !== 'Z';
      } catch {
        return false;
      }
    });
}

function invocationIn(t: Parameters<typeof tempDir>[0]) {
  const home = tempDir(t, 'codex-home-');
  return {
    binary: codex,
    prompt: 'Your task: TASK-1 "Say hi" (file backlog/tasks/task-1 - Say-hi.md)\n',
    workspace: gitRepo(t),
    taskId: 'TASK-1',
    model: 'gpt-5-codex',
    effort: 'high',
    env: { HOME: home, PATH: `${path.dirname(process.execPath)}:/usr/bin:/bin`, LANG: 'C.UTF-8' },
  };
}

t.test('codex accepts our argv and only the watchdog ends it; its group is gone after', async (t) => {
  const command = codexAdapter.buildCommand(invocationIn(t));
  let pid = -1;
  t.teardown(() => {
    try {
      if (pid > 0) process.kill(-pid, 'SIGKILL');
    } catch {
      // gone, as it should be
    }
  });
  const started = Date.now();
  const run = await superviseAgent(
    {
      process: {
        ...realProcess,
        start: (cmd, handlers) => {
          const child = realProcess.start(cmd, handlers);
          pid = child.pid;
          return child;
        },
      },
      clock: realClock,
    },
    isolated(command),
    { idleTimeoutMs: 5000, wallClockMs: 12_000, killGraceMs: 2000 },
    () => undefined,
  );
  const elapsed = Date.now() - started;
  t.notMatch(run.stderrTail, /unexpected argument|Usage: codex|error: invalid value/i, 'no argument error');
  t.match(
    run.stdoutLines[0] ?? '',
    /^\{"type":"thread.started","thread_id":"[0-9a-f-]+"\}$/,
    'the first event is thread.started: the argv parsed and the prompt came in on stdin',
  );
  t.ok(['idle-timeout', 'wall-clock'].includes(run.endedBy), `ended by the watchdog (${run.endedBy})`);
  t.ok(elapsed < 20_000, `within the limits (${elapsed} ms)`);
  const result = codexAdapter.parseResult(run);
  t.equal(result.ok, false);
  t.equal(result.failure, run.endedBy);
  const types = (lines: readonly string[]) =>
    lines
      .filter((line) => line.startsWith('{'))
      .slice(0, 3)
      .map((line) => (JSON.parse(line) as { type: string }).type);
  const fixture = readFileSync(path.join(root, 'test/fixtures/agents/codex-0.171-no-network.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean);
  t.same(types(run.stdoutLines), types(fixture), 'the recorded no-network output is still what codex prints first');
  t.equal(result.usage, undefined, 'no turn completed: usage unknown, not zero');
  t.match(result.sessionId ?? '', /^[0-9a-f-]{36}$/);
  t.equal(run.pid, pid);
  await new Promise((resolve) => setTimeout(resolve, 200));
  t.same(groupMembers(pid), [], 'no process of the codex group is left');
});

t.test('control: an argv codex does not accept is visible as an argument error', async (t) => {
  const command = codexAdapter.buildCommand(invocationIn(t));
  const bogus = { ...command, args: [...command.args.slice(0, 2), '--no-such-flag', ...command.args.slice(2)] };
  const run = await superviseAgent(
    { process: realProcess, clock: realClock },
    isolated(bogus),
    { idleTimeoutMs: 10_000, wallClockMs: 20_000, killGraceMs: 1000 },
    () => undefined,
  );
  t.match(run.stderrTail, /unexpected argument '--no-such-flag'/);
  t.equal(run.endedBy, 'exit');
  t.equal(run.exitCode, 2);
  t.equal(codexAdapter.parseResult(run).failure, 'no-output');
});

// ---------------------------------------------------------------- the reviewer's argv (issue 24)

const SCHEMA = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  type: 'object',
  additionalProperties: false,
  required: ['verdict', 'summary'],
  properties: {
    verdict: { type: 'string', enum: ['approve', 'changes_requested'] },
    summary: { type: 'string', maxLength: 2000 },
  },
};

function reviewerIn(t: Parameters<typeof tempDir>[0], schemaFile?: string) {
  const handoff = tempDir(t, 'codex-review-');
  const file = schemaFile ?? path.join(handoff, 'schema.json');
  if (!schemaFile) writeFileSync(file, JSON.stringify(SCHEMA));
  return {
    ...invocationIn(t),
    role: 'review' as const,
    review: { schemaText: JSON.stringify(SCHEMA), schemaFile: file, verdictFile: path.join(handoff, 'verdict.json') },
  };
}

t.test(
  'codex accepts the reviewer argv (read-only, --output-schema, -o): it starts, only the watchdog ends it',
  async (t) => {
    const command = codexAdapter.buildCommand(reviewerIn(t));
    t.same(command.args.slice(command.args.indexOf('-s'), command.args.indexOf('-s') + 3), [
      '-s',
      'read-only',
      '--output-schema',
    ]);
    const run = await superviseAgent(
      { process: realProcess, clock: realClock },
      isolated(command),
      { idleTimeoutMs: 5000, wallClockMs: 12_000, killGraceMs: 2000 },
      () => undefined,
    );
    t.notMatch(run.stderrTail, /unexpected argument|Usage: codex|invalid value|output schema/i, run.stderrTail);
    t.match(run.stdoutLines[0] ?? '', /^\{"type":"thread.started"/, 'the argv parsed and the schema file was read');
    t.ok(['idle-timeout', 'wall-clock'].includes(run.endedBy), `ended by the watchdog (${run.endedBy})`);
    t.equal(codexAdapter.parseResult(run).failure, run.endedBy);
  },
);

t.test('control: codex reads the --output-schema file at start (a missing one fails at once)', async (t) => {
  const missing = path.join(tempDir(t, 'codex-review-'), 'no-schema.json');
  const run = await superviseAgent(
    { process: realProcess, clock: realClock },
    isolated(codexAdapter.buildCommand(reviewerIn(t, missing))),
    { idleTimeoutMs: 10_000, wallClockMs: 20_000, killGraceMs: 1000 },
    () => undefined,
  );
  t.match(run.stderrTail, new RegExp(`Failed to read output schema file ${missing}`));
  t.same([run.endedBy, run.exitCode], ['exit', 1]);
  t.equal(codexAdapter.parseResult(run).failure, 'no-output');
});

t.test('control: codex checks the sandbox value (the adapter passes one it knows)', async (t) => {
  const command = codexAdapter.buildCommand(reviewerIn(t));
  const bad = { ...command, args: command.args.map((arg) => (arg === 'read-only' ? 'readonly' : arg)) };
  const run = await superviseAgent(
    { process: realProcess, clock: realClock },
    isolated(bad),
    { idleTimeoutMs: 10_000, wallClockMs: 20_000, killGraceMs: 1000 },
    () => undefined,
  );
  t.match(run.stderrTail, /invalid value 'readonly' for '--sandbox <SANDBOX_MODE>'/);
  t.equal(run.exitCode, 2);
});
