// The board snapshot's parsing of `git cat-file --batch` output kept as
// bytes: headers, contents and tree objects, from hand-built bytes.
import t from 'tap';
import { parseBatchObjects, parseTreeObject } from '../../src/control/repo-view/board.js';

const A = 'a'.repeat(40);
const B = 'b'.repeat(40);
const C = 'c'.repeat(40);

/** A tree object's bytes, as git stores it. */
function tree(entries: [mode: string, name: string, oid: string][]): Buffer {
  return Buffer.concat(
    entries.map(([mode, name, oid]) =>
      Buffer.concat([Buffer.from(`${mode} ${name}\0`, 'utf8'), Buffer.from(oid, 'hex')]),
    ),
  );
}

t.test('tree objects: the markdown blobs, names as stored (no quoting), folders and submodules left out', async (t) => {
  const bytes = tree([
    ['100644', 'README.txt', A],
    ['100644', 'task-1 - One.md', B],
    ['100755', 'task-2 - Café.md', C],
    ['120000', 'task-3 - Link.md', A],
    ['40000', 'sub.md', B],
    ['160000', 'module.md', C],
  ]);
  t.same(parseTreeObject(bytes, 40), [
    [B, 'task-1 - One.md'],
    [C, 'task-2 - Café.md'],
    [A, 'task-3 - Link.md'],
  ]);
  const sha256 = 'd'.repeat(64);
  t.same(
    parseTreeObject(tree([['100644', 'task-1 - One.md', sha256]]), 64),
    [[sha256, 'task-1 - One.md']],
    'sha256 repos',
  );
  t.same(parseTreeObject(Buffer.alloc(0), 40), [], 'an empty tree');
  t.same(parseTreeObject(bytes.subarray(0, bytes.length - 5), 40).length, 3, 'a cut entry is dropped, not misread');
});

t.test('batch output: objects with their bytes, missing names, tags, and output that ends early', async (t) => {
  const treeBytes = tree([['100644', 'task-1 - Ünï.md', B]]);
  const blob = Buffer.from('statuses: ["To Do", "Done"]\n', 'utf8');
  const stdout = Buffer.concat([
    Buffer.from(`${A} tree ${treeBytes.length}\n`),
    treeBytes,
    Buffer.from('\n'),
    Buffer.from('refs/heads/x:backlog missing\n'),
    Buffer.from(`${B} blob ${blob.length}\n`),
    blob,
    Buffer.from('\n'),
    Buffer.from(`${C} tag 3\nabc\n`),
    Buffer.from(`${C} commit 4\ntree\n`),
  ]);
  // The process port gives bytes as latin1 text (binaryStdout): the same answer as from the Buffer.
  for (const [name, input] of [
    ['Buffer', stdout],
    ['latin1 text', stdout.toString('latin1')],
  ] as const) {
    const objects = parseBatchObjects(input, 6);
    t.equal(objects.length, 6, name);
    t.same(
      objects.map((object) => object && [object.oid, object.type]),
      [[A, 'tree'], undefined, [B, 'blob'], undefined, [C, 'commit'], undefined],
      name,
    );
    t.same(parseTreeObject(objects[0]!.content, 40), [[B, 'task-1 - Ünï.md']], `${name}: the tree's bytes intact`);
    t.equal(objects[2]!.content.toString('utf8'), blob.toString('utf8'), `${name}: the blob's text`);
  }
});

t.test('batch-command output: info requests have no content to skip', async (t) => {
  const blob = Buffer.from('x: 1\n');
  const stdout = Buffer.concat([
    Buffer.from(`${A} tree 99\n`),
    Buffer.from(`${B} blob ${blob.length}\n`),
    blob,
    Buffer.from('\n'),
    Buffer.from('refs/heads/x:backlog missing\n'),
    Buffer.from(`${C} blob 12345\n`),
  ]);
  const objects = parseBatchObjects(stdout, 4, [false, true, true, false]);
  t.same(
    objects.map((object) => object && [object.oid, object.type, object.content.length]),
    [[A, 'tree', 0], [B, 'blob', blob.length], undefined, [C, 'blob', 0]],
  );
  t.equal(objects[1]!.content.toString(), 'x: 1\n');
});
