// A task file's parse is remembered for its exact text: the same text gives
// the same result without parsing again, any change is parsed afresh.
import t from 'tap';
import { parseTaskFileRemembered } from '../../src/board/parse-memo.js';
import { parseTaskFile } from '../../src/board/parse.js';
import { taskFileText } from '../helpers/board-builder.js';

const text = (status: string, description = 'Do it.') =>
  taskFileText({ id: 'TASK-1', title: 'One', status, description, createdDate: '2026-11-29 10:00' });
const file = 'backlog/tasks/task-1 - One.md';

t.test('the same text gives the remembered result; a changed byte is parsed again', async (t) => {
  const first = parseTaskFileRemembered(file, text('To Do'));
  t.same(first, parseTaskFile(file, text('To Do')), 'what parseTaskFile says');
  t.equal(parseTaskFileRemembered(file, text('To Do')), first, 'the same text: the same result, not parsed again');
  const done = parseTaskFileRemembered(file, text('Done'));
  t.not(done, first);
  t.match(done, { id: 'TASK-1', status: 'Done' }, 'a changed status is read');
  t.match(
    parseTaskFileRemembered(file, text('To Do')),
    { status: 'To Do' },
    'and the old text still gives the old status',
  );
  const elsewhere = parseTaskFileRemembered('backlog/tasks/task-1 - Moved.md', text('To Do'));
  t.match(elsewhere, { file: 'backlog/tasks/task-1 - Moved.md' }, 'the same text in another file names that file');
  t.match(
    parseTaskFileRemembered(file, 'no frontmatter'),
    { file, reason: /no frontmatter/ },
    'an unreadable file is remembered as unreadable',
  );
});

t.test('a big text is parsed every time, not kept', async (t) => {
  const big = text('To Do', 'x'.repeat(100 * 1024));
  const first = parseTaskFileRemembered(file, big);
  t.match(first, { status: 'To Do' });
  t.not(parseTaskFileRemembered(file, big), first, 'parsed again');
  t.same(parseTaskFileRemembered(file, big), first);
});

t.test('many texts: the oldest are forgotten, every answer stays right', async (t) => {
  for (let n = 0; n < 5000; n++) {
    const parsed = parseTaskFileRemembered(file, text('To Do', `Step ${n}.`));
    if (n % 1000 === 0) t.match(parsed, { description: `Step ${n}.` });
  }
  t.match(
    parseTaskFileRemembered(file, text('To Do', 'Step 0.')),
    { description: 'Step 0.' },
    'a forgotten text is parsed again',
  );
});
