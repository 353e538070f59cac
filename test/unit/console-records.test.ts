// The pure parts of logs, runs, pause and retention: which transcript is a
// task's, transcript lines for people, the merged run history, drain
// summaries read back as hostile input, what retention removes, the
// retention_days key, and a paused repo's tick.
import t from 'tap';
import { completeLines, pickTranscript } from '../../src/control/transcripts/view.js';
import { renderTranscript } from '../../src/control/transcripts/render.js';
import { mergeRunHistory } from '../../src/control/runs/history.js';
import { parseDrainSummary } from '../../src/drain/history.js';
import {
  expiredRecords,
  retentionDays,
  retentionDue,
  DEFAULT_RETENTION_DAYS,
} from '../../src/control/retention/policy.js';
import { decideTick, needsBoard, type TickInput } from '../../src/control/watch/tick.js';
import { parseRegistry } from '../../src/control/registry/parse.js';
import type { RunRecord } from '../../src/control/runs/record.js';
import type { DrainSummary } from '../../src/drain/types.js';

const DAY = 24 * 60 * 60 * 1000;
const NOW = Date.parse('2026-03-01T00:00:00.000Z');

t.test('a task transcript is the newest of that task', async (t) => {
  const entry = (name: string, mtimeMs: number) => ({ name, relative: `transcripts/${name}`, size: 10, mtimeMs });
  const entries = [
    entry('20260101T000000Z-aa-TASK-1.jsonl', 1),
    entry('20260102T000000Z-bb-TASK-1.jsonl', 5),
    entry('20260102T000000Z-bb-TASK-11.jsonl', 9),
    entry('20260102T000000Z-bb-TASK-2.jsonl', 3),
  ];
  t.equal(pickTranscript(entries, 'TASK-1')?.name, '20260102T000000Z-bb-TASK-1.jsonl', 'not TASK-11');
  t.equal(pickTranscript(entries, 'task-2')?.name, '20260102T000000Z-bb-TASK-2.jsonl', 'case does not matter');
  t.equal(
    pickTranscript(entries, undefined)?.name,
    '20260102T000000Z-bb-TASK-11.jsonl',
    'without a task: the last written',
  );
  t.equal(pickTranscript(entries, 'TASK-3'), undefined);
  t.equal(
    pickTranscript([entry('b-TASK-1.jsonl', 5), entry('a-TASK-1.jsonl', 5)], 'TASK-1')?.name,
    'b-TASK-1.jsonl',
    'a tie goes to the later name',
  );
});

t.test('transcript lines for people', async (t) => {
  const rows: [string, string][] = [
    [
      '{"time":"2026-01-01T10:00:01.000Z","event":"run-start","assistant":"claude","model":"opus","effort":"high"}',
      '10:00:01 run started: claude opus effort high',
    ],
    [
      '{"time":"2026-01-01T10:00:02.000Z","event":"session-start","iteration":1,"program":"claude","args":["-p"]}',
      '10:00:02 session 1 started: claude',
    ],
    ['{"time":"2026-01-01T10:00:03.000Z","event":"output","stream":"stdout","line":"hello"}', '10:00:03    | hello'],
    ['{"time":"2026-01-01T10:00:03.000Z","event":"output","stream":"stderr","line":"oops"}', '10:00:03 err| oops'],
    [
      '{"time":"2026-01-01T10:00:04.000Z","event":"output","stream":"stdout","line":"\\u001b]52;c;cGF3bmVk\\u0007clip\\u001b[2J\\r\\u202eevil"}',
      '10:00:04    | clipevil',
    ],
    [
      '{"time":"2026-01-01T10:00:05.000Z","event":"session-end","iteration":1,"exitCode":0,"signal":null,"endedBy":"exit"}',
      '10:00:05 session 1 ended: exit 0 (exit), ok; tokens ? in, ? out; cost unknown',
    ],
    ['{"time":"2026-01-01T10:00:06.000Z","event":"run-end","outcome":"done"}', '10:00:06 run ended: done'],
    ['not json \u001b[31mred', 'not json red'],
    ['{"event":"odd"}', '--:--:-- odd {"event":"odd"}'],
  ];
  const shown = (text: string) => renderTranscript(text).map((line) => line.text);
  for (const [raw, expected] of rows) t.same(shown(`${raw}\n`), [expected], expected);
  t.same(completeLines('a\nb\npartial'), ['a', 'b'], 'an unfinished last line waits');
  t.same(completeLines(''), []);
  t.same(shown('{"event":"run-end","outcome":"x","time":"2026-01-01T00:00:00.000Z"}\nx\ny\n').slice(-2), ['x', 'y']);
});

const record = (id: string, change: Partial<RunRecord> = {}): RunRecord => ({
  id,
  repo: 'web',
  trigger: 'watch',
  user: 'agent-web',
  args: ['--drain'],
  status: 'finished',
  startedAt: `${id}Z`,
  ...change,
});
const drain = (runId: string, change: Partial<DrainSummary> = {}): DrainSummary => ({
  runId,
  outcome: 'drained',
  tasks: [],
  staging: { base: 'a', head: 'b' },
  pushed: true,
  sessions: [],
  startedAt: `${runId}Z`,
  endedAt: `${runId}Z`,
  ...change,
});

t.test('the run history merges root records and the drains kept', async (t) => {
  const landed = { id: 'TASK-1', title: 'A', outcome: 'landed' as const, durationMs: 1 };
  const parked = { id: 'TASK-2', title: 'B', outcome: 'parked' as const, reason: 'red', durationMs: 1 };
  const history = mergeRunHistory(
    [
      record('2026-01-03', {
        trigger: 'job',
        jobId: 'J1',
        outcome: 'drained',
        tasks: [landed],
        exitCode: 0,
        endedAt: '2026-01-03T01Z',
      }),
      record('2026-01-04', { status: 'running' }),
      record('2026-01-01', { trigger: 'manual' }),
    ],
    [
      drain('2026-01-03', { tasks: [landed, parked] }),
      drain('2026-01-02', { outcome: 'failed', failure: 'fetch failed', tasks: [parked] }),
      drain('2026-01-01', { tasks: [landed] }),
    ],
  );
  t.same(
    history.map((h) => [h.id, h.trigger, h.outcome]),
    [
      ['2026-01-04', 'watch', 'running'],
      ['2026-01-03', 'job', 'drained'],
      ['2026-01-02', 'orchestrate', 'failed'],
      ['2026-01-01', 'dispatch', 'drained'],
    ],
    'newest first, each run once',
  );
  t.same(history[1]!.counts, { landed: 1, parked: 0, blocked: 0, failed: 0 }, "root's record wins");
  t.equal(history[1]!.jobId, 'J1');
  t.same(history[2]!.counts, { landed: 0, parked: 1, blocked: 0, failed: 0 });
  t.equal(history[2]!.detail, 'fetch failed');
  t.same(history[3]!.tasks, [landed], "a record without tasks takes the drain's");
  t.equal(history[0]!.tokens, null, 'tokens are not recorded yet');
  t.equal(mergeRunHistory([], [drain('a'), drain('b'), drain('c')], 2).length, 2, 'limit');
});

t.test('drain summaries are validated before they are shown', async (t) => {
  const good = drain('20260101T000000Z-aa', {
    tasks: [{ id: 'TASK-1', title: 'A', outcome: 'landed', durationMs: 3 }],
  });
  t.same(parseDrainSummary(JSON.stringify(good)), good);
  const rows: [string, string][] = [
    ['not json', '{'],
    ['an array', '[]'],
    ['a run id that is a path', JSON.stringify({ ...good, runId: '../../etc' })],
    ['an unknown outcome', JSON.stringify({ ...good, outcome: 'pwned' })],
    ['no tasks', JSON.stringify({ ...good, tasks: 'x' })],
    ['no times', JSON.stringify({ ...good, startedAt: 1 })],
  ];
  for (const [name, text] of rows) t.equal(parseDrainSummary(text), undefined, name);
  const odd = parseDrainSummary(
    JSON.stringify({ ...good, tasks: [{ id: 'TASK-1', title: 'A', outcome: 'landed' }, { id: 3 }, 'x'] }),
  );
  t.same(odd?.tasks, [{ id: 'TASK-1', title: 'A', outcome: 'landed', durationMs: 0 }], 'malformed tasks are dropped');
});

t.test('retention: what expires, never a running run', async (t) => {
  const rec = (name: string, ageDays: number | undefined, mtimeAgeDays: number, running = false) => ({
    name,
    finishedMs: ageDays === undefined ? undefined : NOW - ageDays * DAY,
    mtimeMs: NOW - mtimeAgeDays * DAY,
    running,
  });
  const records = [
    rec('old', 31, 31),
    rec('young', 29, 40),
    rec('running', undefined, 400, true),
    rec('no-end', undefined, 45),
    rec('no-end-young', undefined, 2),
    { name: 'nan', finishedMs: NaN, mtimeMs: NOW - 60 * DAY, running: false },
    rec('edge', 30, 30),
  ];
  t.same(
    expiredRecords(records, NOW, 30),
    ['old', 'no-end', 'nan'],
    'finish time first, else the file time; exactly 30 days is kept',
  );
  t.same(expiredRecords(records, NOW, 1), ['old', 'young', 'no-end', 'no-end-young', 'nan', 'edge']);
  t.equal(retentionDays({}), DEFAULT_RETENTION_DAYS);
  t.equal(retentionDays({ retentionDays: 7 }), 7);
  t.equal(retentionDue(undefined, NOW), true, 'never ran');
  t.equal(retentionDue(NOW - DAY + 1, NOW), false);
  t.equal(retentionDue(NOW - DAY, NOW), true, 'a day later');
  t.equal(retentionDue(NOW + DAY, NOW), true, 'a stamp from the future (clock set back) does not stop it');
  t.equal(retentionDue(NaN, NOW), true);
});

t.test('retention_days in the registry', async (t) => {
  const schedules = { isValid: () => true };
  const parse = (extra: string) =>
    parseRegistry(`[defaults]\n${extra}\n[repos.web]\npath = "/srv/web"\nproxy_port = 700\n`, '/r.toml', schedules);
  t.equal(parse('').registry.repos[0]!.retentionDays, undefined, 'unset: the default applies where it is used');
  t.equal(parse('retention_days = 7').registry.repos[0]!.retentionDays, 7);
  for (const bad of ['0', '-1', '3.5', '"30"', '99999']) {
    const { problems } = parse(`retention_days = ${bad}`);
    t.equal(problems.length, 1, `retention_days = ${bad} is refused`);
    t.match(problems[0]?.problem, /whole number of days/);
  }
});

t.test('a paused repo starts nothing', async (t) => {
  const base: TickInput = { enabled: true, running: false, stopping: false, queued: 0, ready: [] };
  t.same(decideTick({ ...base, paused: true, queued: 2, ready: ['TASK-1'] }), { kind: 'skip', reason: 'paused' });
  t.same(decideTick({ ...base, paused: true, running: true }), { kind: 'skip', reason: 'running' });
  t.same(decideTick({ ...base, paused: false, ready: ['TASK-1'] }), { kind: 'drain', ready: ['TASK-1'] });
  t.equal(
    needsBoard({ enabled: true, paused: true, running: false, stopping: false, queued: 0 }),
    false,
    'a paused repo reads no board',
  );
});
