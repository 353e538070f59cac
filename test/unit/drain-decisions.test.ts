// The pure deciders of a drain: what a session meant, what to start next,
// the prompt, landings read back from merge commits, attempts.
import t from 'tap';
import { judgeSession } from '../../src/agent/run-task.js';
import { blockedReason } from '../../src/board/parking.js';
import { drainLoop, tasksToStart } from '../../src/drain/schedule.js';
import { labelCheckFor } from '../../src/repo/escalation.js';
import { Mutex } from '../../src/drain/mutex.js';
import { boardReader } from '../../src/drain/staging-board/reader.js';
import { buildPrompt, taskDirective } from '../../src/agent/prompt.js';
import { parseLandings } from '../../src/staging/lifecycle.js';
import { landingMessage } from '../../src/drain/integrate/branch.js';
import { forget, recordConflictRetry, recordFailure } from '../../src/drain/attempts.js';
import { judgeCandidate, protectedPathsIn } from '../../src/drain/integrate/protected-paths.js';
import { gateSpecFrom } from '../../src/drain/integrate/trusted-config.js';
import { DEFAULT_CONFIG } from '../../src/repo/config.js';
import { aBoard, aTask } from '../helpers/board-builder.js';

const state = (status: string | undefined, head = 'a', unreadable?: string) => ({
  head,
  dirty: false,
  status,
  task: status ? aTask({ id: 'TASK-1', status, notes: 'Blocked: needs a key' }) : undefined,
  unreadable,
});

t.test('judgeSession', async (t) => {
  const ok = { ok: true };
  t.same(judgeSession(state('To Do'), state('Done', 'b'), ok), { kind: 'done' });
  t.same(judgeSession(state('To Do'), state('Blocked', 'b'), ok), { kind: 'blocked', reason: 'needs a key' });
  t.same(judgeSession(state('To Do'), state('To Do'), ok), {
    kind: 'stalled',
    reason: 'stalled: the session changed nothing (no commit, no task status change)',
  });
  t.equal(judgeSession(state('To Do'), state('In Progress', 'b'), ok), undefined, 'progress without Done: go on');
  t.same(
    judgeSession(state('To Do'), state('To Do', 'b'), { ok: false, failure: 'not-logged-in', detail: 'Not logged in' }),
    { kind: 'agent-failed', reason: 'not-logged-in: Not logged in' },
  );
  t.same(judgeSession(state('To Do'), state(undefined, 'b', 'x.md: bad YAML'), ok), {
    kind: 'unreadable',
    reason: 'task status unreadable after the session: x.md: bad YAML',
  });
  t.equal(
    judgeSession(state('To Do'), state('Done', 'b'), { ok: false, failure: 'crashed' })?.kind,
    'done',
    'the board decides: Done is Done even if the agent then crashed',
  );
});

t.test('blockedReason skips our own park notes', async (t) => {
  t.equal(
    blockedReason(aTask({ id: 'TASK-1', notes: 'needs a key\nParked: gate failed (branch auto/TASK-1)' })),
    'needs a key',
  );
  t.equal(blockedReason(aTask({ id: 'TASK-1', notes: '' })), 'the agent gave no reason');
});

t.test('tasksToStart: slots, leases, exclusions, --task, labels', async (t) => {
  const labels = labelCheckFor('claude');
  const a = aTask({ id: 'TASK-1', priority: 'high', labels: ['area:ui'] });
  const b = aTask({ id: 'TASK-2', priority: 'high', labels: ['area:ui'] });
  const c = aTask({ id: 'TASK-3', priority: 'medium' });
  const d = aTask({ id: 'TASK-4', priority: 'low' });
  const board = aBoard().withTask(a).withTask(b).withTask(c).withTask(d).build();
  const ids = (tasks: { id: string }[]) => tasks.map((task) => task.id);
  t.same(
    ids(tasksToStart({ board, active: [], busySlots: 0, slots: 3, excluded: new Set(), only: undefined, labels })),
    ['TASK-1', 'TASK-3', 'TASK-4'],
    'the area lease keeps TASK-2 out',
  );
  t.same(
    ids(tasksToStart({ board, active: [a], busySlots: 1, slots: 3, excluded: new Set(), only: undefined, labels })),
    ['TASK-3', 'TASK-4'],
    'TASK-2 waits while TASK-1 runs',
  );
  t.same(
    ids(tasksToStart({ board, active: [a, c], busySlots: 2, slots: 2, excluded: new Set(), only: undefined, labels })),
    [],
    'no free slot',
  );
  t.same(
    ids(
      tasksToStart({
        board,
        active: [],
        busySlots: 0,
        slots: 3,
        excluded: new Set(['TASK-1', 'TASK-3']),
        only: undefined,
        labels,
      }),
    ),
    ['TASK-2', 'TASK-4'],
  );
  t.same(
    ids(tasksToStart({ board, active: [a, c], busySlots: 0, slots: 2, excluded: new Set(), only: undefined, labels })),
    ['TASK-4'],
    'tasks waiting for the integrator free their slot but keep their lease',
  );
  t.same(
    ids(tasksToStart({ board, active: [], busySlots: 0, slots: 3, excluded: new Set(), only: 'task-4', labels })),
    ['TASK-4'],
    '--task matches case-insensitively',
  );
  const bad = aBoard()
    .withTask(aTask({ id: 'TASK-5', priority: 'high', labels: ['effort:; touch /tmp/x'] }))
    .withTask(aTask({ id: 'TASK-6', labels: ['model:--dangerously-skip-permissions'] }))
    .withTask(c)
    .build();
  t.same(
    ids(tasksToStart({ board: bad, active: [], busySlots: 0, slots: 3, excluded: new Set(), only: undefined, labels })),
    ['TASK-3'],
    'a task whose labels the assistant cannot take never starts',
  );
  t.same(
    ids(tasksToStart({ board: bad, active: [], busySlots: 0, slots: 3, excluded: new Set(), only: 'TASK-5', labels })),
    [],
    'not with --task either',
  );
  const anyLabel = () => [];
  t.same(
    ids(
      tasksToStart({
        board: bad,
        active: [],
        busySlots: 0,
        slots: 3,
        excluded: new Set(),
        only: undefined,
        labels: anyLabel,
      }),
    ),
    ['TASK-5', 'TASK-3', 'TASK-6'],
    'control: it is the label check that keeps them out',
  );
});

t.test('prompt: base, directive, retry reason', async (t) => {
  const task = { id: 'TASK-3', title: 'Fix it', file: 'backlog/tasks/task-3 - Fix-it.md' };
  t.equal(taskDirective(task), 'Your task: TASK-3 "Fix it" (file backlog/tasks/task-3 - Fix-it.md)');
  const custom = buildPrompt({ basePrompt: 'Be brief.\n', task });
  t.equal(
    custom,
    'Be brief.\n\nYour task: TASK-3 "Fix it" (file backlog/tasks/task-3 - Fix-it.md)\nWork only on TASK-3; other tasks belong to other agents.\n',
  );
  const builtIn = buildPrompt({ basePrompt: '   ', task, retryReason: 'merge conflict in a.txt' });
  t.match(builtIn, /Set the status to "Done"/);
  t.match(builtIn, /This is a retry\. The previous attempt could not be integrated: merge conflict in a\.txt/);
});

t.test('landings round-trip through the merge message', async (t) => {
  const message = landingMessage(
    { task: { id: 'TASK-7', title: 'Add x' }, branch: 'auto/TASK-7', runId: 'R1', gatesScript: '.agent/gates.sh' },
    { ok: true, detail: '', tail: '', durationMs: 1234 },
  );
  const [subject, ...rest] = message.split('\n');
  const log = `abc123\x1f${subject}\x1f${rest.join('\n')}\x1e\nnot-ours\x1fMerge main\x1f\x1e`;
  t.same(parseLandings(log), [
    {
      taskId: 'TASK-7',
      commit: 'abc123',
      subject: 'Land TASK-7: Add x',
      gate: 'passed (.agent/gates.sh, 1.2s)',
      runId: 'R1',
    },
  ]);
});

t.test('attempts', async (t) => {
  let attempts = recordFailure({}, 'TASK-1', 'crashed');
  attempts = recordFailure(attempts, 'TASK-1', 'stalled');
  t.same(attempts['TASK-1'], { failures: 2, lastReason: 'stalled', conflictRetried: false });
  attempts = recordConflictRetry(attempts, 'TASK-2', 'conflict');
  t.same(attempts['TASK-2'], { failures: 0, lastReason: 'conflict', conflictRetried: true });
  t.same(Object.keys(forget(attempts, 'TASK-1')), ['TASK-2']);
});

t.test('drainLoop: a slot frees when the agent ends, before the integrator is done', async (t) => {
  const tasks = ['TASK-1', 'TASK-2', 'TASK-3'].map((id) => aTask({ id }));
  const board = aBoard().withTask(tasks[0]!).withTask(tasks[1]!).withTask(tasks[2]!).build();
  const started: string[] = [];
  const finishIntegration: (() => void)[] = [];
  const done = new Set<string>();
  const loop = drainLoop(
    {
      readBoard: async () => board,
      runTask: async (task, releaseSlot) => {
        started.push(task.id);
        releaseSlot(); // the agent ended at once
        await new Promise<void>((resolve) => finishIntegration.push(resolve)); // the integrator is slow
        done.add(task.id);
      },
      stopping: () => false,
      excluded: () => done,
    },
    1,
    undefined,
    labelCheckFor('claude'),
  );
  await new Promise((resolve) => setTimeout(resolve, 20));
  t.same(started, ['TASK-1', 'TASK-2', 'TASK-3'], 'one slot served all three agents while none had landed');
  for (const finish of finishIntegration) finish();
  await loop;
  t.same([...done].sort(), ['TASK-1', 'TASK-2', 'TASK-3']);
});

t.test('the integrator mutex counts its ended runs, failed ones too', async (t) => {
  const mutex = new Mutex();
  t.equal(mutex.ended, 0);
  let release: () => void = () => undefined;
  const first = mutex.run(() => new Promise<void>((resolve) => (release = resolve)));
  await Promise.resolve();
  t.equal(mutex.ended, 0, 'a run still going is not counted');
  release();
  await first;
  t.equal(mutex.ended, 1);
  await t.rejects(
    mutex.run(async () => {
      throw new Error('merge failed');
    }),
  );
  await t.rejects(
    mutex.run(() => {
      throw new Error('thrown before any promise');
    }),
  );
  t.equal(mutex.ended, 3, 'a run that failed has ended too');
  t.equal(await mutex.run(async () => 'next'), 'next', 'and the mutex goes on after failures');
});

t.test('boardReader: the staging board is read again only after an integrator run ended', async (t) => {
  let version = 0;
  let reads = 0;
  let duringRead: () => void = () => undefined;
  const boards = [
    aBoard().build(),
    aBoard()
      .withTask(aTask({ id: 'TASK-1' }))
      .build(),
    aBoard()
      .withTask(aTask({ id: 'TASK-2' }))
      .build(),
  ];
  const read = boardReader(
    async () => {
      const board = boards[Math.min(reads++, boards.length - 1)]!;
      duringRead();
      return board;
    },
    () => version,
  );
  t.equal(await read(), boards[0]);
  t.equal(await read(), boards[0], 'a slot freed with nothing integrated: the same board, not read again');
  t.equal(reads, 1);
  version++;
  duringRead = () => version++; // an integrator run ends while the board is being read
  t.equal(await read(), boards[1], 'read again once the integrator ran');
  duringRead = () => undefined;
  t.equal(await read(), boards[2], 'a run that ended during the read makes the next call read again');
  t.equal(await read(), boards[2]);
  t.equal(reads, 3);
});

t.test('judgeCandidate: a task that touches .agent/ or the gates script is parked, never merged', async (t) => {
  t.same(judgeCandidate(['src/a.ts', 'README.md'], '.agent/gates.sh'), { kind: 'integrate' });
  t.same(judgeCandidate([], '.agent/gates.sh'), { kind: 'integrate' }, 'an empty diff integrates');
  const gate = judgeCandidate(['src/a.ts', '.agent/gates.sh'], '.agent/gates.sh');
  t.equal(gate.kind, 'park');
  t.same(gate.kind === 'park' && gate.paths, ['.agent/gates.sh']);
  t.equal(
    gate.kind === 'park' && gate.reason,
    "changes .agent/ or the gates script (.agent/gates.sh): a task may not change the runner's config or the gate that judges it; a human must review the branch and merge it by hand",
  );
  t.equal(judgeCandidate(['.agent/config.json'], '.agent/gates.sh').kind, 'park', 'the config alone parks too');
  t.equal(judgeCandidate(['.agent/prompt.md'], undefined).kind, 'park', 'anything under .agent/, gates or not');
  t.equal(
    judgeCandidate(['.agent'], '.agent/gates.sh').kind,
    'park',
    '.agent itself (a file or a link in place of the folder)',
  );
  t.same(
    protectedPathsIn(['.agentx/a', '.agents', 'x/.agent/y', 'agent/gates.sh'], '.agent/gates.sh'),
    [],
    'only .agent at the root, by whole path component',
  );
  t.same(
    protectedPathsIn(['ci/gate.sh', 'ci/gate.sh.bak', 'ci/other.sh'], './ci/gate.sh'),
    ['ci/gate.sh'],
    'a gates script outside .agent/ is protected too',
  );
  const many = judgeCandidate(
    ['.agent/1', '.agent/2', '.agent/3', '.agent/4', '.agent/5', '.agent/6', '.agent/7'],
    undefined,
  );
  t.match(
    many.kind === 'park' && many.reason,
    /\(\.agent\/1, \.agent\/2, \.agent\/3, \.agent\/4, \.agent\/5 and 2 more\)/,
  );
});

t.test('gateSpecFrom: the gates path and timeout come from the config it is given', async (t) => {
  t.same(gateSpecFrom({ ...DEFAULT_CONFIG, gates: 'ci/gate.sh', agentWallClockSec: 60 }, { A: '1' }), {
    script: 'ci/gate.sh',
    env: { A: '1' },
    timeoutMs: 60_000,
  });
});
