// The pure pieces of the hand-off: what a task's bundle may name, what the
// agent's side may answer about a tree, and how a repo script is found in
// the tree it runs in. Each refusal row stands beside a row that passes.
import t from 'tap';
import { parseBundleHeads, taskBundleCommit } from '../../src/handoff/heads.js';
import { inTree, parseSideState } from '../../src/drain/sides.js';

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

t.test("the agent side's answer about a tree is checked", async (t) => {
  const good = { head: A, dirty: false, status: 'Done', unreadable: null, notes: null, blockedNote: null };
  t.same(parseSideState(good), good, 'a proper answer (control)');
  t.same(parseSideState({ ...good, head: null }), { ...good, head: null }, 'no commit yet');
  const rows: [string, unknown, RegExp][] = [
    ['not an object', 'Done', /not an object/],
    ['null', null, /not an object/],
    ['a head that is no commit', { ...good, head: 'HEAD~1' }, /head is not a commit id/],
    ['dirty as text', { ...good, dirty: 'no' }, /dirty is not true or false/],
    ['an unbounded status', { ...good, status: 'x'.repeat(201) }, /bounded string/],
    ['notes that are not text', { ...good, notes: 42 }, /bounded string/],
    ['a missing field', { head: A, dirty: true }, /bounded string/],
  ];
  for (const [name, answer, reason] of rows) t.match(parseSideState(answer), reason, name);
});

t.test('a repo script given relative to its tree is run by its path there', async (t) => {
  const command = { program: 'tools/agent.sh', args: ['--fast'], env: {}, cwd: '/home/a/tasks/TASK-1' };
  t.equal(inTree(command).program, '/home/a/tasks/TASK-1/tools/agent.sh');
  t.equal(inTree({ ...command, program: '/usr/bin/claude' }).program, '/usr/bin/claude', 'absolute: as given');
  t.equal(inTree({ ...command, program: 'claude' }).program, 'claude', 'a bare name: found on PATH as before');
});
