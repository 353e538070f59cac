import t from 'tap';
import { assessReadiness, compareIds, describeReason } from '../../src/board/readiness.js';
import { aBoard, aTask } from '../helpers/board-builder.js';

const ids = (tasks: readonly { id: string }[]) => tasks.map((task) => task.id);

t.test('ready: To Do, every dependency Done, no needs-human, not parked', async (t) => {
  const board = aBoard()
    .withTask({ id: 'TASK-1', status: 'Done' })
    .withTask({ id: 'TASK-2', dependencies: ['TASK-1'] })
    .withTask({ id: 'TASK-3', status: 'In Progress' })
    .withTask({ id: 'TASK-4', dependencies: ['task-1', 'TASK-3'] })
    .withTask({ id: 'TASK-5', dependencies: ['TASK-9'] })
    .withTask({ id: 'TASK-6', labels: ['risk:needs-human'] })
    .withTask({
      id: 'TASK-7',
      labels: ['parked'],
      notes: 'tried\nParked: old reason (branch auto/TASK-7)\nParked: gate red twice (branch auto/TASK-7)\nmore',
    })
    .withTask({ id: 'TASK-8', labels: ['parked'] })
    .withTask({ id: 'TASK-10', status: 'Blocked', dependencies: ['TASK-11'], labels: ['risk:needs-human', 'parked'] })
    .withTask({ id: 'TASK-12', dependencies: ['TASK-13'] })
    .withUnreadable({ file: 'backlog/tasks/task-13 - X.md', id: 'TASK-13', reason: 'bad YAML in the frontmatter: x' })
    .withUnreadable({ file: 'backlog/tasks/junk.md', reason: 'no id in the frontmatter' })
    .build();
  const readiness = assessReadiness(board);
  t.same(ids(readiness.ready), ['TASK-2']);
  t.same(
    readiness.notReady.map((entry) => [entry.id, entry.reasons.map(describeReason)]),
    [
      ['TASK-1', ['Done']],
      ['TASK-3', ['status In Progress']],
      ['TASK-4', ['blocked by TASK-3 (In Progress)']],
      ['TASK-5', ['depends on TASK-9, which does not exist']],
      ['TASK-6', ['needs a human']],
      ['TASK-7', ['parked: gate red twice (branch auto/TASK-7)']],
      ['TASK-8', ['parked']],
      ['TASK-10', ['status Blocked', 'depends on TASK-11, which does not exist', 'needs a human', 'parked']],
      ['TASK-12', ['blocked by TASK-13 (unreadable)']],
      // unreadable files last, by file name
      ['', ['unreadable: no id in the frontmatter']],
      ['TASK-13', ['unreadable: bad YAML in the frontmatter: x']],
    ],
  );
  const unreadable = readiness.notReady.find((entry) => entry.file === 'backlog/tasks/junk.md');
  t.same(unreadable, {
    id: '',
    file: 'backlog/tasks/junk.md',
    title: '',
    reasons: [{ kind: 'unreadable', reason: 'no id in the frontmatter' }],
  });
});

t.test('order: priority, then ordinal, then the number in the id', async (t) => {
  const board = aBoard()
    .withTask({ id: 'TASK-10' })
    .withTask({ id: 'TASK-2' })
    .withTask({ id: 'TASK-3', priority: 'low' })
    .withTask({ id: 'TASK-4', priority: 'high', ordinal: 2000 })
    .withTask({ id: 'TASK-5', priority: 'high', ordinal: 1000 })
    .withTask({ id: 'TASK-6', priority: 'medium' })
    .withTask({ id: 'TASK-7', priority: 'high' })
    .withTask({ id: 'TASK-8', ordinal: 5 })
    .withTask({ id: 'TASK-2.1' })
    .build();
  t.same(ids(assessReadiness(board).ready), [
    'TASK-5',
    'TASK-4',
    'TASK-7',
    'TASK-6',
    'TASK-3',
    'TASK-8',
    'TASK-2',
    'TASK-2.1',
    'TASK-10',
  ]);
});

t.test('compareIds is numeric', async (t) => {
  t.same(['TASK-10', 'TASK-2', 'TASK-1.10', 'TASK-1.2', 'TASK-1'].sort(compareIds), [
    'TASK-1',
    'TASK-1.2',
    'TASK-1.10',
    'TASK-2',
    'TASK-10',
  ]);
});

t.test('describeReason gives the exact wording', async (t) => {
  t.equal(
    describeReason({ kind: 'blocked-by', dependency: 'TASK-3', dependencyStatus: 'In Progress' }),
    'blocked by TASK-3 (In Progress)',
  );
  t.equal(
    describeReason({ kind: 'missing-dependency', dependency: 'TASK-9' }),
    'depends on TASK-9, which does not exist',
  );
  t.equal(describeReason({ kind: 'needs-human' }), 'needs a human');
  t.equal(describeReason({ kind: 'parked', note: 'flaky (branch auto/TASK-3)' }), 'parked: flaky (branch auto/TASK-3)');
  t.equal(describeReason({ kind: 'parked', note: '' }), 'parked');
  t.equal(describeReason({ kind: 'done' }), 'Done');
  t.equal(describeReason({ kind: 'status', status: 'Blocked' }), 'status Blocked');
  t.equal(
    describeReason({ kind: 'unreadable', reason: 'no id in the frontmatter' }),
    'unreadable: no id in the frontmatter',
  );
});

t.test('an empty board has nothing ready and nothing not ready', async (t) => {
  t.same(assessReadiness(aBoard().build()), { ready: [], notReady: [] });
});

t.test('a ready task is returned as the same object', async (t) => {
  const board = aBoard()
    .withTask(aTask({ id: 'TASK-1' }))
    .build();
  t.equal(assessReadiness(board).ready[0], board.tasks[0]);
});

t.test('a task without a status is not ready, with that reason', async (t) => {
  const readiness = assessReadiness(aBoard().withTask({ id: 'TASK-1', status: '' }).build());
  t.same(readiness.ready, []);
  t.same(
    readiness.notReady.map((entry) => entry.reasons.map(describeReason)),
    [['no status (set one, e.g. status: To Do)']],
  );
});
