// The watcher's read of a board straight from git objects follows the same
// rules as a drain's read of the files: a duplicated id is unreadable, not ready.
import t from 'tap';
import { BoardSnapshot } from '../../src/control/repo-view/board.js';
import { realProcess } from '../../src/io/real-ports.js';
import { writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { git, gitRepo } from '../helpers/temp.js';
import { taskFiles } from '../helpers/drain-fixture.js';

t.test('a duplicated id is unreadable in the snapshot too', async (t) => {
  const files = taskFiles([
    { id: 'TASK-1', title: 'One' },
    { id: 'TASK-2', title: 'Two' },
  ]);
  const repo = gitRepo(t, {
    ...files,
    'backlog/tasks/task-2 - Copy.md': Object.values(files)[1]!,
    'backlog/config.yml': 'statuses: ["To Do", "Done"]\n',
  });
  const summary = await new BoardSnapshot(realProcess, repo, 'main').summary();
  t.same(summary.ready, ['TASK-1']);
  t.equal(summary.unreadable, 2);
  t.equal(summary.total, 3);
  t.same(summary.refs, ['main']);
});

t.test(
  'a first read takes two git processes, config and task names beyond ASCII included; later ones a --batch-check, and only what changed',
  async (t) => {
    const files = taskFiles([{ id: 'TASK-1', title: 'One' }]);
    const repo = gitRepo(t, {
      ...files,
      'backlog/tasks/task-2 - Café déjà vu.md': '---\nid: TASK-2\ntitle: Café déjà vu\nstatus: To Do\n---\n',
      'backlog/completed/task-3 - Done.md': '---\nid: TASK-3\ntitle: Done\nstatus: Done\n---\n',
      'backlog/config.yml': 'statuses: ["To Do", "In Progress", "Done"]\n',
    });
    let calls: string[] = [];
    const counting = {
      ...realProcess,
      run: (command: Parameters<typeof realProcess.run>[0]) => (
        calls.push(
          command.args.filter((arg) => !arg.includes('=') && arg !== '-c' && !/^[0-9a-f]{40}$/.test(arg)).join(' '),
        ),
        realProcess.run(command)
      ),
    };
    const snapshot = new BoardSnapshot(counting, repo, 'main');
    const summary = await snapshot.summary();
    t.same(summary.ready, ['TASK-1', 'TASK-2'], 'the task whose file name is not ASCII is on the board');
    t.equal(summary.total, 2);
    t.same(
      calls,
      ['cat-file --batch-command', 'cat-file --batch'],
      'objects, config and listings in one process; the task files in one more',
    );
    calls = [];
    await snapshot.summary();
    t.same(calls, ['cat-file --batch-check'], 'unchanged: ids only, whatever the size of the files');

    // auto/work and main with different boards: both boards' new files in the same one more process.
    git(repo, 'checkout', '-q', '-b', 'auto/work');
    writeFileSync(
      path.join(repo, 'backlog', 'tasks', 'task-4 - Four.md'),
      '---\nid: TASK-4\ntitle: Four\nstatus: To Do\n---\n',
    );
    git(repo, 'add', '-A');
    git(repo, 'commit', '-q', '-m', 'four on staging');
    git(repo, 'checkout', '-q', 'main');
    writeFileSync(
      path.join(repo, 'backlog', 'tasks', 'task-5 - Five.md'),
      '---\nid: TASK-5\ntitle: Five\nstatus: To Do\n---\n',
    );
    git(repo, 'add', '-A');
    git(repo, 'commit', '-q', '-m', 'five on main');
    calls = [];
    const both = await new BoardSnapshot(counting, repo, 'main').summary();
    t.same(both.ready, ['TASK-1', 'TASK-2', 'TASK-4', 'TASK-5'], 'staging plus what main filed since');
    t.same(both.refs, ['auto/work', 'main']);
    t.same(calls, ['cat-file --batch-command', 'cat-file --batch'], 'a first read: two processes for two boards');
    calls = [];
    const later = await snapshot.summary();
    t.same(later, both, 'the older snapshot sees the same');
    t.same(
      calls,
      ['cat-file --batch-check', 'ls-tree -z', 'ls-tree -z', 'ls-tree -z', 'cat-file --batch'],
      'a later read: each changed folder listed once (two tasks/, one completed/), the new files read',
    );
  },
);

t.test(
  'git without --batch-command (before 2.36): the first read is made as later ones are, with the same board',
  async (t) => {
    const repo = gitRepo(t, {
      ...taskFiles([{ id: 'TASK-1', title: 'One' }]),
      'backlog/config.yml': 'statuses: ["To Do", "Done"]\n',
    });
    const calls: string[] = [];
    const oldGit = {
      ...realProcess,
      run: async (command: Parameters<typeof realProcess.run>[0]) => {
        calls.push(
          command.args.includes('--batch-command')
            ? 'batch-command'
            : (command.args.find((arg) => ['--batch-check', '--batch', 'ls-tree'].includes(arg)) ?? '?'),
        );
        return command.args.includes('--batch-command')
          ? { exitCode: 129, signal: null, stdout: '', stderr: "error: unknown option `batch-command'" }
          : realProcess.run(command);
      },
    };
    const summary = await new BoardSnapshot(oldGit, repo, 'main').summary();
    t.same(summary.ready, ['TASK-1']);
    t.same(summary.refs, ['main']);
    t.same(
      calls,
      ['batch-command', '--batch-check', '--batch', 'ls-tree', '--batch'],
      'refused, then check, config, listing, files',
    );
  },
);
