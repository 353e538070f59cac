// The transcript renderer on real recorded claude and codex streams (the
// contract tests' fixtures): every line as people read it, tool calls with
// their input, results trimmed with a marker, errors and rate limits,
// unknown event types shown whole, secrets redacted, control sequences
// stripped, and any chunking of the file giving exactly the whole file's
// lines.
import t from 'tap';
import { renderTranscript, TranscriptRenderer, type DisplayLine } from '../../src/control/transcripts/render.js';
import { describeToolInput, trimmed } from '../../src/control/transcripts/display.js';
import { recordedTranscript, transcriptEvent } from '../helpers/transcript-fixture.js';

const texts = (lines: readonly DisplayLine[]) => lines.map((line) => line.text);
const output = (second: number, line: string, stream = 'stdout') =>
  transcriptEvent(second, { event: 'output', stream, line });
const start = (assistant: string) => transcriptEvent(0, { event: 'run-start', assistant, model: 'm1' });

t.test('claude: a session with a tool call, a budget stop, a rate limit and a success', async (t) => {
  const lines = renderTranscript(
    recordedTranscript('claude', [
      'claude-2.1-max-budget.documented.jsonl',
      'claude-2.1-rate-limited.documented.jsonl',
      'claude-2.1-success.documented.jsonl',
    ]),
  );
  t.same(texts(lines), [
    '10:00:00 run started: claude m1 effort high (model from config, effort from label)',
    '10:00:01 session 1 started: claude',
    '10:00:02 claude 2.1.197 session: model claude-sonnet-4-5-20250929, 4 tools, bypassPermissions',
    '10:00:02 tool Bash: npm test',
    '10:00:02   Bash result: 1 failing',
    '10:00:02 rate limit allowed (five_hour), resets 2025-11-30T22:00:00Z',
    '10:00:02 result: error_max_budget_usd (error), 14 turns, 61.2s; tokens 88 in (+30112 cache write, 812300 cache read), 5120 out; cost $0.5127',
    '           Reached maximum budget ($0.5)',
    '10:00:03 session 1 ended: exit 0 (exit), ok; tokens 57 in, 2210 out; cost $0.1834',
    '10:00:01 session 2 started: claude',
    '10:00:02 claude 2.1.197 session: model claude-opus-4-1-20250805, 4 tools, bypassPermissions',
    '10:00:02 rate limit rejected (five_hour), resets 2026-05-12T06:00:00Z',
    "10:00:02 assistant: You've hit your limit · resets 2pm (Asia/Shanghai)",
    '         error: rate_limit',
    '10:00:02 result: success (error), API status 429, 1 turns, 0.6s; tokens 0 in, 0 out; cost $0.0000',
    "           You've hit your limit · resets 2pm (Asia/Shanghai)",
    '10:00:03 session 2 ended: exit 0 (exit), ok; tokens 57 in, 2210 out; cost $0.1834',
    '10:00:01 session 3 started: claude',
    '10:00:02 claude 2.1.197 session: model claude-sonnet-4-5-20250929, 4 tools, bypassPermissions',
    '10:00:02 assistant: Done: TASK-3 is implemented and committed.',
    '10:00:02 rate limit allowed (five_hour), resets 2025-11-30T22:00:00Z',
    '10:00:02 result: success, 9 turns, 48.2s; tokens 57 in (+9120 cache write, 181004 cache read), 2210 out; cost $0.1834',
    '10:00:03 session 3 ended: exit 0 (exit), ok; tokens 57 in, 2210 out; cost $0.1834',
    '10:00:04 run ended: done',
  ]);
  const kinds = new Map(lines.map((line) => [line.text, line.kind]));
  t.equal(kinds.get('10:00:02 tool Bash: npm test'), 'tool');
  t.equal(kinds.get('10:00:02 rate limit rejected (five_hour), resets 2026-05-12T06:00:00Z'), 'error');
  t.equal(kinds.get('10:00:02 rate limit allowed (five_hour), resets 2025-11-30T22:00:00Z'), 'notice');
  t.equal(kinds.get('10:00:02 assistant: Done: TASK-3 is implemented and committed.'), 'assistant');
  t.equal(kinds.get('           Reached maximum budget ($0.5)'), 'error');
});

t.test('claude: the captured refusals (not logged in, the broker over budget)', async (t) => {
  const lines = texts(
    renderTranscript(
      recordedTranscript('claude', ['claude-2.1.197-not-logged-in.jsonl', 'claude-2.1.197-broker-over-budget.jsonl']),
    ),
  );
  t.ok(lines.includes('10:00:02 assistant: Not logged in · Please run /login'));
  t.ok(lines.includes('         error: authentication_failed'));
  t.ok(
    lines.includes(
      '           API Error: 400 agent-runner broker: over budget: over its budget: $1.00 of $1.00 (task_usd)',
    ),
  );
  t.ok(lines.includes('10:00:02 claude 2.1.197 session: model claude-opus-4-8[1m], 21 tools, bypassPermissions'));
});

t.test('codex: reasoning, a command with its exit and output, usage, and the failures', async (t) => {
  const lines = renderTranscript(
    recordedTranscript('codex', [
      'codex-0.171-turn-completed.documented.jsonl',
      'codex-0.171-usage-limit.documented.jsonl',
      'codex-0.171-broker-over-budget.jsonl',
    ]),
  );
  t.same(texts(lines).slice(2), [
    '10:00:02 codex session: thread 0199a213-81c0-7800-8aa1-bbab2a035a53',
    '10:00:02 turn started',
    '10:00:02 thinking: **Reading the task file**',
    `10:00:02 tool shell: bash -lc 'git commit -am "TASK-9: Fix y"'`,
    '           shell result (exit 0): [auto/TASK-9 4f2a1c0] TASK-9: Fix y',
    '10:00:02 assistant: TASK-9 is done and committed.',
    '10:00:02 turn completed: tokens 24763 in (24448 cached), 122 out',
    '10:00:03 session 1 ended: exit 0 (exit), ok; tokens 57 in, 2210 out; cost $0.1834',
    '10:00:01 session 2 started: codex',
    '10:00:02 codex session: thread 0199b7e0-2c11-7a40-9e3d-5f1c2b3a4d5e',
    '10:00:02 turn started',
    "10:00:02 error: You've hit your usage limit. Upgrade to Pro (https://openai.com/chatgpt/pricing) or try again in 3 days 2 hours 11 minutes.",
    "10:00:02 turn failed: You've hit your usage limit. Upgrade to Pro (https://openai.com/chatgpt/pricing) or try again in 3 days 2 hours 11 minutes.",
    '10:00:03 session 2 ended: exit 0 (exit), ok; tokens 57 in, 2210 out; cost $0.1834',
    '10:00:01 session 3 started: codex',
    '10:00:02 codex session: thread 01a248f2-f2fe-7051-8f8b-9a06456b78ce',
    '10:00:02 error: Model metadata for `gpt-5-codex` not found. Defaulting to fallback metadata; this can degrade performance and cause issues.',
    '10:00:02 turn started',
    '10:00:02 error: agent-runner broker: over budget: over its budget: $1.00 of $1.00 (task_usd) (agent_runner_over_budget)',
    '10:00:02 turn failed: agent-runner broker: over budget: over its budget: $1.00 of $1.00 (task_usd) (agent_runner_over_budget)',
    '10:00:03 session 3 ended: exit 0 (exit), ok; tokens 57 in, 2210 out; cost $0.1834',
    '10:00:04 run ended: done',
  ]);
  t.equal(lines.find((line) => line.text.includes('turn failed'))?.kind, 'error');
  t.equal(lines.find((line) => line.text.includes('turn completed'))?.kind, 'usage');
});

t.test('codex: a command shown when it starts is not shown again when it ends', async (t) => {
  const item = {
    id: 'item_1',
    type: 'command_execution',
    command: 'npm test',
    aggregated_output: '',
    status: 'in_progress',
  };
  const text =
    start('codex') +
    output(1, JSON.stringify({ type: 'item.started', item })) +
    output(
      2,
      JSON.stringify({
        type: 'item.completed',
        item: { ...item, exit_code: 1, aggregated_output: 'boom\n', status: 'failed' },
      }),
    );
  const lines = renderTranscript(text);
  t.same(texts(lines).slice(1), ['10:00:01 tool shell: npm test', '10:00:02   shell failed (exit 1): boom']);
  t.equal(lines[2]!.kind, 'error');
});

t.test('unknown event types are shown whole, never dropped', async (t) => {
  const text =
    start('claude') +
    transcriptEvent(1, { event: 'brand-new', detail: 'kept' }) +
    output(2, JSON.stringify({ type: 'telemetry_blip', n: 1 })) +
    output(3, JSON.stringify({ type: 'system', subtype: 'compact_boundary', pre_tokens: 9 })) +
    output(4, JSON.stringify({ type: 'assistant', message: { content: [{ type: 'server_tool_use', name: 'web' }] } })) +
    output(5, JSON.stringify({ type: 'item.completed', item: { id: 'x', type: 'hologram', text: 'hi' } }));
  const lines = renderTranscript(text);
  t.same(texts(lines).slice(1), [
    '10:00:01 brand-new {"time":"2026-01-01T10:00:01.000Z","event":"brand-new","detail":"kept"}',
    '10:00:02 telemetry_blip: {"type":"telemetry_blip","n":1}',
    '10:00:03 system compact_boundary: {"type":"system","subtype":"compact_boundary","pre_tokens":9}',
    '10:00:04 assistant server_tool_use: {"type":"server_tool_use","name":"web"}',
    '10:00:05 item hologram: {"id":"x","type":"hologram","text":"hi"}',
  ]);
  t.same(
    lines.slice(1).map((line) => line.kind),
    ['unknown', 'unknown', 'notice', 'unknown', 'unknown'],
  );
});

t.test("a command agent's lines, stderr and lines that are not JSON are shown as they are", async (t) => {
  const text =
    start('command') +
    output(1, '{"type":"assistant","message":{}}') +
    output(2, 'plain words') +
    output(3, 'a warning', 'stderr') +
    'not json at all\n';
  t.same(texts(renderTranscript(text)), [
    '10:00:00 run started: command m1',
    '10:00:01    | {"type":"assistant","message":{}}',
    '10:00:02    | plain words',
    '10:00:03 err| a warning',
    'not json at all',
  ]);
});

t.test('results are trimmed with a marker; what the model says keeps more', async (t) => {
  const long = Array.from({ length: 20 }, (_, i) => `line ${i + 1}`).join('\n');
  const text =
    start('claude') +
    output(
      1,
      JSON.stringify({
        type: 'assistant',
        message: { content: [{ type: 'tool_use', id: 'a', name: 'Read', input: { file_path: 'src/x.ts' } }] },
      }),
    ) +
    output(
      2,
      JSON.stringify({
        type: 'user',
        message: { content: [{ type: 'tool_result', tool_use_id: 'a', content: long }] },
      }),
    ) +
    output(
      3,
      JSON.stringify({
        type: 'user',
        message: {
          content: [
            {
              type: 'tool_result',
              tool_use_id: 'a',
              content: [{ type: 'text', text: 'x'.repeat(500) }],
              is_error: true,
            },
          ],
        },
      }),
    );
  const lines = texts(renderTranscript(text));
  t.same(lines.slice(1, 9), [
    '10:00:01 tool Read: src/x.ts',
    '10:00:02   Read result: line 1',
    '           line 2',
    '           line 3',
    '           line 4',
    '           line 5',
    '           line 6',
    '           [trimmed: 14 more lines, 108 chars not shown; --raw has them]',
  ]);
  t.same(lines.slice(9), [
    `10:00:03   Read failed: ${'x'.repeat(400)}...`,
    '           [trimmed: 100 chars not shown; --raw has them]',
  ]);
  t.equal(trimmed('short', 6, 400), 'short', 'nothing to trim: no marker');
});

t.test('a tool call says its input in a few words', async (t) => {
  const rows: [string, unknown, string][] = [
    ['Bash', { command: 'npm test\nnpm run lint' }, 'npm test (+1 lines)'],
    ['Edit', { file_path: 'a.ts', old_string: 'x\ny', new_string: 'x\ny\nz' }, 'a.ts (-2 +3 lines)'],
    ['Write', { file_path: 'b.ts', content: 'a\nb\n' }, 'b.ts (3 lines)'],
    ['MultiEdit', { file_path: 'c.ts', edits: [{}, {}] }, 'c.ts (2 edits)'],
    ['Grep', { pattern: 'TODO', path: 'src' }, 'TODO in src'],
    ['WebFetch', { url: 'https://example.com' }, 'https://example.com'],
    ['TodoWrite', { todos: [1, 2, 3] }, '3 todos'],
    ['Mystery', { a: 1 }, '{"a":1}'],
  ];
  for (const [name, input, said] of rows) t.equal(describeToolInput(name, input), said, name);
});

t.test('secrets are redacted and control sequences stripped', async (t) => {
  const token = `arcap_${'A'.repeat(43)}`;
  const known = 'ghp_knownsecretvalue123';
  const text =
    start('claude') +
    output(
      1,
      JSON.stringify({
        type: 'assistant',
        message: { content: [{ type: 'text', text: `token ${token} and ${known}` }] },
      }),
    ) +
    output(
      2,
      JSON.stringify({
        type: 'assistant',
        message: {
          content: [
            {
              type: 'tool_use',
              id: 'b',
              name: 'Bash',
              input: { command: `curl -H "${known}" \u001b]0;owned\u0007x\u001b[2J` },
            },
          ],
        },
      }),
    );
  const lines = texts(renderTranscript(text, { secrets: [known] }));
  t.same(lines.slice(1), [
    '10:00:01 assistant: token [redacted] and [redacted]',
    '10:00:02 tool Bash: curl -H "[redacted]" x',
  ]);
  t.notMatch(lines.join('\n'), /arcap_|knownsecret/);
  t.notOk(lines.join('\n').includes('\u001b'), 'no escape character left');
});

t.test('fed a chunk at a time, the renderer gives exactly what the whole file gives', async (t) => {
  const text =
    recordedTranscript('claude', [
      'claude-2.1-max-budget.documented.jsonl',
      'claude-2.1-rate-limited.documented.jsonl',
      'claude-2.1-success.documented.jsonl',
    ]) +
    recordedTranscript('codex', [
      'codex-0.171-turn-completed.documented.jsonl',
      'codex-0.171-usage-limit.documented.jsonl',
    ]) +
    'a line that is not JSON\n';
  const whole = renderTranscript(text);
  t.ok(whole.length > 40, `the whole file renders (${whole.length} lines)`);
  for (const size of [1, 7, 100, 4096]) {
    const renderer = new TranscriptRenderer();
    const chunked: DisplayLine[] = [];
    for (let i = 0; i < text.length; i += size) chunked.push(...renderer.text(text.slice(i, i + size)));
    t.same(chunked, whole, `chunks of ${size} characters`);
  }
  const byLines = new TranscriptRenderer();
  const lines = text.split('\n').slice(0, -1);
  const fed = [
    ...byLines.lines(lines.slice(0, 5)),
    ...byLines.lines(lines.slice(5, 6)),
    ...byLines.lines(lines.slice(6)),
  ];
  t.same(fed, whole, 'complete lines in three batches');
  const half = new TranscriptRenderer();
  t.same(half.text(text.slice(0, 30)), [], 'half a line shows nothing yet');
});
