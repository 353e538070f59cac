// Batching and bisection, table by table: the pure decisions driven by a
// fake gate (red exactly when the gated state holds a red task) and a fake
// merge (some tasks conflict). The driver checks on every landing that
// auto/work moves only to a state a gate passed.
import t from 'tap';
import {
  afterCulprit,
  afterGate,
  afterLand,
  afterMerge,
  DEFAULT_MAX_BATCH,
  formBatch,
  nextStep,
  startBisection,
} from '../../src/drain/verdict/batch.js';

interface FakeGate {
  readonly ok: boolean;
  readonly run: number;
}

interface Run {
  readonly landed: string[];
  readonly culprits: string[];
  readonly conflicts: string[];
  readonly gateRuns: number;
  /** The tasks of each gate run, in order. */
  readonly gated: string[][];
  readonly landings: string[][];
}

/** Drives the table to its end: `red` tasks fail any gate whose state holds them; `conflicting` tasks never merge. */
function drive(batch: readonly string[], red: ReadonlySet<string>, conflicting: ReadonlySet<string> = new Set()): Run {
  let state = startBisection<FakeGate>(batch);
  const autoWork: string[] = [];
  const greenStates = new Set<string>([JSON.stringify(autoWork)]);
  const run: Run = { landed: autoWork, culprits: [], conflicts: [], gateRuns: 0, gated: [], landings: [] };
  for (let guard = 0; guard < 1000; guard++) {
    const step = nextStep(state);
    switch (step.kind) {
      case 'merge':
        if (conflicting.has(step.task)) run.conflicts.push(step.task);
        state = afterMerge(state, !conflicting.has(step.task));
        break;
      case 'gate': {
        const tree = [...autoWork, ...step.tasks];
        const ok = !tree.some((task) => red.has(task));
        if (ok) greenStates.add(JSON.stringify(tree));
        run.gated.push([...step.tasks]);
        state = afterGate(state, step.prefix, { ok, run: run.gated.length });
        break;
      }
      case 'land': {
        const next = [...autoWork, ...step.tasks];
        if (!greenStates.has(JSON.stringify(next))) throw new Error(`landed an ungated state: ${next.join(',')}`);
        autoWork.push(...step.tasks);
        run.landings.push([...step.tasks]);
        state = afterLand(state, step.tasks.length);
        break;
      }
      case 'culprit':
        if (step.gate.ok) throw new Error('a culprit with a green gate');
        run.culprits.push(step.task);
        state = afterCulprit(state);
        break;
      case 'done':
        return { ...run, gateRuns: state.gateRuns };
    }
  }
  throw new Error('the bisection did not end');
}

const ids = (n: number) => Array.from({ length: n }, (_, i) => `task-${i + 1}`);
const bound = (n: number) => 2 * Math.ceil(Math.log2(n)) + 1;

t.test('formBatch: the longest-waiting tasks, merged in board id order; 1 is one at a time', async (t) => {
  const rows: [string, string[], number, string[]][] = [
    ['all fit, id order not arrival order', ['task-10', 'task-2', 'task-3'], 8, ['task-2', 'task-3', 'task-10']],
    ['the longest-waiting maxBatch', ['task-9', 'task-1', 'task-5', 'task-2'], 3, ['task-1', 'task-5', 'task-9']],
    ['maxBatch 1 takes the first to arrive', ['task-9', 'task-1'], 1, ['task-9']],
    ['nonsense below 1 still takes one', ['task-9', 'task-1'], 0, ['task-9']],
    ['nothing waiting', [], 8, []],
  ];
  for (const [name, waiting, maxBatch, expected] of rows) t.same(formBatch(waiting, maxBatch), expected, name);
  t.equal(DEFAULT_MAX_BATCH, 8);
});

t.test('all green: one gate, one landing of the whole batch in order', async (t) => {
  for (const n of [1, 2, 8, 20]) {
    const run = drive(ids(n), new Set());
    t.same(run.landed, ids(n), `${n}: all land`);
    t.equal(run.gateRuns, 1, `${n}: one gate run`);
    t.same(run.landings, [ids(n)], `${n}: one landing`);
    t.same(run.culprits, []);
  }
});

t.test('a batch of one is the one-at-a-time integrator', async (t) => {
  t.same(drive(['task-1'], new Set(['task-1'])), {
    landed: [],
    culprits: ['task-1'],
    conflicts: [],
    gateRuns: 1,
    gated: [['task-1']],
    landings: [],
  });
  t.same(drive(['task-1'], new Set()).gateRuns, 1);
});

t.test('one red at each position: only it is parked, every other task lands, within the gate bound', async (t) => {
  for (const n of [2, 3, 8, 20]) {
    for (let position = 0; position < n; position++) {
      const batch = ids(n);
      const culprit = batch[position]!;
      const run = drive(batch, new Set([culprit]));
      const name = `${n} tasks, red at ${position + 1}`;
      t.same(run.culprits, [culprit], `${name}: the culprit`);
      t.same(
        run.landed,
        batch.filter((task) => task !== culprit),
        `${name}: the rest land in order`,
      );
      t.ok(run.gateRuns <= bound(n), `${name}: ${run.gateRuns} gate runs <= ${bound(n)}`);
    }
  }
});

t.test('one red at each position of 8: the exact gates run', async (t) => {
  const rows: [number, string[][]][] = [
    [1, [ids(8), ids(4), ids(2), ids(1), ids(8).slice(1)]],
    [4, [ids(8), ids(4), ids(2), ids(3), ids(8).slice(4)]],
    [8, [ids(8), ids(4), ids(6), ids(7), []]],
  ];
  for (const [position, gated] of rows) {
    // After the culprit, the remaining chain is gated again (an empty one is not).
    const expected = gated.filter((tasks) => tasks.length);
    const run = drive(ids(8), new Set([`task-${position}`]));
    t.equal(run.gateRuns, expected.length, `red at ${position}: ${run.gateRuns} runs`);
    t.same(run.gated, expected, `red at ${position}: the prefixes bisected, then the rest`);
  }
});

t.test('two reds: both are found, the rest land, and the result is the one-at-a-time result', async (t) => {
  const rows: [number, string[]][] = [
    [8, ['task-1', 'task-2']],
    [8, ['task-1', 'task-8']],
    [8, ['task-3', 'task-6']],
    [8, ['task-7', 'task-8']],
    [20, ['task-5', 'task-17']],
  ];
  for (const [n, reds] of rows) {
    const run = drive(ids(n), new Set(reds));
    t.same(run.culprits, reds, `${n} tasks, reds ${reds.join(' ')}: both parked, in order`);
    t.same(
      run.landed,
      ids(n).filter((task) => !reds.includes(task)),
      `${n} tasks, reds ${reds.join(' ')}: the rest land`,
    );
    t.ok(run.gateRuns <= 2 * bound(n), `${n} tasks, reds ${reds.join(' ')}: ${run.gateRuns} gate runs`);
  }
  // Serial: every task gated alone on top of what landed before it.
  const serial = ids(8).map((task) => drive([task], new Set(['task-3', 'task-6'])));
  t.same(
    serial.flatMap((run) => run.culprits),
    ['task-3', 'task-6'],
  );
});

t.test('a red batch where every task is red parks all of them', async (t) => {
  const run = drive(ids(4), new Set(ids(4)));
  t.same(run.culprits, ids(4));
  t.same(run.landed, []);
});

t.test(
  'a conflict inside a batch: that task leaves the batch (the conflict rule applies to it), the rest are gated once',
  async (t) => {
    const rows: [string, Set<string>, Set<string>, Partial<Run>][] = [
      [
        'a conflict in the middle',
        new Set(),
        new Set(['task-2']),
        { conflicts: ['task-2'], landed: ['task-1', 'task-3', 'task-4'], gateRuns: 1, culprits: [] },
      ],
      [
        'every task conflicts: no gate runs',
        new Set(),
        new Set(ids(4)),
        { conflicts: ids(4), landed: [], gateRuns: 0, culprits: [] },
      ],
      [
        'a conflict and a red',
        new Set(['task-4']),
        new Set(['task-1']),
        { conflicts: ['task-1'], landed: ['task-2', 'task-3'], culprits: ['task-4'] },
      ],
    ];
    for (const [name, red, conflicting, expected] of rows) {
      const run = drive(ids(4), red, conflicting);
      for (const [key, value] of Object.entries(expected)) t.same(run[key as keyof Run], value, `${name}: ${key}`);
    }
  },
);

t.test('20 tasks with one red: at most 2*ceil(log2(20))+1 gate runs wherever it is', async (t) => {
  const most = Math.max(...ids(20).map((task) => drive(ids(20), new Set([task])).gateRuns));
  t.ok(most <= 11, `most gate runs ${most}`);
});

t.test(
  'the steps: merge all first, gate the tip, bisect by prefixes, land the green prefix before the culprit',
  async (t) => {
    let state = startBisection<FakeGate>(['a', 'b', 'c', 'd']);
    t.same(nextStep(state), { kind: 'merge', task: 'a' });
    for (let i = 0; i < 4; i++) state = afterMerge(state, true);
    t.same(nextStep(state), { kind: 'gate', prefix: 4, tasks: ['a', 'b', 'c', 'd'] });
    state = afterGate(state, 4, { ok: false, run: 1 });
    t.same(nextStep(state), { kind: 'gate', prefix: 2, tasks: ['a', 'b'] });
    state = afterGate(state, 2, { ok: true, run: 2 });
    t.same(nextStep(state), { kind: 'gate', prefix: 3, tasks: ['a', 'b', 'c'] });
    state = afterGate(state, 3, { ok: false, run: 3 });
    t.same(nextStep(state), { kind: 'land', tasks: ['a', 'b'] });
    state = afterLand(state, 2);
    t.same(
      nextStep(state),
      { kind: 'culprit', task: 'c', gate: { ok: false, run: 3 } },
      'the gate output of the run that found it',
    );
    state = afterCulprit(state);
    t.same(nextStep(state), { kind: 'merge', task: 'd' }, 'the task after the culprit merges again');
    state = afterMerge(state, true);
    t.same(nextStep(state), { kind: 'gate', prefix: 1, tasks: ['d'] });
    state = afterGate(state, 1, { ok: true, run: 4 });
    t.same(nextStep(state), { kind: 'land', tasks: ['d'] });
    state = afterLand(state, 1);
    t.same(nextStep(state), { kind: 'done' });
    t.equal(state.gateRuns, 4);
    t.throws(() => afterMerge(state, true), /nothing was to merge/);
  },
);
