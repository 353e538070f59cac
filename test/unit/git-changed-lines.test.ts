// The lines a change touches, read from real `git diff -U0` output of a
// small repo: modified, added and deleted lines, new, deleted, binary and
// renamed files (a delete and an add with --no-renames), paths with spaces,
// quotes and non-ASCII, and added lines that look like diff headers.
import t, { type Test } from 'tap';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { changedLines, parseChangedLines, type ChangedLines } from '../../src/git/diff.js';
import { Git } from '../../src/git/git.js';
import { realProcess } from '../../src/io/real-ports.js';
import { git, GIT_TEST_ENV, gitRepo } from '../helpers/temp.js';

function twoCommits(t: Test): { dir: string; from: string; to: string } {
  const dir = gitRepo(t, {
    'f.txt': 'a\nb\nc\nd\ne\n',
    'sp ace "q".txt': 'x\n',
    'del.txt': 'gone\n',
    'old.txt': 'r1\nr2\n',
    'bin.dat': '\0\x01',
    'run.sh': 'echo hi\n',
  });
  const from = git(dir, 'rev-parse', 'HEAD');
  const write = (name: string, text: string) => {
    mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    writeFileSync(path.join(dir, name), text);
  };
  // Line 2 modified, line 4 deleted, three lines added after e (the last reads like a +++ header).
  write('f.txt', 'a\nB\nc\ne\nf\ng\n++ b/x\n');
  write('sp ace "q".txt', 'x\nx\ny\n');
  write('new é.txt', 'n1\n+++ b/fake\n');
  write('plain space.txt', 'q\n');
  write('odd b/e', '');
  write('bin.dat', '\0\x02');
  chmodSync(path.join(dir, 'run.sh'), 0o755);
  git(dir, 'rm', '-q', 'del.txt');
  git(dir, 'mv', 'old.txt', 'new.txt');
  git(dir, 'add', '-A');
  git(dir, 'commit', '-q', '-m', 'change');
  return { dir, from, to: git(dir, 'rev-parse', 'HEAD') };
}

const EXPECTED: [string, { start: number; count: number }[]][] = [
  ['bin.dat', []],
  [
    'f.txt',
    [
      { start: 2, count: 1 },
      { start: 5, count: 3 },
    ],
  ],
  ['new é.txt', [{ start: 1, count: 2 }]],
  ['new.txt', [{ start: 1, count: 2 }]],
  ['odd b/e', []],
  ['plain space.txt', [{ start: 1, count: 1 }]],
  ['run.sh', []],
  ['sp ace "q".txt', [{ start: 2, count: 2 }]],
];

const sorted = (changed: ChangedLines) => [...changed].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));

t.test('parseChangedLines reads real git diff -U0 output', async (t) => {
  const { dir, from, to } = twoCommits(t);
  const diff = git(dir, 'diff', '-U0', '--no-color', '--no-ext-diff', '--no-renames', from, to);
  t.match(diff, '"b/sp ace \\"q\\".txt"', 'git quoted the path');
  t.match(diff, '+++ b/plain space.txt\t', 'and ended a spaced name with a tab');
  const changed = parseChangedLines(diff);
  t.same(sorted(changed), EXPECTED);
  t.notOk(changed.has('del.txt'), 'a deleted file is absent');
  t.notOk(changed.has('old.txt'), 'a renamed file is a delete (absent) and an add');
  t.notOk(changed.has('fake') || changed.has('x'), 'added lines that read like headers are content');
});

t.test('changedLines: the same through plumbing, whatever the repo configures for diffs', async (t) => {
  const { dir, from, to } = twoCommits(t);
  for (const [key, value] of [
    ['diff.noprefix', 'true'],
    ['diff.mnemonicPrefix', 'true'],
    ['core.quotePath', 'false'],
    ['diff.renames', 'copies'],
    ['diff.relative', 'true'],
  ])
    git(dir, 'config', key!, value!);
  const changed = await changedLines(new Git(realProcess, { env: GIT_TEST_ENV }), dir, from, to);
  t.same(sorted(changed), EXPECTED);
});

t.test('parseChangedLines on hand-made edge cases', async (t) => {
  t.same([...parseChangedLines('')], [], 'no diff, nothing changed');
  const onlyDeletions = 'diff --git a/a b/a\nindex 1..2 100644\n--- a/a\n+++ b/a\n@@ -3,2 +2,0 @@\n-x\n-y\n';
  t.same([...parseChangedLines(onlyDeletions)], [['a', []]], 'a file with only deletions has no ranges');
  const noNewline =
    'diff --git a/a b/a\n--- a/a\n+++ b/a\n@@ -1 +1 @@\n-x\n\\ No newline at end of file\n+y\n\\ No newline at end of file\n' +
    'diff --git a/b b/b\n--- a/b\n+++ b/b\n@@ -1 +1 @@\n-p\n+q\n';
  t.same(
    [...parseChangedLines(noNewline)],
    [
      ['a', [{ start: 1, count: 1 }]],
      ['b', [{ start: 1, count: 1 }]],
    ],
  );
  const escapes = 'diff --git "a/t\\tab\\\\" "b/t\\tab\\\\"\nnew file mode 100644\nindex 0..e\n';
  t.same([...parseChangedLines(escapes)], [['t\tab\\', []]], 'C escapes unquoted, from the header alone');
});
