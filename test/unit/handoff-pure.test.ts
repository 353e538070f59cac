// The pure pieces of the hand-off: what a task's bundle may name, how a
// task's tree stands from what the agent's side shows, and how a repo script
// is found in the tree it runs in. Each refusal row stands beside a row that
// passes.
import t from 'tap';
import { parseBundleHeads, taskBundleCommit } from '../../src/handoff/heads.js';
import { inTree, treeStateFrom } from '../../src/drain/sides.js';
import { aTask } from '../helpers/board-builder.js';

const A = 'a'.repeat(40);
const B = 'b'.repeat(40);

t.test('list-heads output: object ids and refs, or the line that is not one', async (t) => {
  t.same(parseBundleHeads(`${A} refs/heads/auto/TASK-1\n`), [{ commit: A, ref: 'refs/heads/auto/TASK-1' }]);
  t.same(parseBundleHeads(''), []);
  t.match(parseBundleHeads('zzz refs/heads/x\n'), /lists "zzz refs\/heads\/x", not a ref/);
  t.match(parseBundleHeads(`${A}\n`), /not a ref/);
});

t.test("a task's bundle names its own branch alone", async (t) => {
  const branch = 'auto/TASK-1';
  const rows: [string, { commit: string; ref: string }[], RegExp | { commit: string }][] = [
    ['its branch (control)', [{ commit: A, ref: 'refs/heads/auto/TASK-1' }], { commit: A }],
    ['nothing', [], /names no ref; it must name refs\/heads\/auto\/TASK-1 alone/],
    ['main', [{ commit: A, ref: 'refs/heads/main' }], /names refs\/heads\/main; it may name/],
    ['auto/work', [{ commit: A, ref: 'refs/heads/auto/work' }], /names refs\/heads\/auto\/work/],
    ['another task', [{ commit: A, ref: 'refs/heads/auto/TASK-2' }], /names refs\/heads\/auto\/TASK-2/],
    ['a look-alike', [{ commit: A, ref: 'refs/heads/auto/TASK-10' }], /names refs\/heads\/auto\/TASK-10/],
    ['HEAD', [{ commit: A, ref: 'HEAD' }], /names HEAD/],
    [
      'its branch and a tag',
      [
        { commit: A, ref: 'refs/heads/auto/TASK-1' },
        { commit: B, ref: 'refs/tags/v1' },
      ],
      /names refs\/tags\/v1/,
    ],
    [
      'its branch twice',
      [
        { commit: A, ref: 'refs/heads/auto/TASK-1' },
        { commit: B, ref: 'refs/heads/auto/TASK-1' },
      ],
      /2 times/,
    ],
  ];
  for (const [name, heads, expected] of rows) {
    const result = taskBundleCommit(heads, branch);
    if (expected instanceof RegExp) t.match(result, expected, name);
    else t.same(result, expected, name);
  }
});

t.test("a task's tree, from the side's status and the text of the task's file", async (t) => {
  const task = aTask({ id: 'TASK-1', file: 'backlog/tasks/task-1 - Do it.md' });
  const status = { head: A, dirty: true };
  const file = (text: string, name = task.file) => ({ file: name, text });
  const done = file('---\nid: TASK-1\ntitle: Do it\nstatus: Done\n---\n\nNotes here\n');
  const state = treeStateFrom(task, status, done);
  t.equal(state.status, 'Done', 'Done as the file says (control)');
  t.equal(state.head, A);
  t.equal(state.dirty, true);
  t.equal(state.unreadable, undefined);
  t.match(treeStateFrom(task, status, undefined).unreadable, /task TASK-1 is no longer on the board/, 'gone');
  t.match(
    treeStateFrom(task, status, file('---\nid: [unclosed\n---\n')).unreadable,
    /task-1 - Do it\.md: /,
    'unreadable, naming the file',
  );
  t.match(
    treeStateFrom(task, status, file('---\nid: TASK-2\ntitle: Other\nstatus: Done\n---\n')).unreadable,
    /is now task TASK-2, not TASK-1/,
    'a file that became another task is no Done for this one',
  );
});

t.test('a repo script given relative to its tree is run by its path there', async (t) => {
  const command = { program: 'tools/agent.sh', args: ['--fast'], env: {}, cwd: '/home/a/tasks/TASK-1' };
  t.equal(inTree(command).program, '/home/a/tasks/TASK-1/tools/agent.sh');
  t.equal(inTree({ ...command, program: '/usr/bin/claude' }).program, '/usr/bin/claude', 'absolute: as given');
  t.equal(inTree({ ...command, program: 'claude' }).program, 'claude', 'a bare name: found on PATH as before');
});
