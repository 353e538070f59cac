// The board against the real Backlog.md CLI (npm backlog.md): what the CLI
// writes we read exactly; what we write the CLI lists correctly; and our
// edits are byte-identical to the CLI's own edits of the same file.
import t from 'tap';
import { execFileSync } from 'node:child_process';
import { copyFileSync, readFileSync, readdirSync } from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { realFs } from '../../src/io/real-ports.js';
import { readBoard, findTask } from '../../src/board/read.js';
import { assessReadiness } from '../../src/board/readiness.js';
import { labelCheckFor } from '../../src/repo/escalation.js';
import { addLabel, appendNote, checkCriterion, setStatus, setUpdatedDate } from '../../src/board/edit.js';
import { ensureBlockedStatusFile, updateTaskFile } from '../../src/board/write.js';
import { parkNote } from '../../src/board/parking.js';
import type { Task } from '../../src/types.js';
import { gitRepo } from '../helpers/temp.js';
import { taskFileText } from '../helpers/board-builder.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const BACKLOG = path.join(root, 'node_modules', '.bin', 'backlog');

t.test('the board and the backlog CLI agree in both directions', async (t) => {
  const repo = gitRepo(t);
  // A clean environment: HOME in the temp repo, so the CLI writes no user config.
  const env = {
    PATH: `${path.dirname(process.execPath)}:/usr/local/bin:/usr/bin:/bin`,
    HOME: repo,
    TZ: 'UTC',
    NO_COLOR: '1',
  };
  const backlog = (...args: string[]) =>
    execFileSync(BACKLOG, args, { cwd: repo, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  const fileOf = (id: string) =>
    path.join(
      'backlog/tasks',
      readdirSync(path.join(repo, 'backlog/tasks')).find((name) => name.startsWith(`${id.toLowerCase()} - `))!,
    );
  const textOf = (id: string) => readFileSync(path.join(repo, fileOf(id)), 'utf8');
  const dateOf = (text: string, key: string) =>
    /^\w+_date: '([^']+)'$/m.exec(
      text
        .split('\n')
        .filter((line) => line.startsWith(`${key}:`))
        .join('\n'),
    )?.[1] ?? '';

  backlog('init', 'X', '--defaults', '--integration-mode', 'none');
  backlog('task', 'create', 'First task', '--plain');
  backlog(
    'task',
    'create',
    'Second: task',
    '-d',
    'Line one\nLine two',
    '-l',
    'area:api,model:opus',
    '--priority',
    'high',
    '--ac',
    'Crit one',
    '--ac',
    'Crit two',
    '--dep',
    'task-1',
    '-a',
    'alice',
    '--plain',
  );
  backlog('task', 'create', 'Third', '-l', 'area:db,yes', '--priority', 'low', '--ac', 'Only one', '--plain');

  // What the CLI wrote, we read exactly.
  const board = await readBoard(realFs, repo);
  const expected: Task[] = [
    {
      id: 'TASK-1',
      title: 'First task',
      status: 'To Do',
      labels: [],
      dependencies: [],
      priority: undefined,
      ordinal: 1000,
      assignee: [],
      description: '',
      acceptanceCriteria: [],
      notes: '',
      file: 'backlog/tasks/task-1 - First-task.md',
    },
    {
      id: 'TASK-2',
      title: 'Second: task',
      status: 'To Do',
      labels: ['area:api', 'model:opus'],
      dependencies: ['TASK-1'],
      priority: 'high',
      ordinal: 2000,
      assignee: ['alice'],
      description: 'Line one\nLine two',
      acceptanceCriteria: [
        { index: 1, text: 'Crit one', checked: false },
        { index: 2, text: 'Crit two', checked: false },
      ],
      notes: '',
      file: 'backlog/tasks/task-2 - Second-task.md',
    },
    {
      id: 'TASK-3',
      title: 'Third',
      status: 'To Do',
      labels: ['area:db', 'yes'],
      dependencies: [],
      priority: 'low',
      ordinal: 3000,
      assignee: [],
      description: '',
      acceptanceCriteria: [{ index: 1, text: 'Only one', checked: false }],
      notes: '',
      file: 'backlog/tasks/task-3 - Third.md',
    },
  ];
  t.same(board, { tasks: expected, unreadable: [], statuses: ['To Do', 'In Progress', 'Done'] });
  t.same(
    assessReadiness(board, labelCheckFor('claude')).ready.map((task) => task.id),
    ['TASK-3', 'TASK-1'],
    'TASK-2 waits for TASK-1; low priority before none',
  );

  // The builder renders the CLI's bytes.
  for (const task of expected) {
    const text = textOf(task.id);
    const rendered = taskFileText({
      id: task.id,
      title: task.title,
      assignee: task.assignee,
      createdDate: dateOf(text, 'created_date'),
      labels: task.labels,
      dependencies: task.dependencies,
      ...(task.priority ? { priority: task.priority } : {}),
      ordinal: task.ordinal!,
      description: task.description,
      acceptanceCriteria: task.acceptanceCriteria.map((criterion) => criterion.text),
    });
    t.equal(rendered, text, `taskFileText matches the CLI's ${task.id} byte for byte`);
  }

  // Blocked must be a configured status before the CLI accepts it.
  t.throws(
    () => backlog('task', 'edit', 'task-3', '-s', 'Blocked'),
    'the CLI refuses Blocked before ensureBlockedStatus',
  );
  t.equal(await ensureBlockedStatusFile(realFs, repo), 'backlog/config.yml');

  // The same edit by the CLI and by us gives the same bytes.
  const third = findTask(board, 'TASK-3')!;
  const before = textOf('TASK-3');
  copyFileSync(path.join(repo, third.file), path.join(repo, 'before-task-3.md'));
  const note = parkNote('gate red twice', 'auto/TASK-3');
  backlog(
    'task',
    'edit',
    'task-3',
    '-s',
    'Blocked',
    '--add-label',
    'parked',
    '--append-notes',
    note,
    '--check-ac',
    '1',
  );
  const byCli = textOf('TASK-3');
  const ours = setUpdatedDate(
    appendNote(checkCriterion(addLabel(setStatus(before, 'Blocked'), 'parked'), 1), note),
    dateOf(byCli, 'updated_date'),
  );
  t.equal(ours, byCli, 'our edit of TASK-3 is byte-identical to the CLI edit');

  // Our writes, then the CLI reports them.
  const second = findTask(board, 'TASK-2')!;
  await updateTaskFile(realFs, repo, second, (text) =>
    appendNote(checkCriterion(addLabel(text, 'parked'), 2), 'Parked: merge conflict (branch auto/TASK-2)'),
  );
  await updateTaskFile(realFs, repo, findTask(board, 'TASK-1')!, (text) => setStatus(text, 'Done'));

  t.equal(
    backlog('task', 'list', '--plain'),
    'To Do:\n  [HIGH] TASK-2 - Second: task (ac: 1/2)\n\nBlocked:\n  [LOW] TASK-3 - Third (ac: 1/1)\n\nDone:\n  TASK-1 - First task\n\n',
  );
  const list = JSON.parse(backlog('task', 'list', '--json')) as {
    tasks: { id: string; status: string; labels: string[]; isReady: boolean; acceptanceCriteriaCompleted: number }[];
  };
  t.same(
    list.tasks
      .map((task) => [task.id, task.status, task.labels, task.isReady, task.acceptanceCriteriaCompleted])
      .sort(),
    [
      ['TASK-1', 'Done', [], false, 0],
      ['TASK-2', 'To Do', ['area:api', 'model:opus', 'parked'], true, 1],
      ['TASK-3', 'Blocked', ['area:db', 'yes', 'parked'], true, 1],
    ],
  );
  const view = JSON.parse(backlog('task', 'view', 'TASK-2', '--json')) as { task: Record<string, unknown> };
  t.same(view.task.acceptanceCriteria, [
    { index: 1, text: 'Crit one', checked: false },
    { index: 2, text: 'Crit two', checked: true },
  ]);
  t.equal(view.task.implementationNotes, 'Parked: merge conflict (branch auto/TASK-2)');
  t.same(view.task.readiness, { isReady: true, isBlocked: false, blockingDependencies: [], missingDependencies: [] });

  // And we read back what both wrote.
  const after = assessReadiness(await readBoard(realFs, repo), labelCheckFor('claude'));
  t.same(after.ready, []);
  t.same(
    after.notReady.map((entry) => [entry.id, entry.reasons]),
    [
      ['TASK-2', [{ kind: 'parked', note: 'merge conflict (branch auto/TASK-2)' }]],
      [
        'TASK-3',
        [
          { kind: 'status', status: 'Blocked' },
          { kind: 'parked', note: 'gate red twice (branch auto/TASK-3)' },
        ],
      ],
      ['TASK-1', [{ kind: 'done' }]],
    ],
  );
});
