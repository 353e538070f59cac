// The watcher's read of a board straight from git objects follows the same
// rules as a drain's read of the files: a duplicated id is unreadable, not ready.
import t from 'tap';
import { BoardSnapshot } from '../../src/control/board-snapshot.js';
import { realProcess } from '../../src/io/real-ports.js';
import { gitRepo } from '../helpers/temp.js';
import { taskFiles } from '../helpers/drain-fixture.js';

t.test('a duplicated id is unreadable in the snapshot too', async (t) => {
  const files = taskFiles([
    { id: 'TASK-1', title: 'One' },
    { id: 'TASK-2', title: 'Two' },
  ]);
  const repo = gitRepo(t, { ...files, 'backlog/tasks/task-2 - Copy.md': Object.values(files)[1]!, 'backlog/config.yml': 'statuses: ["To Do", "Done"]\n' });
  const summary = await new BoardSnapshot(realProcess, repo, 'main').summary();
  t.same(summary.ready, ['TASK-1']);
  t.equal(summary.unreadable, 2);
  t.equal(summary.total, 3);
  t.same(summary.refs, ['main']);
});
