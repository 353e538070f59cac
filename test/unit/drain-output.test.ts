// What a drain and `run` print for people: one line per event and per task,
// no control character from a title, a reason or a failure, the kind of an
// outcome said once, and a REASON column that holds reasons only.
import t from 'tap';
import { progressPrinter, renderSummary } from '../../src/cli/drain-output.js';
import { describeOutcome } from '../../src/cli/run.js';
import type { DrainEvent, DrainSummary } from '../../src/drain/types.js';

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;
const HOSTILE = 'a\u001b]0;owned\u0007\u001b[2J\nforged line\rb';

function summary(extra: Partial<DrainSummary> = {}): DrainSummary {
  return {
    runId: 'r1',
    outcome: 'failed',
    failure: `git said ${HOSTILE}`,
    pushed: false,
    sessions: [],
    startedAt: '',
    endedAt: '',
    staging: { base: '', head: '' },
    tasks: [
      { id: 'TASK-1', title: 'Landed title', outcome: 'landed', durationMs: 1000 },
      { id: 'TASK-2', title: HOSTILE, outcome: 'blocked', reason: HOSTILE, durationMs: 1000 },
    ],
    ...extra,
  };
}

t.test('the summary: no control character, one line per task, no title in REASON', async (t) => {
  const text = renderSummary(summary());
  t.notMatch(text, CONTROL);
  t.equal(text.trimEnd().split('\n').length, 4, 'head, table header, two tasks');
  const landed = text.split('\n').find((line) => line.startsWith('TASK-1'))!;
  t.notMatch(landed, 'Landed title', 'a landed task has no reason; its title is not one');
});

t.test('human progress: each event one printable line', async (t) => {
  const lines: string[] = [];
  const print = progressPrinter({ err: (text) => void lines.push(text) }, 'human');
  const events: DrainEvent[] = [
    { time: '2026-01-01T00:00:00.000Z', runId: 'r', event: 'task-started', taskId: 'TASK-2', title: HOSTILE },
    {
      time: '2026-01-01T00:00:00.000Z',
      runId: 'r',
      event: 'task-blocked',
      taskId: 'TASK-2',
      title: HOSTILE,
      reason: HOSTILE,
      durationMs: 1,
    },
    { time: '2026-01-01T00:00:00.000Z', runId: 'r', event: 'drain-finished', outcome: 'failed', reason: HOSTILE },
  ];
  for (const event of events) print(event);
  for (const line of lines) {
    t.notMatch(line.slice(0, -1), CONTROL);
    t.equal(line.indexOf('\n'), line.length - 1, 'one line');
  }
});

t.test('run: an outcome kind is said once', async (t) => {
  t.equal(
    describeOutcome({ kind: 'stalled', reason: 'stalled: the session changed nothing' }),
    'stalled: the session changed nothing',
  );
  t.equal(describeOutcome({ kind: 'blocked', reason: 'needs a key' }), 'blocked: needs a key');
  t.equal(describeOutcome({ kind: 'done' }), 'done');
  t.notMatch(describeOutcome({ kind: 'blocked', reason: HOSTILE }), CONTROL);
});
