// Ending what a gone run left in a repository, then removing the stale git locks: over a fake process table (who
// started each process, how it answers signals) and real lock files in a temp dir.
import t, { type Test } from 'tap';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { clearStaleGitLocks, LEFT_GIT_GRACE_MS } from '../../src/drain/recovery/git-locks.js';
import { realFs } from '../../src/io/real-ports.js';
import { BusyError, EXIT } from '../../src/errors.js';
import { aProcessTable, type TableProcess } from '../helpers/fake-process-table.js';
import { tempDir } from '../helpers/temp.js';

const SELF = { pid: 500, startTime: '9000', uid: 1001 };
/** The agent-runner process that started the gits below, gone (nothing runs under pid 90). */
const GONE = '90:6000';

function aRepository(t: Test): { workspace: string; gitDir: string; index: string } {
  const root = tempDir(t, 'agent-runner-git-locks-');
  const workspace = path.join(root, 'clone');
  const gitDir = path.join(workspace, '.git');
  mkdirSync(path.join(gitDir, 'worktrees', 'staging'), { recursive: true });
  mkdirSync(path.join(gitDir, 'refs', 'heads', 'auto'), { recursive: true });
  const index = path.join(gitDir, 'worktrees', 'staging', 'index.lock');
  writeFileSync(index, '');
  return { workspace, gitDir, index };
}

function aGit(fields: Partial<TableProcess> = {}): TableProcess {
  return { pid: 40, name: 'git', startTime: '7000', uid: SELF.uid, pgid: 40, inDirs: true, startedBy: GONE, ...fields };
}

t.test("a gone run's git and its filter: waited for, ended by the group, its lock gone", async (t) => {
  const repo = aRepository(t);
  const table = aProcessTable(SELF, [
    aGit({ file: repo.index, onEnd: () => rmSync(repo.index) }),
    aGit({ pid: 41, name: 'filter.sh', startTime: '7001', pgid: 40 }),
  ]);
  const notes = await clearStaleGitLocks({ ...table, fs: realFs }, repo.workspace, repo.gitDir, 2000);
  t.same(table.signals, ['group 40 SIGTERM'], 'one SIGTERM to the git group, after the wait, reaches the filter too');
  t.equal(table.clock.now() >= 2000, true, 'it waited the bound first');
  t.same(notes, [
    `ended git (pid 40) and 1 of its process group (filter.sh pid 41) left in the repository by agent-runner pid 90, which is gone, holding ${repo.index}: SIGTERM after waiting 2s`,
  ]);
  t.notOk(table.running(40) || table.running(41), 'both ended');
});

t.test('one that ignores SIGTERM gets SIGKILL after the grace; the lock it leaves is removed', async (t) => {
  const repo = aRepository(t);
  const table = aProcessTable(SELF, [aGit({ file: repo.index, onTerm: 'ignores' })]);
  const notes = await clearStaleGitLocks({ ...table, fs: realFs }, repo.workspace, repo.gitDir, 1000);
  t.same(table.signals, ['group 40 SIGTERM', 'group 40 SIGKILL']);
  t.ok(table.clock.now() >= 1000 + LEFT_GIT_GRACE_MS, 'after the wait and the grace');
  t.same(notes, [
    `ended git (pid 40) left in the repository by agent-runner pid 90, which is gone, holding ${repo.index}: SIGKILL, SIGTERM did not end it in 5s`,
    `removed git lock ${repo.index} left by a git that was killed (no process holds it)`,
  ]);
  t.notOk(existsSync(repo.index));
});

t.test('one that finishes within the wait is not signalled', async (t) => {
  const repo = aRepository(t);
  const table = aProcessTable(SELF, [aGit({ file: repo.index, endsAfterMs: 300, onEnd: () => rmSync(repo.index) })]);
  const notes = await clearStaleGitLocks({ ...table, fs: realFs }, repo.workspace, repo.gitDir, 5000);
  t.same(table.signals, []);
  t.ok(table.clock.now() < 1000, 'and it is not waited for longer than it takes');
  t.same(notes, [
    `git (pid 40) left in the repository by agent-runner pid 90, which is gone, holding ${repo.index}: finished by itself`,
  ]);
});

t.test('a pid recycled during the wait is never signalled', async (t) => {
  const repo = aRepository(t);
  // It ends by itself, and another process gets its pid at once.
  const table = aProcessTable(SELF, [
    aGit({ pid: 41, pgid: 40, name: 'filter.sh', endsAfterMs: 300, onEnd: () => table.recycle(41, '7777') }),
  ]);
  await clearStaleGitLocks({ ...table, fs: realFs }, repo.workspace, repo.gitDir, 1000);
  t.same(table.signals, [], 'the process now under that pid is left alone');
  t.ok(table.running(41));
});

t.test("a live run's git holding a lock: busy naming it, nothing signalled, the lock kept", async (t) => {
  const repo = aRepository(t);
  const table = aProcessTable(SELF, [
    { pid: 77, name: 'node', startTime: '100', uid: SELF.uid, pgid: 77 },
    aGit({ file: repo.index, startedBy: '77:100' }),
  ]);
  const busy = await clearStaleGitLocks({ ...table, fs: realFs }, repo.workspace, repo.gitDir, 1000).catch(
    (error: unknown) => error,
  );
  t.ok(busy instanceof BusyError, 'BusyError');
  t.equal((busy as BusyError).exitCode, EXIT.busy);
  t.equal(
    (busy as BusyError).message,
    `${repo.index} is held by git pid 40, started by agent-runner pid 77, which is running; wait for it to finish, then run again`,
  );
  t.same(table.signals, [], 'never signalled');
  t.ok(existsSync(repo.index), 'the lock is kept');
});

t.test("a gone run's git beside a live holder: the gone one is ended, the run is still busy", async (t) => {
  const repo = aRepository(t);
  const ref = path.join(repo.gitDir, 'refs', 'heads', 'auto', 'work.lock');
  writeFileSync(ref, '');
  const table = aProcessTable(SELF, [
    aGit({ file: ref, onEnd: () => rmSync(ref) }),
    { pid: 60, name: 'sleep', startTime: '300', uid: SELF.uid, pgid: 60, file: repo.index },
  ]);
  const busy = await clearStaleGitLocks({ ...table, fs: realFs }, repo.workspace, repo.gitDir, 0).catch(
    (error: unknown) => error,
  );
  t.ok(busy instanceof BusyError);
  t.match((busy as Error).message, `${repo.index} is held by sleep pid 60, which no live or gone agent-runner run`);
  t.same(table.signals, ['group 40 SIGTERM'], 'only the gone run’s git is signalled');
  t.ok(table.running(60));
});
