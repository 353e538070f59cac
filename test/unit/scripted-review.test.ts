// The scripted agent's pure parts for the review stage: `fix:` and `review:`
// lines, the review prompt's machine lines and criteria, the diff it cites,
// the verdict each verb gives, and posing as codex.
import t from 'tap';
import { parseInstructions } from '../../src/scripted-agent/instructions.js';
import { parseFixInstructions, parseReviewInstructions } from '../../src/scripted-agent/review-instructions.js';
import { criteriaOf, readReviewPrompt, type ReviewRequest } from '../../src/scripted-agent/review-prompt.js';
import {
  changedRanges,
  firstChangedLine,
  touches,
  unquoteGitPath,
  untouchedLine,
} from '../../src/scripted-agent/diff-lines.js';
import { GARBAGE, answerFor, planReview, type ScriptedVerdict } from '../../src/scripted-agent/review-plan.js';
import { looksLikeCodexArgv, readCodexArgv, turnCompleted } from '../../src/scripted-agent/codex-stream.js';
import { readClaudeArgv, sessionTools, usageFor } from '../../src/scripted-agent/claude-stream.js';
import { closingLines, openingLines, rateLimitedLines, readPose, sessionFacts } from '../../src/scripted-agent/pose.js';
import { codexAdapter } from '../../src/agent/adapters/codex.js';
import { claudeAdapter } from '../../src/agent/adapters/claude.js';
import type { AgentInvocation } from '../../src/types.js';

const CANDIDATE = 'c'.repeat(40);
const FORK = 'f'.repeat(40);

// ---------------------------------------------------------------- fix: and review: lines

t.test('parseFixInstructions: the agent steps under fix:, and nothing', async (t) => {
  const description = [
    'agent: write a.txt "implementer"',
    'fix: write src/a.txt "fixed"',
    '- fix: append log.txt "again"',
    'fix: sleep 0.1',
    'fix: nothing',
    'fix: exit 4',
    'fix: hang',
    'review: approve',
  ].join('\n');
  t.same(parseFixInstructions(description), {
    instructions: [
      { kind: 'write', path: 'src/a.txt', text: 'fixed' },
      { kind: 'append', path: 'log.txt', line: 'again' },
      { kind: 'sleep', seconds: 0.1 },
      { kind: 'nothing' },
      { kind: 'exit', code: 4 },
      { kind: 'hang' },
    ],
    problems: [],
  });
  t.same(
    parseInstructions(description).instructions,
    [{ kind: 'write', path: 'a.txt', text: 'implementer' }],
    'agent: lines ignore the other roles',
  );
  t.same(parseFixInstructions('fix: write ../x "y"\nfix: nothing now\nfix: dance').problems, [
    'line 1 of the description: path ../x must be relative to the workspace, without "..", and not inside .git',
    'line 2 of the description: expected: fix: nothing',
    'line 3 of the description: unknown fix instruction "dance" (known: write, append, sleep, exit, hang, nothing)',
  ]);
  t.same(parseFixInstructions('fix: write a.txt').problems, [
    'line 1 of the description: expected: fix: write PATH "TEXT"',
  ]);
});

t.test('parseReviewInstructions reads every reviewer verb', async (t) => {
  const description = [
    'review: approve',
    'review: changes "add a test"',
    'review: changes "add a test" 2',
    'review: changes-always "still wrong"',
    'review: same-finding "same"',
    'review: garbage',
    'review: empty',
    'review: none',
    'review: exit 1',
    'review: hang',
    'review: stale',
    'review: contradictory',
    'review: unverified',
    'review: edit src/a.txt "reviewer was here"',
    'review: commit',
    'review: move-branch',
    'review: touch-agent',
    'review: rate-limited',
    'review: rate-limited 2',
  ].join('\n');
  t.same(parseReviewInstructions(description), {
    instructions: [
      { kind: 'approve' },
      { kind: 'changes', message: 'add a test', rounds: 1 },
      { kind: 'changes', message: 'add a test', rounds: 2 },
      { kind: 'changes-always', message: 'still wrong' },
      { kind: 'same-finding', message: 'same' },
      { kind: 'garbage' },
      { kind: 'empty' },
      { kind: 'none' },
      { kind: 'exit', code: 1 },
      { kind: 'hang' },
      { kind: 'stale' },
      { kind: 'contradictory' },
      { kind: 'unverified' },
      { kind: 'edit', path: 'src/a.txt', text: 'reviewer was here' },
      { kind: 'commit' },
      { kind: 'move-branch' },
      { kind: 'touch-agent' },
      { kind: 'rate-limited', sessions: undefined },
      { kind: 'rate-limited', sessions: 2 },
    ],
    problems: [],
  });
});

t.test('parseReviewInstructions names each bad line', async (t) => {
  const description = [
    'review: changes add-a-test',
    'review: changes "x" 0',
    'review: changes "x" 1 2',
    'review: approve now',
    'review: edit .git/config "x"',
    'review: exit 256',
    'review: rate-limited lots',
    'review: lgtm',
  ].join('\n');
  t.same(parseReviewInstructions(description).problems, [
    'line 1 of the description: MSG must be a double-quoted string',
    'line 2 of the description: changes takes a number of rounds from 1 to 99, not 0',
    'line 3 of the description: expected: review: changes "MSG" [N]',
    'line 4 of the description: expected: review: approve',
    'line 5 of the description: path .git/config must be relative to the workspace, without "..", and not inside .git',
    'line 6 of the description: exit takes a code from 0 to 255, not 256',
    'line 7 of the description: rate-limited takes a number of sessions from 1 to 99, not lots',
    'line 8 of the description: unknown review instruction "lgtm" (known: approve, changes, changes-always, same-finding, garbage, empty, none, exit, hang, stale, contradictory, unverified, edit, commit, move-branch, touch-agent, rate-limited)',
  ]);
});

// ---------------------------------------------------------------- the review prompt

const prompt = (extra: string[] = [], overrides: Record<string, string> = {}) =>
  [
    'You review one task.',
    `Review task: ${overrides.task ?? 'TASK-3'}`,
    `Review round: ${overrides.round ?? '2'}`,
    `Review nonce: ${overrides.nonce ?? 'a1b2c3'}`,
    `Review candidate: ${overrides.candidate ?? CANDIDATE}`,
    `Review fork: ${overrides.fork ?? FORK}`,
    '',
    'Acceptance criteria:',
    '- #1 it greets',
    '- [ ] #2 it is tested',
    ...extra,
  ].join('\n');

t.test('readReviewPrompt: the machine lines and the criteria', async (t) => {
  t.same(readReviewPrompt(prompt()), {
    taskId: 'TASK-3',
    round: 2,
    nonce: 'a1b2c3',
    candidate: CANDIDATE,
    fork: FORK,
    criteria: [
      { index: 1, text: 'it greets' },
      { index: 2, text: 'it is tested' },
    ],
  });
  t.match(
    readReviewPrompt(prompt([], { task: 'TASK-3 "Greet" (file backlog/tasks/task-3 - Greet.md)' })),
    { taskId: 'TASK-3', round: 2 },
    'a machine line is read up to its first space',
  );
  t.same(readReviewPrompt('Review task: TASK-3\n'), {
    problem:
      'the review prompt has no "Review round: ...", "Review nonce: ...", "Review candidate: ...", "Review fork: ..." line',
  });
  t.same(readReviewPrompt(prompt([], { round: 'two' })), { problem: '"Review round: two" is not a round number' });
  t.same(readReviewPrompt(prompt([], { candidate: 'abc123' })), {
    problem: '"Review candidate: abc123" is not a full commit id',
  });
  t.same(readReviewPrompt(prompt([], { fork: 'HEAD' })), { problem: '"Review fork: HEAD" is not a full commit id' });
});

t.test('criteriaOf: outside fences first, each index once, in order', async (t) => {
  const fenced = ['```diff', '+- [ ] #1 added in the diff', ' - [ ] #9 context of the task file', '```'];
  t.same(criteriaOf(prompt(fenced)), [
    { index: 1, text: 'it greets' },
    { index: 2, text: 'it is tested' },
  ]);
  t.same(
    criteriaOf(['````', '#2 second', '```', '#5 not a fence close', '````', '#1 first'].join('\n')),
    [{ index: 1, text: 'first' }],
    'a fence closes only with a run as long as its opener',
  );
  t.same(
    criteriaOf(['```', '- [x] #2 b', '- [ ] #1 a', '```'].join('\n')),
    [
      { index: 1, text: 'a' },
      { index: 2, text: 'b' },
    ],
    'only fenced criteria: those are the criteria',
  );
  t.same(criteriaOf('#1 first\n#1 again\n* #3. third\n#0 zero\n#x not'), [
    { index: 1, text: 'first' },
    { index: 3, text: 'third' },
  ]);
  t.same(criteriaOf('no criteria here'), []);
});

// ---------------------------------------------------------------- the diff it cites

const DIFF = [
  'diff --git a/backlog/tasks/task-3 - Greet.md b/backlog/tasks/task-3 - Greet.md',
  'index 1111111..2222222 100644',
  '--- a/backlog/tasks/task-3 - Greet.md',
  '+++ b/backlog/tasks/task-3 - Greet.md',
  '@@ -4 +4 @@',
  '-status: To Do',
  '+status: Done',
  'diff --git a/gone.txt b/gone.txt',
  'deleted file mode 100644',
  '--- a/gone.txt',
  '+++ /dev/null',
  '@@ -1,2 +0,0 @@',
  '-a',
  '-b',
  'diff --git a/src/a.txt b/src/a.txt',
  '--- a/src/a.txt',
  '+++ b/src/a.txt',
  '@@ -3,0 +4,2 @@',
  '+++ b/not-a-header',
  '+two',
  '@@ -9 +10,0 @@',
  '-removed only',
  'diff --git "a/sp\\303\\251 ce.txt" "b/sp\\303\\251 ce.txt"',
  '--- "a/sp\\303\\251 ce.txt"',
  '+++ "b/sp\\303\\251 ce.txt"',
  '@@ -1 +1 @@',
  '-x',
  '+y',
  '',
].join('\n');

t.test('changedRanges: new-side ranges; deletions and deleted files have none; quoted paths unquoted', async (t) => {
  const ranges = changedRanges(DIFF);
  t.same(ranges, [
    { path: 'backlog/tasks/task-3 - Greet.md', start: 4, count: 1 },
    { path: 'src/a.txt', start: 4, count: 2 },
    { path: 'spé ce.txt', start: 1, count: 1 },
  ]);
  t.equal(firstChangedLine(ranges), 'src/a.txt:4', 'outside backlog/ first');
  t.equal(firstChangedLine(ranges.slice(0, 1)), 'backlog/tasks/task-3 - Greet.md:4', 'the task file when alone');
  t.equal(firstChangedLine([]), undefined);
  t.ok(touches(ranges, 'src/a.txt', 5));
  t.notOk(touches(ranges, 'src/a.txt', 6));
  t.equal(unquoteGitPath('"a\\tb\\"c\\\\"'), 'a\tb"c\\');
  t.equal(unquoteGitPath('plain'), 'plain');
});

t.test('untouchedLine: an existing line the change does not touch, outside backlog/ first', async (t) => {
  const ranges = changedRanges(DIFF);
  const counts: Record<string, number> = { 'backlog/x.md': 3, 'src/a.txt': 5, 'empty.txt': 0, 'README.md': 1 };
  const lineCount = (path: string) => counts[path] ?? 0;
  t.equal(untouchedLine(['backlog/x.md', 'empty.txt', 'src/a.txt'], ranges, lineCount), 'src/a.txt:1');
  t.equal(
    untouchedLine(['src/a.txt'], [{ path: 'src/a.txt', start: 1, count: 3 }], lineCount),
    'src/a.txt:4',
    'past the changed lines',
  );
  t.equal(untouchedLine(['src/a.txt'], [{ path: 'src/a.txt', start: 1, count: 5 }], lineCount), undefined);
  t.equal(untouchedLine(['backlog/x.md'], [], lineCount), 'backlog/x.md:1');
});

// ---------------------------------------------------------------- what each verb answers

const request: ReviewRequest = {
  taskId: 'TASK-3',
  round: 2,
  nonce: 'n2',
  candidate: CANDIDATE,
  fork: FORK,
  criteria: [
    { index: 1, text: 'it greets' },
    { index: 2, text: 'it is tested' },
  ],
};
const evidence = { changed: 'src/a.txt:4', untouched: 'README.md:1' };
const answer = (line: string, overrides: Partial<ReviewRequest> = {}, previous?: { round: number; nonce: string }) =>
  answerFor(
    planReview(parseReviewInstructions(line).instructions).verdict,
    { ...request, ...overrides },
    evidence,
    previous,
  );
const docOf = (result: ReturnType<typeof answer>): ScriptedVerdict => {
  if (result.kind !== 'verdict') throw new Error(`not a verdict: ${result.kind}`);
  return result.doc;
};
const met = (citation: string) => [
  { criterion: 1, met: true, evidence: [citation], note: 'met' },
  { criterion: 2, met: true, evidence: [citation], note: 'met' },
];

t.test('approve (also with no review: line): every criterion met, citing the first changed line', async (t) => {
  const expected: ScriptedVerdict = {
    task_id: 'TASK-3',
    round: 2,
    nonce: 'n2',
    candidate: CANDIDATE,
    verdict: 'approve',
    criteria: met('src/a.txt:4'),
    findings: [],
    summary: 'TASK-3 round 2: approved by the scripted reviewer',
  };
  t.same(docOf(answer('review: approve')), expected);
  t.same(docOf(answer('nothing for the reviewer')), expected);
  t.same(
    docOf(answerFor({ kind: 'approve' }, request, { changed: undefined, untouched: undefined }, undefined)).criteria,
    [
      { criterion: 1, met: true, evidence: [], note: 'met' },
      { criterion: 2, met: true, evidence: [], note: 'met' },
    ],
    'no changed line: nothing to cite',
  );
});

t.test('changes, changes-always, same-finding: findings by round', async (t) => {
  const finding = (message: string) => [{ severity: 'major', location: 'src/a.txt:4', message }];
  t.same(docOf(answer('review: changes "add a test"', { round: 1 })).findings, finding('add a test'));
  t.same(docOf(answer('review: changes "add a test"', { round: 1 })).verdict, 'changes_requested');
  t.same(docOf(answer('review: changes "add a test"', { round: 1 })).criteria, met('src/a.txt:4'));
  t.same(docOf(answer('review: changes "add a test"')).verdict, 'approve', 'round 2 of 1: approve');
  t.same(docOf(answer('review: changes "add a test" 2')).verdict, 'changes_requested');
  t.same(docOf(answer('review: changes "add a test" 2', { round: 3 })).verdict, 'approve');
  t.same(docOf(answer('review: changes-always "still wrong"')).findings, finding('still wrong (round 2)'));
  t.same(
    docOf(answer('review: changes-always "still wrong"', { round: 5 })).findings,
    finding('still wrong (round 5)'),
  );
  t.same(docOf(answer('review: same-finding "same"', { round: 7 })).findings, finding('same'));
  t.equal(
    docOf(answer('review: same-finding "same"')).summary,
    'TASK-3 round 2: changes requested by the scripted reviewer',
  );
});

t.test('garbage, empty, none, exit, hang: no verdict', async (t) => {
  t.same(answer('review: garbage'), { kind: 'garbage', text: GARBAGE });
  t.throws(() => JSON.parse(GARBAGE) as unknown, 'garbage is not JSON');
  t.same(answer('review: empty'), { kind: 'empty' });
  t.same(answer('review: none'), { kind: 'none' });
  t.same(answer('review: exit 1'), { kind: 'exit', code: 1 });
  t.same(answer('review: hang'), { kind: 'hang' });
});

t.test('stale: the previous session round and nonce; without one, the round before', async (t) => {
  const stale = docOf(answer('review: stale', {}, { round: 1, nonce: 'n1' }));
  t.same([stale.round, stale.nonce, stale.verdict, stale.candidate], [1, 'n1', 'approve', CANDIDATE]);
  const first = docOf(answer('review: stale', { round: 1 }));
  t.same([first.round, first.nonce], [0, 'stale-n2']);
});

t.test('contradictory and unverified', async (t) => {
  const contradictory = docOf(answer('review: contradictory'));
  t.same(contradictory.verdict, 'approve');
  t.same(contradictory.criteria, [
    { criterion: 1, met: false, evidence: [], note: 'not done' },
    { criterion: 2, met: true, evidence: ['src/a.txt:4'], note: 'met' },
  ]);
  const noCriteria = docOf(answer('review: contradictory', { criteria: [] }));
  t.same(
    [noCriteria.verdict, noCriteria.criteria, noCriteria.findings],
    ['approve', [], [{ severity: 'blocker', location: 'src/a.txt:4', message: 'left unfinished' }]],
  );
  t.same(docOf(answer('review: unverified')).criteria, met('README.md:1'));
  t.same(
    docOf(answerFor({ kind: 'unverified' }, request, { changed: 'src/a.txt:4', untouched: undefined }, undefined))
      .criteria[0]!.evidence,
    ['README.md:1000000'],
    'no untouched line to cite: a line that does not exist',
  );
});

t.test('planReview: effects in order, the last verdict verb, rate-limited apart', async (t) => {
  const plan = planReview(
    parseReviewInstructions(
      'review: edit a.txt "x"\nreview: garbage\nreview: commit\nreview: rate-limited 1\nreview: changes "m"\nreview: touch-agent\nreview: move-branch',
    ).instructions,
  );
  t.same(plan, {
    effects: [
      { kind: 'edit', path: 'a.txt', text: 'x' },
      { kind: 'commit' },
      { kind: 'touch-agent' },
      { kind: 'move-branch' },
    ],
    verdict: { kind: 'changes', message: 'm', rounds: 1 },
    rateLimited: { sessions: 1 },
  });
  t.same(planReview([]), { effects: [], verdict: { kind: 'approve' }, rateLimited: undefined });
});

// ---------------------------------------------------------------- posing as codex

const codexInvocation: AgentInvocation = {
  binary: 'codex',
  prompt: '',
  workspace: '/w',
  taskId: 'TASK-3',
  model: 'gpt-5',
  effort: 'high',
  env: {},
};

t.test("readCodexArgv: the adapter's argv, implementer and reviewer", async (t) => {
  const implement = codexAdapter.buildCommand(codexInvocation).args;
  t.ok(looksLikeCodexArgv(implement));
  t.same(readCodexArgv(implement), {
    model: 'gpt-5',
    sandbox: 'workspace-write',
    configs: ['model_reasoning_effort=high'],
    outputSchema: undefined,
    outputLastMessage: undefined,
    cd: '/w',
  });
  const review = codexAdapter.buildCommand({
    ...codexInvocation,
    role: 'review',
    review: { schemaText: '{}', schemaFile: '/h/schema.json', verdictFile: '/h/verdict.json' },
  }).args;
  t.same(readCodexArgv(review), {
    model: 'gpt-5',
    sandbox: 'read-only',
    configs: ['model_reasoning_effort=high'],
    outputSchema: '/h/schema.json',
    outputLastMessage: '/h/verdict.json',
    cd: '/w',
  });
  t.same(readCodexArgv(['exec', '--json', '--output-last-message=/o', '--sandbox=read-only']).outputLastMessage, '/o');
  t.notOk(looksLikeCodexArgv(['exec', '-']), 'codex without --json is not what the runner starts');
  t.notOk(looksLikeCodexArgv([]));
});

t.test("readCodexArgv: codex's own argument errors", async (t) => {
  t.equal(
    readCodexArgv(['exec', '--json', '--full-auto', '-']).error,
    "error: unexpected argument '--full-auto' found",
  );
  t.equal(
    readCodexArgv(['exec', '--json', '-s', 'readonly', '-']).error,
    "error: invalid value 'readonly' for '--sandbox <SANDBOX_MODE>'\n  [possible values: read-only, workspace-write, danger-full-access]",
  );
  t.equal(readCodexArgv(['exec', '--json', '-m']).error, "error: a value is required for '-m' but none was supplied");
  t.same(readPose(['exec', '--json', '--nope']), { error: "error: unexpected argument '--nope' found", exitCode: 2 });
});

t.test('the pose: command, claude (with its reviewer flags) or codex', async (t) => {
  t.same(readPose([]), { cli: 'command' });
  const reviewer = claudeAdapter.buildCommand({
    ...codexInvocation,
    binary: 'claude',
    role: 'review',
    review: { schemaText: '{"type":"object"}', schemaFile: '/s', verdictFile: '/v' },
  }).args;
  const claude = readClaudeArgv(reviewer);
  t.same(claude.disallowedTools, ['Edit', 'Write', 'NotebookEdit']);
  t.same(claude.jsonSchema, { type: 'object' });
  t.same(sessionTools(claude), ['Bash', 'Read', 'StructuredOutput'], 'the init event shows the reviewer tools');
  t.same(sessionTools(readClaudeArgv(claudeAdapter.buildCommand(codexInvocation).args)), [
    'Bash',
    'Edit',
    'Read',
    'Write',
  ]);
  t.same(
    readClaudeArgv(['-p', '--output-format', 'stream-json', '--disallowed-tools', 'Edit', 'Write', '--verbose'])
      .disallowedTools,
    ['Edit', 'Write'],
  );
  const bad = (schema: string) =>
    readPose(['-p', '--output-format', 'stream-json', '--verbose', '--json-schema', schema]);
  t.same(bad('[1]'), { error: 'Error: --json-schema must be a JSON object', exitCode: 1 });
  t.match(bad('{'), { error: /^Error: --json-schema is not valid JSON: /, exitCode: 1 });
});

t.test('codex lines: thread, turn, the last message, usage; a usage limit', async (t) => {
  const pose = readPose(['exec', '--json', '-']);
  if ('error' in pose) throw new Error(pose.error);
  const facts = sessionFacts(pose, 'sid', '/w');
  const [started, turn] = openingLines(pose, facts, 'TASK-3', 'p');
  t.match(JSON.parse(started!), { type: 'thread.started', thread_id: /^[0-9a-f-]{36}$/ });
  t.same(JSON.parse(turn!), { type: 'turn.started' });
  const closing = closingLines(pose, facts, 'p', { message: 'TASK-3: done', turns: 2, resetsAt: 0 });
  t.same(JSON.parse(closing[0]!), {
    type: 'item.completed',
    item: { id: 'item_0', type: 'agent_message', text: 'TASK-3: done' },
  });
  const usage = usageFor('p');
  t.same(JSON.parse(turnCompleted('p')), {
    type: 'turn.completed',
    usage: {
      input_tokens: usage.inputTokens + usage.cacheReadTokens,
      cached_input_tokens: usage.cacheReadTokens,
      output_tokens: usage.outputTokens,
    },
  });
  const parsed = codexAdapter.parseResult({
    stdoutLines: [started!, turn!, ...closing],
    stderrTail: '',
    exitCode: 0,
    signal: null,
    endedBy: 'exit',
  });
  t.same(
    [parsed.ok, parsed.finalMessage, parsed.usage],
    [true, 'TASK-3: done', { input: usage.inputTokens, output: 42, cacheRead: 1000 }],
  );
  const limited = codexAdapter.parseResult({
    stdoutLines: [started!, turn!, ...rateLimitedLines(pose, facts, 0)],
    stderrTail: '',
    exitCode: 1,
    signal: null,
    endedBy: 'exit',
    endedAt: Date.UTC(2026, 11, 1, 12),
  });
  t.same([limited.failure, limited.resetAt], ['rate-limited', '2026-12-01T14:05:00.000Z']);
  t.same(rateLimitedLines({ cli: 'command' }, facts, 0), [], 'a command agent has no stream to say it in');
});
