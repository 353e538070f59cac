import t from 'tap';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, symlinkSync } from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseInstructions, safeRelativePath } from '../../src/scripted-agent/instructions.js';
import { commitMessage, finishedTaskText, planRun } from '../../src/scripted-agent/plan.js';
import {
  looksLikeClaudeArgv,
  readClaudeArgv,
  sessionIdFor,
  taskIdFromPrompt,
  usageFor,
} from '../../src/scripted-agent/claude-stream.js';
import { parseTaskFile } from '../../src/board/parse.js';
import { claudeAdapter } from '../../src/agent/adapters/claude.js';
import { commandAdapter } from '../../src/agent/adapters/command.js';
import { superviseAgent } from '../../src/agent/supervise.js';
import { realClock, realProcess } from '../../src/io/real-ports.js';
import { buildPrompt } from '../../src/agent/prompt.js';
import type { AgentInvocation, Task } from '../../src/types.js';
import { GIT_TEST_ENV, git, gitRepo, tempDir } from '../helpers/temp.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const scriptedAgent = path.join(root, 'bin/scripted-agent');

function taskFile(
  id: number,
  title: string,
  description: string,
  criteria: string[] = ['it works', 'it is tested'],
): string {
  return [
    '---',
    `id: TASK-${id}`,
    `title: ${title}`,
    'status: To Do',
    'assignee: []',
    "created_date: '2026-11-29 14:41'",
    'labels: []',
    'dependencies: []',
    'ordinal: 1000',
    '---',
    '',
    '## Description',
    '',
    '<!-- SECTION:DESCRIPTION:BEGIN -->',
    description,
    '<!-- SECTION:DESCRIPTION:END -->',
    '',
    '## Acceptance Criteria',
    '<!-- AC:BEGIN -->',
    ...criteria.map((text, index) => `- [ ] #${index + 1} ${text}`),
    '<!-- AC:END -->',
    '',
  ].join('\n');
}

// ---------------------------------------------------------------- instructions (pure)

t.test('parseInstructions reads every instruction kind', async (t) => {
  const description = [
    'Make the greeting.',
    'agent: write src/a.txt "hello"',
    '- agent: append "log dir/log.txt" "line \\"two\\"\\nthree"',
    '  agent: sleep 0.5',
    'agent: exit 3',
    'agent: hang',
    'agent: silent',
    'agent: block "needs a credential"',
    'agent: leave-status',
    'agent: claude-result rate-limited',
    'agent: spend 0.75',
    'agent: ignore-budget',
    'agent: linger 2',
    'Not an agent: line',
  ].join('\n');
  t.same(parseInstructions(description), {
    instructions: [
      { kind: 'write', path: 'src/a.txt', text: 'hello' },
      { kind: 'append', path: 'log dir/log.txt', line: 'line "two"\nthree' },
      { kind: 'sleep', seconds: 0.5 },
      { kind: 'exit', code: 3 },
      { kind: 'hang' },
      { kind: 'silent' },
      { kind: 'block', reason: 'needs a credential' },
      { kind: 'leave-status' },
      { kind: 'claude-result', result: 'rate-limited' },
      { kind: 'spend', usd: 0.75 },
      { kind: 'ignore-budget' },
      { kind: 'linger', seconds: 2 },
    ],
    problems: [],
  });
});

t.test('parseInstructions names each bad line and what is wrong', async (t) => {
  const description = [
    'agent: write ../escape.txt "x"',
    'agent: write /etc/passwd "x"',
    'agent: append .git/config "x"',
    'agent: write a.txt hello',
    'agent: exit 300',
    'agent: sleep soon',
    'agent: dance',
    'agent: block "unclosed',
    'agent: claude-result broke',
    'agent: hang now',
    'agent: spend a-lot',
    'agent: linger forever',
    'agent: ignore-budget please',
  ].join('\n');
  t.same(parseInstructions(description), {
    instructions: [],
    problems: [
      'line 1 of the description: path ../escape.txt must be relative to the workspace, without "..", and not inside .git',
      'line 2 of the description: path /etc/passwd must be relative to the workspace, without "..", and not inside .git',
      'line 3 of the description: path .git/config must be relative to the workspace, without "..", and not inside .git',
      'line 4 of the description: TEXT must be a double-quoted string',
      'line 5 of the description: exit takes a code from 0 to 255, not 300',
      'line 6 of the description: sleep takes seconds from 0 to 3600, not soon',
      'line 7 of the description: unknown instruction "dance" (known: write, append, sleep, exit, hang, silent, block, leave-status, claude-result, rate-limit, rate-limit-event, cost, spend, ignore-budget, linger)',
      'line 8 of the description: cannot read "\\"unclosed" (an unclosed quote?)',
      'line 9 of the description: claude-result takes not-logged-in, rate-limited, max-turns, not broke',
      'line 10 of the description: expected: agent: hang',
      'line 11 of the description: spend takes dollars like 0.25, not a-lot',
      'line 12 of the description: linger takes seconds from 0 to 3600, not forever',
      'line 13 of the description: expected: agent: ignore-budget',
    ],
  });
});

t.test('safeRelativePath normalizes and refuses escapes', async (t) => {
  t.equal(safeRelativePath('./src//a.txt'), 'src/a.txt');
  t.equal(safeRelativePath('a/../../b'), undefined);
  t.equal(safeRelativePath(''), undefined);
  t.equal(safeRelativePath('.gitignore'), '.gitignore');
});

t.test('planRun separates steps, quietness, the claude result and the ending', async (t) => {
  const { instructions } = parseInstructions(
    'agent: write a "1"\nagent: silent\nagent: sleep 1\nagent: leave-status\nagent: block "why"',
  );
  t.same(planRun(instructions), {
    steps: [
      { kind: 'write', path: 'a', text: '1' },
      { kind: 'sleep', seconds: 1 },
    ],
    quiet: true,
    claudeResult: undefined,
    ending: { kind: 'blocked', reason: 'why' },
    rateLimitSessions: 0,
    rateLimitEvent: false,
    costUsd: undefined,
    honourBudget: true,
    lingerSeconds: 0,
  });
  t.same(planRun([]), {
    steps: [],
    quiet: false,
    claudeResult: undefined,
    ending: { kind: 'done' },
    rateLimitSessions: 0,
    rateLimitEvent: false,
    costUsd: undefined,
    honourBudget: true,
    lingerSeconds: 0,
  });
  const budgeted = planRun(
    parseInstructions('agent: spend 1\nagent: write a "1"\nagent: spend 0.5\nagent: ignore-budget\nagent: linger 3')
      .instructions,
  );
  t.same(
    [budgeted.steps, budgeted.honourBudget, budgeted.lingerSeconds],
    [
      [
        { kind: 'spend', usd: 1 },
        { kind: 'write', path: 'a', text: '1' },
        { kind: 'spend', usd: 0.5 },
      ],
      false,
      3,
    ],
    'spend is a step, in order; ignore-budget and linger are settings',
  );
  t.same(planRun(parseInstructions('agent: hang').instructions).quiet, true, 'a hang prints nothing');
});

t.test('finishedTaskText: Done with every criterion checked, or Blocked with a note', async (t) => {
  const text = taskFile(3, 'Greet', 'agent: write a "b"');
  const task = parseTaskFile('backlog/tasks/task-3 - Greet.md', text) as Task;
  const done = parseTaskFile('f.md', finishedTaskText(text, task, { kind: 'done' })) as Task;
  t.equal(done.status, 'Done');
  t.same(
    done.acceptanceCriteria.map((criterion) => criterion.checked),
    [true, true],
  );
  const blocked = parseTaskFile(
    'f.md',
    finishedTaskText(text, task, { kind: 'blocked', reason: 'needs a credential' }),
  ) as Task;
  t.equal(blocked.status, 'Blocked');
  t.equal(blocked.notes, 'Blocked: needs a credential');
  t.equal(finishedTaskText(text, task, { kind: 'leave-status' }), text);
  t.equal(commitMessage(task, { kind: 'blocked', reason: 'x' }), 'TASK-3: Greet (blocked)');
});

t.test('claude argv detection and the prompt directive', async (t) => {
  const argv = claudeAdapter.buildCommand({
    binary: 'claude',
    prompt: '',
    workspace: '/w',
    taskId: 'T-1',
    model: 'opus',
    effort: 'high',
    env: {},
  }).args;
  t.ok(looksLikeClaudeArgv(argv), 'the adapter argv is recognized');
  t.same(readClaudeArgv(argv), { model: 'opus', permissionMode: 'bypassPermissions' });
  t.notOk(looksLikeClaudeArgv([]), 'no argv: command mode');
  t.equal(
    readClaudeArgv(['-p', '--output-format', 'stream-json']).error,
    'Error: When using --print, --output-format=stream-json requires --verbose',
  );
  const budgeted = claudeAdapter.buildCommand({
    binary: 'claude',
    prompt: '',
    workspace: '/w',
    taskId: 'T-1',
    model: undefined,
    effort: undefined,
    env: {},
    maxBudgetUsd: 1.25,
  }).args;
  t.same(
    readClaudeArgv(budgeted),
    { model: undefined, permissionMode: 'bypassPermissions', maxBudgetUsd: 1.25 },
    'the budget flag the adapter passes is read',
  );
  for (const bad of ['0', '-1', 'lots']) {
    t.equal(
      readClaudeArgv([...budgeted.slice(0, -1), bad]).error,
      'error: --max-budget-usd must be a positive number greater than 0',
      `--max-budget-usd ${bad} is refused as claude refuses it`,
    );
  }
  const prompt = buildPrompt({
    basePrompt: undefined,
    task: { id: 'TASK-3', title: 'Greet', file: 'backlog/tasks/task-3 - Greet.md' },
  });
  t.equal(taskIdFromPrompt(prompt), 'TASK-3', 'the prompt builder directive is understood');
  t.match(sessionIdFor('TASK-3', prompt), /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-8[0-9a-f]{3}-[0-9a-f]{12}$/);
  t.equal(sessionIdFor('TASK-3', prompt), sessionIdFor('TASK-3', prompt), 'deterministic');
  t.same(usageFor('x'.repeat(400)), { inputTokens: 100, outputTokens: 42, cacheReadTokens: 1000, costUsd: 0.00123 });
});

// ---------------------------------------------------------------- the real thing, in a real repo

function repoWithTask(
  t: Parameters<typeof gitRepo>[0],
  description: string,
  criteria?: string[],
): { repo: string; file: string } {
  const file = 'backlog/tasks/task-3 - Greet.md';
  const repo = gitRepo(t, {
    'README.md': '# r\n',
    [file]: taskFile(3, 'Greet', description, criteria),
    'backlog/tasks/task-4 - Other.md': taskFile(4, 'Other', 'agent: exit 9'),
  });
  return { repo, file };
}

const agentEnv = (extra: Record<string, string> = {}) => ({
  ...GIT_TEST_ENV,
  PATH: `${path.dirname(process.execPath)}:/usr/bin:/bin`,
  GIT_AUTHOR_NAME: 'Agent Smith',
  GIT_AUTHOR_EMAIL: 'agent@example.invalid',
  ...extra,
});

function commandInvocation(repo: string, prompt = 'work\n'): AgentInvocation {
  return {
    binary: scriptedAgent,
    prompt,
    workspace: repo,
    taskId: 'TASK-3',
    model: undefined,
    effort: undefined,
    env: agentEnv(),
    command: [scriptedAgent],
  };
}

function claudeInvocation(t: Parameters<typeof tempDir>[0], repo: string): AgentInvocation {
  // A wrapper named claude, as an operator would install it.
  const bin = tempDir(t, 'fake-claude-');
  const claude = path.join(bin, 'claude');
  symlinkSync(scriptedAgent, claude);
  const prompt = buildPrompt({
    basePrompt: undefined,
    task: { id: 'TASK-3', title: 'Greet', file: 'backlog/tasks/task-3 - Greet.md' },
  });
  return {
    binary: claude,
    prompt,
    workspace: repo,
    taskId: 'TASK-3',
    model: 'sonnet',
    effort: 'high',
    env: agentEnv(),
  };
}

const limits = { idleTimeoutMs: 20_000, wallClockMs: 60_000, killGraceMs: 1000 };
const supervise = (command: ReturnType<typeof claudeAdapter.buildCommand>, limitOverrides = {}) =>
  superviseAgent(
    { process: realProcess, clock: realClock },
    command,
    { ...limits, ...limitOverrides },
    () => undefined,
  );

t.test('end to end: the claude adapter against the scripted agent posing as claude', async (t) => {
  const { repo, file } = repoWithTask(
    t,
    'Make the greeting.\nagent: write src/a.txt "hello"\nagent: append log.txt "line"',
  );
  const invocation = claudeInvocation(t, repo);
  const run = await supervise(claudeAdapter.buildCommand(invocation));
  t.equal(run.exitCode, 0, `exit 0 (stderr: ${run.stderrTail})`);
  t.equal(run.stdoutLines.length, 4, 'init, assistant, rate_limit_event (allowed), result');
  const result = claudeAdapter.parseResult(run);
  const usage = usageFor(invocation.prompt);
  t.same(result, {
    ok: true,
    sessionId: sessionIdFor('TASK-3', invocation.prompt),
    turns: 4,
    inputTokens: usage.inputTokens + usage.cacheReadTokens,
    outputTokens: 42,
    costUsd: usage.costUsd,
    usage: { input: usage.inputTokens, output: 42, cacheRead: usage.cacheReadTokens, cacheWrite: 0 },
    model: invocation.model,
    finalMessage: 'TASK-3: done',
  });
  const task = parseTaskFile(file, readFileSync(path.join(repo, file), 'utf8')) as Task;
  t.equal(task.status, 'Done');
  t.same(
    task.acceptanceCriteria.map((criterion) => criterion.checked),
    [true, true],
  );
  t.equal(readFileSync(path.join(repo, 'src/a.txt'), 'utf8'), 'hello\n');
  t.equal(readFileSync(path.join(repo, 'log.txt'), 'utf8'), 'line\n');
  t.equal(git(repo, 'rev-list', '--count', 'HEAD'), '2', 'exactly one new commit');
  t.equal(git(repo, 'log', '-1', '--format=%an <%ae>|%s'), 'Agent Smith <agent@example.invalid>|TASK-3: Greet');
  t.equal(
    git(repo, 'show', '--name-only', '--format=', 'HEAD'),
    `${file}\nlog.txt\nsrc/a.txt`,
    'code and task in the one commit',
  );
  t.equal(git(repo, 'status', '--porcelain'), '', 'nothing left uncommitted');
});

t.test('posing as claude: canned failures come back classified', async (t) => {
  for (const [kind, failure] of [
    ['not-logged-in', 'not-logged-in'],
    ['rate-limited', 'rate-limited'],
    ['max-turns', 'max-turns'],
  ] as const) {
    const { repo } = repoWithTask(t, `agent: claude-result ${kind}`);
    const run = await supervise(claudeAdapter.buildCommand(claudeInvocation(t, repo)));
    t.equal(run.exitCode, 1, `${kind}: exit 1`);
    t.equal(claudeAdapter.parseResult(run).failure, failure, kind);
    t.equal(git(repo, 'rev-list', '--count', 'HEAD'), '1', `${kind}: no commit`);
  }
});

t.test(
  'posing as claude with --max-budget-usd: stops mid-session at the budget with error_max_budget_usd, the work after it undone',
  async (t) => {
    const { repo, file } = repoWithTask(
      t,
      'agent: spend 0.4\nagent: write a.txt "1"\nagent: spend 0.4\nagent: write b.txt "2"\nagent: spend 0.4',
    );
    const invocation = { ...claudeInvocation(t, repo), maxBudgetUsd: 0.7 };
    const run = await supervise(claudeAdapter.buildCommand(invocation));
    t.equal(run.exitCode, 1, 'claude exits 1 after an error result');
    const last = JSON.parse(run.stdoutLines.at(-1)!) as Record<string, unknown>;
    t.same(
      [last.type, last.subtype, last.is_error, last.total_cost_usd, last.errors],
      ['result', 'error_max_budget_usd', true, 0.8, ['Reached maximum budget ($0.7)']],
    );
    const result = claudeAdapter.parseResult(run);
    t.same(
      [result.ok, result.failure, result.costUsd, result.detail],
      [false, 'over-budget', 0.8, 'stopped at its budget: Reached maximum budget ($0.7) (error_max_budget_usd)'],
    );
    t.ok(existsSync(path.join(repo, 'a.txt')), 'the work before the budget ran out was done');
    t.notOk(existsSync(path.join(repo, 'b.txt')), 'the work after it was not');
    t.equal((parseTaskFile(file, readFileSync(path.join(repo, file), 'utf8')) as Task).status, 'In Progress');
    t.equal(git(repo, 'rev-list', '--count', 'HEAD'), '1', 'nothing committed');

    const under = repoWithTask(t, 'agent: spend 0.4\nagent: write a.txt "1"');
    const finished = await supervise(
      claudeAdapter.buildCommand({ ...claudeInvocation(t, under.repo), maxBudgetUsd: 0.7 }),
    );
    const usage = usageFor(invocation.prompt);
    t.same(
      [finished.exitCode, claudeAdapter.parseResult(finished).ok, claudeAdapter.parseResult(finished).costUsd],
      [0, true, 0.4 + usage.costUsd],
      'under the budget: a normal success reporting what it spent',
    );

    const ignoring = repoWithTask(t, 'agent: ignore-budget\nagent: spend 0.4\nagent: spend 0.4\nagent: leave-status');
    const overshot = await supervise(
      claudeAdapter.buildCommand({ ...claudeInvocation(t, ignoring.repo), maxBudgetUsd: 0.7 }),
    );
    t.same(
      [overshot.exitCode, claudeAdapter.parseResult(overshot).ok, claudeAdapter.parseResult(overshot).costUsd],
      [0, true, 0.8 + usage.costUsd],
      'ignore-budget: it overshoots and reports success',
    );
  },
);

t.test(
  'the last message past the budget: the work is done and committed, the result says error_max_budget_usd',
  async (t) => {
    const { repo, file } = repoWithTask(t, 'agent: cost 2.5\nagent: write a.txt "1"');
    const run = await supervise(claudeAdapter.buildCommand({ ...claudeInvocation(t, repo), maxBudgetUsd: 2 }));
    t.equal(run.exitCode, 1);
    t.same([claudeAdapter.parseResult(run).failure, claudeAdapter.parseResult(run).costUsd], ['over-budget', 2.5]);
    t.equal(
      (parseTaskFile(file, readFileSync(path.join(repo, file), 'utf8')) as Task).status,
      'Done',
      'the board decides whether the work is usable',
    );
    t.equal(git(repo, 'rev-list', '--count', 'HEAD'), '2');
  },
);

t.test('command mode: task id and workspace from the env, block with a reason', async (t) => {
  const { repo, file } = repoWithTask(t, 'agent: write notes.md "partial"\nagent: block "needs a credential"');
  // cwd elsewhere: AGENT_WORKSPACE decides where it works.
  const command = { ...commandAdapter.buildCommand(commandInvocation(repo)), cwd: '/' };
  const run = await supervise(command);
  t.equal(run.exitCode, 0, run.stderrTail);
  t.same(run.stdoutLines, ['TASK-3 is blocked: needs a credential']);
  const task = parseTaskFile(file, readFileSync(path.join(repo, file), 'utf8')) as Task;
  t.equal(task.status, 'Blocked');
  t.equal(task.notes, 'Blocked: needs a credential');
  t.same(
    task.acceptanceCriteria.map((criterion) => criterion.checked),
    [false, false],
  );
  t.equal(git(repo, 'log', '-1', '--format=%s'), 'TASK-3: Greet (blocked)');
  t.equal(git(repo, 'rev-list', '--count', 'HEAD'), '2');
});

t.test('exit N stops with that code, In Progress, nothing committed', async (t) => {
  const { repo, file } = repoWithTask(t, 'agent: write a.txt "x"\nagent: exit 3\nagent: write b.txt "y"');
  const run = await supervise(commandAdapter.buildCommand(commandInvocation(repo)));
  t.equal(run.exitCode, 3);
  t.same(commandAdapter.parseResult(run), { ok: false, failure: 'crashed', detail: 'exit 3' });
  t.equal((parseTaskFile(file, readFileSync(path.join(repo, file), 'utf8')) as Task).status, 'In Progress');
  t.ok(existsSync(path.join(repo, 'a.txt')), 'the work before the exit was done');
  t.notOk(existsSync(path.join(repo, 'b.txt')), 'the work after it was not');
  t.equal(git(repo, 'rev-list', '--count', 'HEAD'), '1');
});

t.test('silent and leave-status: nothing printed, work committed, status left In Progress', async (t) => {
  const { repo, file } = repoWithTask(t, 'agent: silent\nagent: leave-status\nagent: write out.txt "done"');
  const run = await supervise(claudeAdapter.buildCommand(claudeInvocation(t, repo)));
  t.equal(run.exitCode, 0);
  t.same(run.stdoutLines, []);
  t.equal(claudeAdapter.parseResult(run).failure, 'no-output', 'a silent claude is a failure to the adapter');
  t.equal((parseTaskFile(file, readFileSync(path.join(repo, file), 'utf8')) as Task).status, 'In Progress');
  t.equal(git(repo, 'show', '--name-only', '--format=', 'HEAD'), `${file}\nout.txt`);
});

t.test('hang: prints nothing and only the idle watchdog ends it', async (t) => {
  const { repo } = repoWithTask(t, 'agent: hang');
  const started = Date.now();
  const run = await supervise(commandAdapter.buildCommand(commandInvocation(repo)), { idleTimeoutMs: 800 });
  t.equal(run.endedBy, 'idle-timeout');
  t.same(run.stdoutLines, []);
  t.ok(Date.now() - started < 5000, 'ended by the watchdog');
  t.same(commandAdapter.parseResult(run), {
    ok: false,
    failure: 'idle-timeout',
    detail: 'ended by the idle-timeout watchdog',
  });
});

t.test('sleep waits; a bad instruction block is refused with exit 2 and the reason', async (t) => {
  const slow = repoWithTask(t, 'agent: sleep 0.6');
  const started = Date.now();
  const run = await supervise(commandAdapter.buildCommand(commandInvocation(slow.repo)));
  t.equal(run.exitCode, 0);
  t.ok(Date.now() - started >= 600, 'it slept');
  const bad = repoWithTask(t, 'agent: dance');
  const refused = await supervise(commandAdapter.buildCommand(commandInvocation(bad.repo)));
  t.equal(refused.exitCode, 2);
  t.match(refused.stderrTail, /task-3 - Greet\.md: line 1 of the description: unknown instruction "dance"/);
});

t.test('a missing task or task id is a clear error', async (t) => {
  const { repo } = repoWithTask(t, '');
  const missing = await supervise({
    ...commandAdapter.buildCommand(commandInvocation(repo)),
    env: { ...agentEnv(), AGENT_TASK_ID: 'TASK-99', AGENT_WORKSPACE: repo },
  });
  t.equal(missing.exitCode, 2);
  t.match(missing.stderrTail, /no task TASK-99 in .*backlog\/tasks/);
  const posing = claudeInvocation(t, repo);
  const noDirective = await supervise(claudeAdapter.buildCommand({ ...posing, prompt: 'do something\n' }));
  t.equal(noDirective.exitCode, 2);
  t.match(noDirective.stderrTail, /no "Your task: <ID>" line/);
});

t.test('the commit fails loudly when git has no identity', async (t) => {
  const { repo } = repoWithTask(t, '');
  mkdirSync(path.join(repo, 'home'));
  const env: Record<string, string> = {
    PATH: `${path.dirname(process.execPath)}:/usr/bin:/bin`,
    HOME: path.join(repo, 'home'),
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
  };
  const run = await supervise({
    ...commandAdapter.buildCommand(commandInvocation(repo)),
    env: { ...env, AGENT_TASK_ID: 'TASK-3', AGENT_WORKSPACE: repo },
  });
  t.equal(run.exitCode, 1);
  t.match(run.stderrTail, /git commit -q -m TASK-3: Greet failed/);
  t.equal(execFileSync('git', ['rev-list', '--count', 'HEAD'], { cwd: repo, encoding: 'utf8' }).trim(), '1');
});
