// placeBoard: where the board is, judged by what stands at each path the
// CLI would look at. A table over shape facts; the disk and git readers are
// tested against the real thing in test/integration/board-shapes.test.ts.
import t from 'tap';
import { misshapenProblem, placeBoard, type PathShape } from '../../src/board/location.js';

const facts = (shapes: Record<string, PathShape>, rootConfig?: string) => ({
  rootConfig,
  shapeOf: (relative: string) => shapes[relative],
});

t.test('what placeBoard decides', async (t) => {
  const cases: readonly [string, Record<string, PathShape>, string | undefined, unknown][] = [
    ['no board at all', {}, undefined, { kind: 'none' }],
    [
      'backlog/ with its config and tasks/',
      { backlog: 'folder', 'backlog/config.yml': 'file', 'backlog/tasks': 'folder' },
      undefined,
      { kind: 'found', location: { dir: 'backlog', configFile: 'backlog/config.yml', tasksDir: 'backlog/tasks' } },
    ],
    [
      'backlog/ without tasks/ yet: a board with no tasks',
      { backlog: 'folder' },
      undefined,
      { kind: 'found', location: { dir: 'backlog', configFile: undefined } },
    ],
    ...(['file', 'link', 'fifo', 'device', 'socket', 'submodule'] as const).map(
      (shape): [string, Record<string, PathShape>, string | undefined, unknown] => [
        `backlog is a ${shape}`,
        { backlog: shape },
        undefined,
        { kind: 'misshapen', path: 'backlog', shape, role: 'board' },
      ],
    ),
    ...(['file', 'link', 'fifo', 'device'] as const).map(
      (shape): [string, Record<string, PathShape>, string | undefined, unknown] => [
        `backlog/tasks is a ${shape}`,
        { backlog: 'folder', 'backlog/config.yml': 'file', 'backlog/tasks': shape },
        undefined,
        { kind: 'misshapen', path: 'backlog/tasks', shape, role: 'tasks' },
      ],
    ),
    [
      'backlog/completed is a file',
      { backlog: 'folder', 'backlog/tasks': 'folder', 'backlog/completed': 'file' },
      undefined,
      { kind: 'misshapen', path: 'backlog/completed', shape: 'file', role: 'completed' },
    ],
    [
      'a file named backlog beside a real .backlog/ with a config: the CLI takes .backlog too',
      { backlog: 'file', '.backlog': 'folder', '.backlog/config.yml': 'file' },
      undefined,
      { kind: 'found', location: { dir: '.backlog' } },
    ],
    [
      'a link at backlog beside a real .backlog/: the CLI may take the link (what is below it is not looked at)',
      { backlog: 'link', '.backlog': 'folder', '.backlog/config.yml': 'file' },
      undefined,
      { kind: 'misshapen', path: 'backlog', shape: 'link', role: 'board' },
    ],
    [
      'the folder a root config names is a file',
      { board: 'file', backlog: 'folder' },
      'project_name: x\nbacklog_directory: board\n',
      { kind: 'misshapen', path: 'board', shape: 'file', role: 'board' },
    ],
    [
      'the folder a root config names lies below a link',
      { 'docs/board': 'below-non-folder' },
      'project_name: x\nbacklog_directory: docs/board\n',
      { kind: 'misshapen', path: 'docs/board', shape: 'below-non-folder', role: 'board' },
    ],
  ];
  for (const [name, shapes, rootConfig, expected] of cases)
    t.match(placeBoard(facts(shapes, rootConfig)), expected, name);
});

t.test('the message names what is there and the fix, for the disk and for a commit', async (t) => {
  const onDisk = misshapenProblem({ kind: 'misshapen', path: 'backlog', shape: 'fifo', role: 'board' }, false);
  t.equal(onDisk.problem, 'is a FIFO (named pipe), not a folder');
  t.match(onDisk.fix, /^the board must be a folder of task files: put the folder itself there/);
  const inGit = misshapenProblem({ kind: 'misshapen', path: 'backlog/tasks', shape: 'link', role: 'tasks' }, true);
  t.equal(inGit.problem, 'is a symbolic link (a board is never read through a link)');
  t.match(inGit.fix, /^task files go in the folder backlog\/tasks: commit the folder itself at backlog\/tasks/);
});
