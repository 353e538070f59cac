// bin/scripted-agent in the review stage's roles, for the integration tests
// (test/integration/scripted-reviewer-*.test.ts, one file per CLI so they run
// side by side): a real git repo with a Backlog.md task whose candidate is
// made here with git, the session started through the real adapter's argv
// as claude, codex or a command agent, and the verdict read where that CLI
// leaves it (claude's structured_output, codex's -o file, the command's
// $AGENT_REVIEW_VERDICT).
import t, { type Test } from 'tap';
import { existsSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { claudeAdapter } from '../../src/agent/adapters/claude.js';
import { codexAdapter } from '../../src/agent/adapters/codex.js';
import { commandAdapter } from '../../src/agent/adapters/command.js';
import { superviseAgent } from '../../src/agent/supervise.js';
import { parseTaskFile } from '../../src/board/parse.js';
import { realClock, realProcess } from '../../src/io/real-ports.js';
import { finishedTaskText } from '../../src/scripted-agent/plan.js';
import { GARBAGE, type ScriptedVerdict } from '../../src/scripted-agent/review-plan.js';
import type { AgentAdapter, AgentInvocation, AgentResult, ReviewRole, Task } from '../../src/types.js';
import { SCRIPTED_AGENT } from './drain-fixture.js';
import { GIT_TEST_ENV, git, gitRepo, tempDir, writeFiles } from './temp.js';

export type Cli = 'claude' | 'codex' | 'command';
const ADAPTERS: Readonly<Record<Cli, AgentAdapter>> = {
  claude: claudeAdapter,
  codex: codexAdapter,
  command: commandAdapter,
};
export const TASK_FILE = 'backlog/tasks/task-3 - Greet.md';
const SCHEMA = JSON.stringify({ type: 'object', additionalProperties: false, required: [], properties: {} });

function taskFile(description: string): string {
  return [
    '---',
    'id: TASK-3',
    'title: Greet',
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
    '- [ ] #1 it greets',
    '- [ ] #2 it is tested',
    '<!-- AC:END -->',
    '',
  ].join('\n');
}

const env = {
  ...GIT_TEST_ENV,
  PATH: `${path.dirname(process.execPath)}:/usr/bin:/bin`,
  GIT_AUTHOR_NAME: 'Agent Smith',
  GIT_AUTHOR_EMAIL: 'agent@example.invalid',
};
export const limits = { idleTimeoutMs: 20_000, wallClockMs: 60_000, killGraceMs: 1000 };

/** A repo on main with task TASK-3 (its description: a greeting and LINES), at the fork. */
export function forkRepo(t: Test, lines: readonly string[]) {
  const repo = gitRepo(t, {
    'README.md': '# greeter\n',
    [TASK_FILE]: taskFile(['Greet people.', 'agent: write src/a.txt "hello"', ...lines].join('\n')),
  });
  const fork = git(repo, 'rev-parse', 'HEAD');
  return { repo, fork };
}

/** What the scripted implementer commits for the task (src/a.txt, the task Done), made with git: the candidate. */
export function commitCandidate(repo: string): string {
  writeFiles(repo, { 'src/a.txt': 'hello\n' });
  const text = readFileSync(path.join(repo, TASK_FILE), 'utf8');
  const task = parseTaskFile(TASK_FILE, text) as Task;
  writeFileSync(path.join(repo, TASK_FILE), finishedTaskText(text, task, { kind: 'done' }));
  git(repo, 'add', '-A');
  git(repo, 'commit', '-q', '-m', 'TASK-3: Greet');
  return git(repo, 'rev-parse', 'HEAD');
}

function binaryFor(t: Test, cli: Cli): string {
  if (cli === 'command') return SCRIPTED_AGENT;
  // Under the CLI's own name, as an operator would install a stand-in.
  const link = path.join(tempDir(t, `fake-${cli}-`), cli);
  symlinkSync(SCRIPTED_AGENT, link);
  return link;
}

export function invocation(t: Test, cli: Cli, repo: string, prompt: string, role: ReviewRole): AgentInvocation {
  const handoff = tempDir(t, 'review-handoff-');
  const review = {
    schemaText: SCHEMA,
    schemaFile: path.join(handoff, 'schema.json'),
    verdictFile: path.join(handoff, 'verdict.json'),
  };
  writeFileSync(review.schemaFile, SCHEMA);
  // The runner creates the command agent's verdict file for it; codex creates its -o file itself.
  if (cli === 'command') writeFileSync(review.verdictFile, '');
  return {
    binary: binaryFor(t, cli),
    prompt,
    workspace: repo,
    taskId: 'TASK-3',
    model: cli === 'command' ? undefined : 'model-x',
    effort: undefined,
    env,
    role,
    ...(role === 'review' ? { review } : {}),
    ...(cli === 'command' ? { command: [SCRIPTED_AGENT] } : {}),
  };
}

export async function session(cli: Cli, call: AgentInvocation, overrides: Partial<typeof limits> = {}) {
  const adapter = ADAPTERS[cli];
  const run = await superviseAgent(
    { process: realProcess, clock: realClock },
    adapter.buildCommand(call),
    { ...limits, ...overrides },
    () => undefined,
  );
  return { run, result: adapter.parseResult(run) };
}

export async function implement(t: Test, cli: Cli, repo: string) {
  const prompt = 'Your task: TASK-3 "Greet" (file backlog/tasks/task-3 - Greet.md)\n';
  const { run } = await session(cli, invocation(t, cli, repo, prompt, 'implement'));
  t.equal(run.exitCode, 0, `the implementer finished (${run.stderrTail})`);
  return git(repo, 'rev-parse', 'HEAD');
}

export function reviewPrompt(facts: { round: number; nonce: string; candidate: string; fork: string }): string {
  return [
    'You review the candidate of one task. Your final answer is the verdict JSON.',
    'Review task: TASK-3',
    `Review round: ${facts.round}`,
    `Review nonce: ${facts.nonce}`,
    `Review candidate: ${facts.candidate}`,
    `Review fork: ${facts.fork}`,
    '',
    'Acceptance criteria:',
    '- #1 it greets',
    '- #2 it is tested',
    '',
    '```diff',
    '+- [x] #1 it greets',
    '```',
    '',
  ].join('\n');
}

/** The verdict where this CLI leaves it; undefined: none there. */
function verdictOf(cli: Cli, call: AgentInvocation, result: AgentResult): string | undefined {
  if (cli === 'claude') return result.structuredOutput;
  const file = call.review!.verdictFile;
  return existsSync(file) ? readFileSync(file, 'utf8') : undefined;
}

export interface Reviewed {
  readonly cli: Cli;
  readonly repo: string;
  readonly fork: string;
  readonly candidate: string;
  readonly run: Awaited<ReturnType<typeof session>>['run'];
  readonly result: AgentResult;
  readonly verdict: string | undefined;
  readonly doc: ScriptedVerdict | undefined;
}

export async function reviewed(
  t: Test,
  cli: Cli,
  lines: readonly string[],
  rounds: readonly { round: number; nonce: string }[] = [{ round: 1, nonce: 'n-1' }],
  overrides: Partial<typeof limits> = {},
): Promise<Reviewed> {
  const { repo, fork } = forkRepo(t, lines);
  const candidate = commitCandidate(repo);
  let last: Reviewed | undefined;
  for (const round of rounds) {
    const call = invocation(t, cli, repo, reviewPrompt({ ...round, candidate, fork }), 'review');
    const { run, result } = await session(cli, call, overrides);
    const verdict = verdictOf(cli, call, result);
    let doc: ScriptedVerdict | undefined;
    try {
      doc = verdict ? (JSON.parse(verdict) as ScriptedVerdict) : undefined;
    } catch {
      doc = undefined;
    }
    last = { cli, repo, fork, candidate, run, result, verdict, doc };
  }
  return last!;
}

export const metAt = (citation: string) => [
  { criterion: 1, met: true, evidence: [citation], note: 'met' },
  { criterion: 2, met: true, evidence: [citation], note: 'met' },
];

export function expectApproval(t: Test, seen: Reviewed, round = 1, nonce = 'n-1'): void {
  t.equal(seen.run.exitCode, 0, `${seen.cli}: exit 0 (${seen.run.stderrTail})`);
  t.equal(seen.result.ok, true, `${seen.cli}: the adapter reads a good session`);
  t.same(seen.doc, {
    task_id: 'TASK-3',
    round,
    nonce,
    candidate: seen.candidate,
    verdict: 'approve',
    criteria: metAt('src/a.txt:1'),
    findings: [],
    summary: `TASK-3 round ${round}: approved by the scripted reviewer`,
  });
}

export function expectUntouched(t: Test, seen: Reviewed): void {
  t.equal(git(seen.repo, 'rev-parse', 'HEAD'), seen.candidate, `${seen.cli}: HEAD is the candidate`);
  t.equal(git(seen.repo, 'rev-parse', 'refs/heads/main'), seen.candidate, `${seen.cli}: main is unmoved`);
  t.equal(git(seen.repo, 'status', '--porcelain'), '', `${seen.cli}: the tree is clean`);
}

export const fixPrompt =
  'Your task: TASK-3 "Greet" (file backlog/tasks/task-3 - Greet.md)\nFix what the review found.\n';

/** Every reviewer verb as this CLI, and the fixer. */
export function reviewerSuite(cli: Cli): void {
  t.test(`${cli}: approve, and no review: line at all, approve citing the first changed line`, async (t) => {
    const seen = await reviewed(t, cli, ['review: approve']);
    expectApproval(t, seen);
    expectUntouched(t, seen);
    expectApproval(t, await reviewed(t, cli, []));
    if (cli === 'claude') {
      const result = JSON.parse(seen.run.stdoutLines.at(-1)!) as { result: string; structured_output: unknown };
      t.same(JSON.parse(result.result), result.structured_output, 'the result text says the verdict too');
      const init = JSON.parse(seen.run.stdoutLines[0]!) as { tools: string[] };
      t.same(init.tools, ['Bash', 'Read', 'StructuredOutput'], "the init event shows the reviewer's tools");
    }
    if (cli === 'codex') t.equal(seen.result.finalMessage, seen.verdict, 'the last agent_message is the verdict');
    if (cli === 'command') t.same(seen.run.stdoutLines, ['TASK-3 round 1: approve']);
  });

  t.test(`${cli}: changes in the first N rounds, approve after; always; the same finding`, async (t) => {
    const finding = (message: string) => [{ severity: 'major', location: 'src/a.txt:1', message }];
    const first = await reviewed(t, cli, ['review: changes "add a test"']);
    t.same([first.doc?.verdict, first.doc?.findings], ['changes_requested', finding('add a test')]);
    t.same(first.doc?.criteria, metAt('src/a.txt:1'));
    expectUntouched(t, first);
    const second = await reviewed(t, cli, ['review: changes "add a test" 1'], [{ round: 2, nonce: 'n-2' }]);
    expectApproval(t, second, 2, 'n-2');
    const always = await reviewed(t, cli, ['review: changes-always "still wrong"'], [{ round: 3, nonce: 'n-3' }]);
    t.same([always.doc?.verdict, always.doc?.findings], ['changes_requested', finding('still wrong (round 3)')]);
    const same = await reviewed(t, cli, ['review: same-finding "same"'], [{ round: 3, nonce: 'n-3' }]);
    t.same(same.doc?.findings, finding('same'));
  });

  t.test(`${cli}: garbage, empty, none`, async (t) => {
    const garbage = await reviewed(t, cli, ['review: garbage']);
    t.equal(garbage.verdict, cli === 'claude' ? JSON.stringify(GARBAGE) : GARBAGE, 'garbage');
    t.notOk(typeof garbage.doc === 'object' && garbage.doc, 'not a verdict');
    const empty = await reviewed(t, cli, ['review: empty']);
    t.equal(empty.verdict, cli === 'claude' ? '{}' : '', 'empty');
    const none = await reviewed(t, cli, ['review: none']);
    // The runner created the command agent's file: nothing written leaves it as it was.
    t.equal(none.verdict, cli === 'command' ? '' : undefined, 'none');
    for (const seen of [garbage, empty, none]) {
      t.equal(seen.run.exitCode, 0);
      t.equal(seen.result.ok, true, 'a session that ended well, whatever it answered');
    }
  });

  t.test(`${cli}: exit N and hang leave no verdict`, async (t) => {
    const exited = await reviewed(t, cli, ['review: exit 3']);
    t.equal(exited.run.exitCode, 3);
    t.equal(exited.result.ok, false);
    t.equal(exited.verdict, cli === 'command' ? '' : undefined);
    const hung = await reviewed(t, cli, ['review: hang'], undefined, { idleTimeoutMs: 800 });
    t.equal(hung.run.endedBy, 'idle-timeout');
    t.equal(hung.result.failure, 'idle-timeout');
    t.equal(hung.verdict, cli === 'command' ? '' : undefined);
  });

  t.test(`${cli}: stale answers with the previous session's round and nonce`, async (t) => {
    const seen = await reviewed(
      t,
      cli,
      ['review: stale'],
      [
        { round: 1, nonce: 'n-1' },
        { round: 2, nonce: 'n-2' },
      ],
    );
    t.same([seen.doc?.round, seen.doc?.nonce, seen.doc?.verdict], [1, 'n-1', 'approve']);
    const first = await reviewed(t, cli, ['review: stale']);
    t.same([first.doc?.round, first.doc?.nonce], [0, 'stale-n-1'], 'no session before: the round before');
  });

  t.test(`${cli}: contradictory and unverified`, async (t) => {
    const contradictory = await reviewed(t, cli, ['review: contradictory']);
    t.same(contradictory.doc?.verdict, 'approve');
    t.same(contradictory.doc?.criteria[0], { criterion: 1, met: false, evidence: [], note: 'not done' });
    const unverified = await reviewed(t, cli, ['review: unverified']);
    t.same(unverified.doc?.criteria, metAt('README.md:1'), 'a line the change does not touch');
    expectUntouched(t, unverified);
  });

  t.test(`${cli}: edit, commit, move-branch and touch-agent change the checkout, then approve`, async (t) => {
    const edited = await reviewed(t, cli, ['review: edit src/a.txt "reviewer was here"']);
    expectApproval(t, edited);
    t.equal(readFileSync(path.join(edited.repo, 'src/a.txt'), 'utf8'), 'reviewer was here\n');
    t.equal(git(edited.repo, 'status', '--porcelain'), 'M src/a.txt', 'the tree is dirty');
    t.equal(git(edited.repo, 'rev-parse', 'HEAD'), edited.candidate, 'no commit');

    const committed = await reviewed(t, cli, ['review: edit notes.md "my notes"', 'review: commit']);
    expectApproval(t, committed);
    t.not(git(committed.repo, 'rev-parse', 'HEAD'), committed.candidate, 'HEAD moved');
    t.equal(git(committed.repo, 'rev-parse', 'HEAD~1'), committed.candidate, 'a commit on top of the candidate');
    t.equal(git(committed.repo, 'show', '--name-only', '--format=%s', 'HEAD'), 'review notes\n\nnotes.md');
    t.equal(git(committed.repo, 'status', '--porcelain'), '');

    const moved = await reviewed(t, cli, ['review: move-branch']);
    expectApproval(t, moved);
    t.equal(git(moved.repo, 'rev-parse', 'refs/heads/main'), moved.fork, 'main went back to HEAD~1');
    t.equal(git(moved.repo, 'rev-parse', 'HEAD'), moved.fork);
    t.equal(git(moved.repo, 'status', '--porcelain'), '');

    const touched = await reviewed(t, cli, ['review: touch-agent']);
    expectApproval(t, touched);
    t.equal(readFileSync(path.join(touched.repo, '.agent/x'), 'utf8'), 'written by the reviewer\n');
    t.equal(git(touched.repo, 'status', '--porcelain', '--untracked-files=all'), '?? .agent/x');
  });

  t.test(`${cli}: rate-limited as the CLI reports it; with N, only the first N sessions`, async (t) => {
    const limited = await reviewed(t, cli, ['review: rate-limited']);
    t.equal(limited.run.exitCode, 1);
    t.equal(limited.verdict, cli === 'command' ? '' : undefined, 'no verdict');
    if (cli === 'command') {
      t.same(
        [limited.result.failure, limited.result.detail],
        ['crashed', 'exit 1: scripted-agent: rate limited (usage limit reached)'],
      );
    } else {
      t.equal(limited.result.failure, 'rate-limited');
      t.ok(limited.result.resetAt, `a reset time (${limited.result.resetAt})`);
    }
    const once = await reviewed(
      t,
      cli,
      ['review: rate-limited 1'],
      [
        { round: 1, nonce: 'n-1' },
        { round: 1, nonce: 'n-1b' },
      ],
    );
    expectApproval(t, once, 1, 'n-1b');
  });
  t.test(`${cli}: a fixer runs the fix: lines and commits; the task stays Done`, async (t) => {
    const { repo } = forkRepo(t, ['fix: append src/a.txt "tested"', 'review: changes "add a test"']);
    const candidate = await implement(t, cli, repo);
    const call = invocation(t, cli, repo, fixPrompt, 'fix');
    const { run, result } = await session(cli, call);
    t.equal(run.exitCode, 0, run.stderrTail);
    t.equal(result.ok, true);
    t.equal(git(repo, 'rev-parse', 'HEAD~1'), candidate, 'one new commit on the branch');
    t.equal(git(repo, 'log', '-1', '--format=%an|%s'), 'Agent Smith|TASK-3: Greet (review fixes)');
    t.equal(git(repo, 'show', '--name-only', '--format=', 'HEAD'), 'src/a.txt');
    t.equal(readFileSync(path.join(repo, 'src/a.txt'), 'utf8'), 'hello\ntested\n');
    const task = parseTaskFile(TASK_FILE, readFileSync(path.join(repo, TASK_FILE), 'utf8')) as Task;
    t.equal(task.status, 'Done', 'status untouched');
    t.equal(git(repo, 'status', '--porcelain'), '');
    if (cli !== 'command') t.equal(result.finalMessage, 'TASK-3: fixed what the review found');
  });

  t.test(`${cli}: fix: nothing makes no commit`, async (t) => {
    const { repo } = forkRepo(t, ['fix: nothing']);
    const candidate = await implement(t, cli, repo);
    const { run } = await session(cli, invocation(t, cli, repo, fixPrompt, 'fix'));
    t.equal(run.exitCode, 0, run.stderrTail);
    t.equal(git(repo, 'rev-parse', 'HEAD'), candidate);
    t.equal(git(repo, 'status', '--porcelain'), '');
  });
}
