// HEAD from a worktree's files (src/git/head-files.ts) against real git: the
// same commit `git rev-parse HEAD` gives wherever the files say it plainly
// (a branch as a loose ref or in packed-refs, a detached HEAD, a linked
// worktree), and undefined (git is asked) wherever they do not.
import t from 'tap';
import { mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { gitDirFromFile, headFromFiles, parseHeadFile } from '../../src/git/head-files.js';
import { Git } from '../../src/git/git.js';
import { realFs, realProcess } from '../../src/io/real-ports.js';
import { git, GIT_TEST_ENV, tempDir } from '../helpers/temp.js';

const OID = 'a'.repeat(40);

t.test('pure: HEAD and .git files as git writes them, nothing else', async (t) => {
  t.same(parseHeadFile(`${OID}\n`), { oid: OID });
  t.same(parseHeadFile('ref: refs/heads/auto/work\n'), { ref: 'refs/heads/auto/work' });
  for (const text of [
    'ref: refs/heads/../../x\n',
    'ref: HEAD\n',
    'ref: refs/heads//x\n',
    `${OID}\n\n`,
    '',
    'garbage\n',
  ])
    t.equal(parseHeadFile(text), undefined, JSON.stringify(text));
  t.equal(gitDirFromFile('/w/t', 'gitdir: /r/.git/worktrees/t\n'), '/r/.git/worktrees/t');
  t.equal(gitDirFromFile('/w/t', 'gitdir: ../r/.git\n'), '/w/r/.git');
  t.equal(gitDirFromFile('/w/t', 'nonsense\n'), undefined);
});

t.test('the commit git names, or undefined', async (t) => {
  const root = tempDir(t);
  const repo = path.join(root, 'repo');
  mkdirSync(repo);
  git(repo, 'init', '-q', '-b', 'main');
  git(repo, 'commit', '-q', '--allow-empty', '-m', 'one');
  git(repo, 'commit', '-q', '--allow-empty', '-m', 'two');
  const revParse = (dir: string) => git(dir, 'rev-parse', 'HEAD').trim();
  const files = realFs;
  const withFiles = new Git(realProcess, { env: GIT_TEST_ENV, files });
  const withoutFiles = new Git(realProcess, { env: GIT_TEST_ENV });
  const same = async (dir: string, what: string) => {
    t.equal(await headFromFiles(files, dir), revParse(dir), what);
    t.equal(
      await withFiles.resolve(dir, 'HEAD'),
      await withoutFiles.resolve(dir, 'HEAD'),
      `${what}: Git.resolve agrees`,
    );
  };

  await same(repo, 'a branch as a loose ref');
  git(repo, 'pack-refs', '--all');
  await same(repo, 'a branch in packed-refs');
  const wt = path.join(root, 'linked');
  git(repo, 'worktree', 'add', '-q', '-b', 'auto/TASK-1', wt, 'HEAD~1');
  await same(wt, 'a linked worktree on its own branch');
  git(wt, 'checkout', '-q', '--detach', 'main');
  await same(wt, 'a linked worktree, detached');
  git(repo, 'checkout', '-q', '--detach');
  await same(repo, 'the main worktree, detached');

  git(repo, 'checkout', '-q', '--orphan', 'unborn');
  t.equal(await headFromFiles(files, repo), undefined, 'an unborn branch: git says');
  t.equal(await withFiles.resolve(repo, 'HEAD'), undefined, 'and git says there is no HEAD');
  git(repo, 'checkout', '-q', '-f', 'main');
  git(repo, 'symbolic-ref', 'refs/heads/alias', 'refs/heads/main');
  git(repo, 'symbolic-ref', 'HEAD', 'refs/heads/alias');
  t.equal(await headFromFiles(files, repo), undefined, 'a branch that is itself a symbolic ref: git says');
  t.equal(await withFiles.resolve(repo, 'HEAD'), revParse(repo), 'and Git.resolve asks it');
  git(repo, 'symbolic-ref', 'HEAD', 'refs/heads/main');

  writeFileSync(path.join(wt, '.git'), 'gitdir: /nonexistent/place\n');
  t.equal(await headFromFiles(files, wt), undefined, 'a .git file naming nothing');
  rmSync(path.join(wt, '.git'));
  symlinkSync(path.join(repo, '.git'), path.join(wt, '.git'));
  t.equal(await headFromFiles(files, wt), undefined, 'a .git that is a link is not followed');
  t.equal(await headFromFiles(files, path.join(root, 'no-such-dir')), undefined, 'no worktree there');
});
