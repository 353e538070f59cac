// Which git lock files are stale (a table), and what of git's output a
// failed command keeps (the line that names the lock's path).
import t from 'tap';
import { judgeGitLocks, keptLockNote, type LockHolderProcess } from '../../src/drain/verdict/git-locks.js';
import { gitsLastWords } from '../../src/git/git.js';

const INDEX = '/r/.git/worktrees/staging/index.lock';
const REF = '/r/.git/refs/heads/auto/work.lock';

t.test('git locks: removed only when nothing may hold them (table)', async (t) => {
  const rows: { name: string; holders: LockHolderProcess[]; remove: string[]; keep: string[] }[] = [
    { name: 'no process at all: both stale', holders: [], remove: [INDEX, REF], keep: [] },
    {
      name: 'one open in a process: that one kept',
      holders: [{ pid: 40, name: 'git', file: INDEX }],
      remove: [REF],
      keep: [`${INDEX}: open in pid 40 (git)`],
    },
    {
      name: 'a git working in the repo may hold any of them closed: all kept',
      holders: [{ pid: 41, name: 'git', file: undefined }],
      remove: [],
      keep: [
        `${INDEX}: git is running in the repository (pid 41) and may hold it`,
        `${REF}: git is running in the repository (pid 41) and may hold it`,
      ],
    },
  ];
  for (const row of rows) {
    const verdict = judgeGitLocks([INDEX, REF], row.holders);
    t.same(verdict.remove, row.remove, `${row.name}: removed`);
    t.same(
      verdict.keep.map((kept) => `${kept.file}: ${kept.reason}`),
      row.keep,
      `${row.name}: kept`,
    );
  }
  t.equal(
    keptLockNote({ file: INDEX, reason: 'open in pid 40 (git)' }),
    `kept git lock ${INDEX}: open in pid 40 (git); if no git is running there, remove the file`,
  );
});

t.test("git's last words keep the line that names the path", async (t) => {
  const stderr = [
    "fatal: Unable to create '/r/.git/worktrees/staging/index.lock': File exists.",
    '',
    'Another git process seems to be running in this repository, e.g.',
    "an editor opened by 'git commit'. Please make sure all processes",
    'are terminated then try again. If it still fails, a git process',
    'may have crashed in this repository earlier:',
    'remove the file manually to continue.',
  ].join('\n');
  const words = gitsLastWords(stderr);
  t.match(
    words,
    /^fatal: Unable to create '\/r\/\.git\/worktrees\/staging\/index\.lock': File exists\. \| /,
    'the path comes first',
  );
  t.match(words, /remove the file manually to continue\.$/, 'and the last words last');
  t.equal(gitsLastWords('error: one\nerror: one'), 'error: one', 'no repeats');
  t.equal(gitsLastWords('a\nb\nc\nd'), 'b | c | d', 'plain output: the last three lines');
});
