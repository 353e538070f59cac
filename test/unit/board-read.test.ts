import t from 'tap';
import { writeFileSync, mkdirSync, readFileSync, statSync, symlinkSync } from 'node:fs';
import * as path from 'node:path';
import { realFs } from '../../src/io/real-ports.js';
import type { FsPort } from '../../src/ports.js';
import { findTask, readBoard, statusesFrom } from '../../src/board/read.js';
import { DEFAULT_STATUSES } from '../../src/board/status.js';
import { ensureBlockedStatusFile, updateTaskFile } from '../../src/board/write.js';
import { addLabel, setStatus } from '../../src/board/edit.js';
import { UsageError, FailedError } from '../../src/errors.js';
import { tempDir, writeFiles } from '../helpers/temp.js';
import { taskFileText } from '../helpers/board-builder.js';

const created = '2026-11-29 14:35';

/** realFs that records which files were read in full. */
function spyFs(): { fs: FsPort; read: string[] } {
  const read: string[] = [];
  return {
    read,
    fs: {
      ...realFs,
      readText: (file) => {
        read.push(path.basename(file));
        return realFs.readText(file);
      },
    },
  };
}

t.test('reads every task file, reports duplicates and unreadables, never throws for them', async (t) => {
  const dir = tempDir(t);
  writeFiles(dir, {
    'backlog/config.yml': 'project_name: "X"\nstatuses: ["To Do", "Doing", "Blocked", "Done"]\n',
    'backlog/tasks/task-1 - One.md': taskFileText({ id: 'TASK-1', title: 'One', createdDate: created, status: 'Done' }),
    'backlog/tasks/task-2 - Two.md': taskFileText({
      id: 'TASK-2',
      title: 'Two',
      createdDate: created,
      dependencies: ['TASK-1'],
    }),
    'backlog/tasks/task-3 - Three.md': taskFileText({ id: 'TASK-3', title: 'Three', createdDate: created }),
    'backlog/tasks/task-3 - Copy.md': taskFileText({ id: 'task-3', title: 'Copy', createdDate: created }),
    'backlog/tasks/task-evil.md': "---\nid: '../../x'\nstatus: To Do\n---\n",
    'backlog/tasks/notes.txt': 'not a task',
    'backlog/tasks/.hidden.md': 'editor swap',
    // Not `task-*.md`: the CLI does not list it, so it is neither a task nor an unreadable one.
    'backlog/tasks/readme.md': '# How we file tasks',
  });
  mkdirSync(path.join(dir, 'backlog/tasks/task-sub.md'));
  symlinkSync('/dev/zero', path.join(dir, 'backlog/tasks/task-zero.md'));
  // 5 MiB: over the cap, so it must not be read at all.
  writeFileSync(
    path.join(dir, 'backlog/tasks/task-huge.md'),
    `---\nid: TASK-9\nstatus: To Do\n---\n${'x'.repeat(5 * 1024 * 1024)}`,
  );
  const hugeSize = statSync(path.join(dir, 'backlog/tasks/task-huge.md')).size;
  t.ok(hugeSize > 5 * 1024 * 1024, 'the huge file is over 5 MiB');
  const { fs, read } = spyFs();
  const board = await readBoard(fs, dir);
  t.same(
    board.tasks.map((task) => [task.id, task.file]),
    [
      ['TASK-1', 'backlog/tasks/task-1 - One.md'],
      ['TASK-2', 'backlog/tasks/task-2 - Two.md'],
    ],
  );
  t.same(board.unreadable, [
    {
      file: 'backlog/tasks/task-3 - Copy.md',
      id: 'TASK-3',
      reason: 'duplicate id TASK-3 also in backlog/tasks/task-3 - Three.md',
    },
    {
      file: 'backlog/tasks/task-3 - Three.md',
      id: 'TASK-3',
      reason: 'duplicate id TASK-3 also in backlog/tasks/task-3 - Copy.md',
    },
    {
      file: 'backlog/tasks/task-evil.md',
      reason: 'id "../../x" is not a safe task id (expected a prefix, a dash and a number, like TASK-12)',
    },
    {
      file: 'backlog/tasks/task-huge.md',
      reason: `the file is ${hugeSize} bytes, over the 1048576-byte (1 MiB) limit for a task file`,
    },
    { file: 'backlog/tasks/task-sub.md', reason: 'a directory, not a task file' },
    { file: 'backlog/tasks/task-zero.md', reason: 'not a regular file' },
  ]);
  t.same(board.statuses, ['To Do', 'Doing', 'Blocked', 'Done']);
  t.same(
    read.filter((name) => name === 'task-huge.md' || name === 'task-zero.md'),
    [],
    'the oversized file and the device were never read',
  );
  t.equal(findTask(board, 'task-2')?.title, 'Two');
  t.equal(findTask(board, 'TASK-3'), undefined);
});

t.test('a workspace without a board is the one error', async (t) => {
  const dir = tempDir(t);
  await t.rejects(
    readBoard(realFs, dir),
    new UsageError(
      `workspace ${dir} has no Backlog.md board (no backlog/ or .backlog/ directory, and no backlog.config.yml naming one); run \`backlog init\` there`,
    ),
  );
});

t.test('an empty backlog/ and config fallbacks', async (t) => {
  const dir = tempDir(t);
  mkdirSync(path.join(dir, 'backlog'));
  t.same(await readBoard(realFs, dir), { tasks: [], unreadable: [], statuses: DEFAULT_STATUSES });
  t.same(statusesFrom('statuses: [unclosed'), DEFAULT_STATUSES);
  t.same(statusesFrom('statuses: 3'), DEFAULT_STATUSES);
  t.same(statusesFrom('statuses:\n  - Open\n  - Closed\n'), ['Open', 'Closed']);
});

t.test('updateTaskFile edits in place, atomically, and only when changed', async (t) => {
  const dir = tempDir(t);
  const file = 'backlog/tasks/task-1 - One.md';
  writeFiles(dir, { [file]: taskFileText({ id: 'TASK-1', title: 'One', createdDate: created }) });
  const task = { id: 'TASK-1', file };
  t.equal(await updateTaskFile(realFs, dir, task, (text) => addLabel(setStatus(text, 'Done'), 'parked')), true);
  t.equal(
    readFileSync(path.join(dir, file), 'utf8'),
    taskFileText({ id: 'TASK-1', title: 'One', createdDate: created, status: 'Done', labels: ['parked'] }),
  );
  t.equal(await updateTaskFile(realFs, dir, task, (text) => setStatus(text, 'Done')), false);
  await t.rejects(
    updateTaskFile(realFs, dir, task, () => {
      throw new Error('no acceptance criterion #4');
    }),
    new FailedError(`${file}: cannot edit TASK-1: no acceptance criterion #4`),
  );
  await t.rejects(
    updateTaskFile(realFs, dir, { id: 'TASK-7', file: 'backlog/tasks/gone.md' }, (text) => text),
    new FailedError('backlog/tasks/gone.md: the file of TASK-7 is gone; read the board again'),
  );
});

t.test('ensureBlockedStatusFile', async (t) => {
  const dir = tempDir(t);
  writeFiles(dir, { 'backlog/config.yml': 'statuses: ["To Do", "In Progress", "Done"]\n' });
  t.equal(await ensureBlockedStatusFile(realFs, dir), 'backlog/config.yml');
  t.equal(
    readFileSync(path.join(dir, 'backlog/config.yml'), 'utf8'),
    'statuses: ["To Do", "In Progress", "Blocked", "Done"]\n',
  );
  t.equal(await ensureBlockedStatusFile(realFs, dir), undefined);
});
