// Contract: the real Claude Code CLI (2.1.197) accepts the argv claudeAdapter
// builds (with --max-budget-usd, as for a task with task_usd), and what it prints without credentials comes back from
// parseResult
// as 'not-logged-in'. No credentials, HOME a temp dir, env built by hand.
// Claude refuses to skip permissions as root, and agents never run as root:
// as root the test drops to `nobody` (and cuts the network with unshare -n).
import t from 'tap';
import { chownSync, readFileSync, realpathSync } from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { claudeAdapter } from '../../src/agent/adapters/claude.js';
import { superviseAgent } from '../../src/agent/supervise.js';
import { realClock, realProcess } from '../../src/io/real-ports.js';
import { dropPrivileges } from '../../src/control/repo-user/privdrop.js';
import type { Command } from '../../src/types.js';
import { tempDir } from '../helpers/temp.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const claude = realpathSync(path.join(root, 'node_modules/.bin/claude'));
const isRoot = process.getuid?.() === 0;
const NOBODY = { name: 'nobody', uid: 65534, gid: 65534, home: '/nonexistent', shell: '/usr/sbin/nologin' };

function asAgent(command: Command): Command {
  if (!isRoot) return command;
  const dropped = dropPrivileges(NOBODY, command);
  return { ...dropped, program: 'unshare', args: ['-n', '--', dropped.program, ...dropped.args] };
}

function invocationIn(t: Parameters<typeof tempDir>[0]) {
  const home = tempDir(t, 'claude-home-');
  if (isRoot) chownSync(home, NOBODY.uid, NOBODY.gid);
  return {
    binary: claude,
    prompt: 'Your task: TASK-1 "Say hi" (file backlog/tasks/task-1 - Say-hi.md)\n',
    workspace: home,
    taskId: 'TASK-1',
    model: 'sonnet',
    effort: 'high',
    // What a task with task_usd gets: the budget it has left.
    maxBudgetUsd: 0.25,
    env: { HOME: home, PATH: `${path.dirname(process.execPath)}:/usr/bin:/bin`, LANG: 'C.UTF-8' },
  };
}

const limits = { idleTimeoutMs: 30_000, wallClockMs: 60_000, killGraceMs: 2000 };

t.test('claude accepts our argv and, without a login, reports not-logged-in', async (t) => {
  const command = claudeAdapter.buildCommand(invocationIn(t));
  const run = await superviseAgent(
    { process: realProcess, clock: realClock },
    asAgent(command),
    limits,
    () => undefined,
  );
  t.notMatch(
    run.stderrTail,
    /unknown option|error: option|cannot be used with root/i,
    `no argument error (stderr: ${run.stderrTail})`,
  );
  t.match(
    run.stdoutLines[0] ?? '',
    /"type":"system","subtype":"init"/,
    'the first line is the init event: the argv parsed',
  );
  t.match(run.stdoutLines.join('\n'), /"permissionMode":"bypassPermissions"/, 'the permission flag took effect');
  t.equal(run.endedBy, 'exit');
  t.equal(run.exitCode, 1);
  const result = claudeAdapter.parseResult(run);
  t.equal(result.ok, false);
  t.equal(result.failure, 'not-logged-in');
  t.equal(result.detail, 'Not logged in · Please run /login');
  t.match(result.sessionId ?? '', /^[0-9a-f-]{36}$/, 'the session id is parsed');
  t.equal(result.costUsd, 0);
});

t.test('control: an argv claude does not accept is visible as an argument error', async (t) => {
  const command = claudeAdapter.buildCommand(invocationIn(t));
  const bogus = { ...command, args: [...command.args, '--no-such-flag'] };
  const run = await superviseAgent({ process: realProcess, clock: realClock }, asAgent(bogus), limits, () => undefined);
  t.match(run.stderrTail, /unknown option '--no-such-flag'/);
  t.same(run.stdoutLines, []);
  t.equal(claudeAdapter.parseResult(run).failure, 'no-output');
});

t.test('control: claude parses --max-budget-usd itself (it refuses 0, as the adapter never passes it)', async (t) => {
  const command = claudeAdapter.buildCommand(invocationIn(t));
  t.same(
    command.args.slice(command.args.indexOf('--max-budget-usd'), command.args.indexOf('--max-budget-usd') + 2),
    ['--max-budget-usd', '0.25'],
    'the adapter passed the flag',
  );
  const zero = {
    ...command,
    args: command.args.map((arg, index) => (command.args[index - 1] === '--max-budget-usd' ? '0' : arg)),
  };
  const run = await superviseAgent({ process: realProcess, clock: realClock }, asAgent(zero), limits, () => undefined);
  t.match(
    run.stderrTail,
    /--max-budget-usd must be a positive number greater than 0/,
    "the flag reached claude's own argument check",
  );
  t.same(run.stdoutLines, []);
  t.equal(run.exitCode, 1);
});

t.test('the recorded fixture is still what claude prints: the same events, the same usage keys', async (t) => {
  const command = claudeAdapter.buildCommand(invocationIn(t));
  const run = await superviseAgent(
    { process: realProcess, clock: realClock },
    asAgent(command),
    limits,
    () => undefined,
  );
  const fixture = readFileSync(path.join(root, 'test/fixtures/agents/claude-2.1.197-not-logged-in.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean);
  const shape = (lines: readonly string[]) =>
    lines
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .map((event) => ({
        type: event.type,
        subtype: event.subtype ?? null,
        usage: event.type === 'result' ? Object.keys(event.usage as object).sort() : null,
        cost: event.type === 'result' ? typeof event.total_cost_usd : null,
      }));
  t.same(
    shape(run.stdoutLines),
    shape(fixture),
    'event types, result usage keys and the cost field match the recorded output',
  );
  const result = claudeAdapter.parseResult(run);
  t.same(result.usage, { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, 'usage is reported (zeros), not unknown');
  t.equal(typeof result.model, 'string', 'the init event names the model');
});

// ---------------------------------------------------------------- the reviewer's argv (issue 24)

// Strict like the verdict schema (every key required, no others); its content is not what this test is about.
const SCHEMA = JSON.stringify({
  $schema: 'http://json-schema.org/draft-07/schema#',
  type: 'object',
  additionalProperties: false,
  required: ['verdict', 'summary'],
  properties: {
    verdict: { type: 'string', enum: ['approve', 'changes_requested'] },
    summary: { type: 'string', maxLength: 2000 },
  },
});

function reviewerIn(t: Parameters<typeof tempDir>[0]) {
  const base = invocationIn(t);
  return {
    ...base,
    role: 'review' as const,
    review: { schemaText: SCHEMA, schemaFile: '/nonexistent/schema.json', verdictFile: '/nonexistent/verdict.json' },
  };
}

t.test('claude accepts the reviewer argv: write tools gone, StructuredOutput there, then not-logged-in', async (t) => {
  const command = claudeAdapter.buildCommand(reviewerIn(t));
  t.ok(command.args.includes('--json-schema') && command.args.includes('--disallowedTools'), 'the reviewer flags');
  const run = await superviseAgent(
    { process: realProcess, clock: realClock },
    asAgent(command),
    limits,
    () => undefined,
  );
  t.notMatch(run.stderrTail, /unknown option|error: option|json-schema|cannot be used with root/i, run.stderrTail);
  const init = JSON.parse(run.stdoutLines[0] ?? '{}') as { type?: string; tools?: string[]; permissionMode?: string };
  t.equal(init.type, 'system', 'the first line is the init event: the argv parsed');
  t.equal(init.permissionMode, 'bypassPermissions', 'bypass stays: nothing stalls on a prompt');
  const tools = init.tools ?? [];
  t.ok(tools.includes('Read') && tools.includes('Bash'), `it can still read and run commands (${tools.join(',')})`);
  for (const denied of ['Edit', 'Write', 'NotebookEdit']) t.notOk(tools.includes(denied), `${denied} is gone`);
  t.ok(tools.includes('StructuredOutput'), '--json-schema gave the session its StructuredOutput tool');
  const result = claudeAdapter.parseResult(run);
  t.same([result.ok, result.failure, result.structuredOutput], [false, 'not-logged-in', undefined]);
});

t.test('control: the implementer has the write tools and no StructuredOutput', async (t) => {
  const run = await superviseAgent(
    { process: realProcess, clock: realClock },
    asAgent(claudeAdapter.buildCommand(invocationIn(t))),
    limits,
    () => undefined,
  );
  const tools = (JSON.parse(run.stdoutLines[0] ?? '{}') as { tools?: string[] }).tools ?? [];
  t.ok(
    ['Edit', 'Write', 'NotebookEdit'].every((tool) => tools.includes(tool)),
    tools.join(','),
  );
  t.notOk(tools.includes('StructuredOutput'));
});

t.test('control: claude parses --json-schema itself (a schema that is not an object is refused)', async (t) => {
  const command = claudeAdapter.buildCommand(reviewerIn(t));
  const index = command.args.indexOf('--json-schema') + 1;
  const bad = { ...command, args: command.args.map((arg, at) => (at === index ? '[1]' : arg)) };
  const run = await superviseAgent({ process: realProcess, clock: realClock }, asAgent(bad), limits, () => undefined);
  t.match(`${run.stdoutLines.join('\n')}\n${run.stderrTail}`, /--json-schema must be a JSON object/);
  t.notMatch(run.stdoutLines.join('\n'), /"type":"system"/, 'no session started');
});
