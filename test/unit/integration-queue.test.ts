// The integration queue: the first finished task is integrated at once and
// alone; tasks finishing while the integrator is busy wait and form the next
// batch (at most maxBatch, in board id order); every task gets its own
// outcome; a failing batch fails each of its tasks.
import t from 'tap';
import { IntegrationQueue } from '../../src/drain/integrate/queue.js';
import { Mutex } from '../../src/drain/mutex.js';
import type { IntegrationOutcome } from '../../src/drain/verdict/after-integration.js';
import { aTask } from '../helpers/board-builder.js';
import { integration } from '../helpers/verdict-builders.js';

/** A queue whose integrations each wait until the test lets the one running go. */
function recordingQueue(maxBatch: number, fail = false) {
  const calls: string[][] = [];
  const waiting: (() => void)[] = [];
  const hold = () => new Promise<void>((resolve) => waiting.push(resolve));
  const queue = new IntegrationQueue(new Mutex(), maxBatch, {
    one: async (task) => {
      calls.push([task.id]);
      await hold();
      return integration.landed(`c-${task.id}`);
    },
    batch: async (tasks) => {
      calls.push(tasks.map((task) => task.id));
      await hold();
      if (fail) throw new Error('git broke');
      return new Map<string, IntegrationOutcome>(tasks.map((task) => [task.id, integration.landed(`c-${task.id}`)]));
    },
  });
  /** Lets the running integration finish, once one is running. */
  const next = async () => {
    while (!waiting.length) await tick();
    waiting.shift()!();
  };
  return { queue, calls, next };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

t.test('first alone, then the ones that came while it ran, at most maxBatch, in id order', async (t) => {
  const { queue, calls, next } = recordingQueue(3);
  const first = queue.integrate(aTask({ id: 'TASK-1' }));
  await tick();
  const results = [first, ...['TASK-9', 'TASK-4', 'TASK-2', 'TASK-7'].map((id) => queue.integrate(aTask({ id })))];
  for (let i = 0; i < 3; i++) await next();
  const outcomes = await Promise.all(results);
  t.same(calls, [['TASK-1'], ['TASK-2', 'TASK-4', 'TASK-9'], ['TASK-7']]);
  t.same(
    outcomes.map((outcome) => (outcome.kind === 'landed' ? outcome.commit : outcome.kind)),
    ['c-TASK-1', 'c-TASK-9', 'c-TASK-4', 'c-TASK-2', 'c-TASK-7'],
    'each task gets its own outcome',
  );
});

t.test('maxBatch 1: one at a time, in arrival order', async (t) => {
  const { queue, calls, next } = recordingQueue(1);
  const results = ['TASK-3', 'TASK-1', 'TASK-2'].map((id) => queue.integrate(aTask({ id })));
  for (let i = 0; i < 3; i++) await next();
  await Promise.all(results);
  t.same(calls, [['TASK-3'], ['TASK-1'], ['TASK-2']]);
});

t.test('a batch that throws fails each of its tasks, and the queue goes on', async (t) => {
  const { queue, calls, next } = recordingQueue(4, true);
  const first = queue.integrate(aTask({ id: 'TASK-1' }));
  await tick();
  const rest = ['TASK-2', 'TASK-3'].map((id) =>
    queue.integrate(aTask({ id })).then(
      () => 'landed',
      (error: Error) => error.message,
    ),
  );
  await next();
  await next();
  t.equal((await first).kind, 'landed');
  t.same(await Promise.all(rest), ['git broke', 'git broke']);
  const after = queue.integrate(aTask({ id: 'TASK-4' }));
  await next();
  t.equal((await after).kind, 'landed');
  t.same(calls, [['TASK-1'], ['TASK-2', 'TASK-3'], ['TASK-4']]);
});
