// Stale git lock files a killed git left in the repository, found and removed
// under the drain lock before anything uses git there: by the drain, and by
// the lifecycle commands (promote's fast-forward runs in the checkout). The
// places git locks live: the common git dir's own files (index, HEAD,
// config, packed-refs), each worktree's (worktrees/NAME/index.lock ...), and
// refs (refs/heads/auto/work.lock ...).
import * as path from 'node:path';
import type { FsPort, ProcessControl } from '../../ports.js';
import { judgeGitLocks, keptLockNote } from '../verdict/index.js';
import { worktreesDir } from '../../paths.js';

export interface GitLockDeps {
  readonly fs: FsPort;
  readonly control: Pick<ProcessControl, 'processesHolding'>;
}

/** Lock files directly in `dir` (files named *.lock; the drain lock is a directory and is not one). */
async function locksIn(fs: FsPort, dir: string): Promise<string[]> {
  const found: string[] = [];
  for (const name of await fs.list(dir)) {
    if (!name.endsWith('.lock')) continue;
    const stat = await fs.stat(path.join(dir, name));
    if (stat && !stat.isDirectory) found.push(path.join(dir, name));
  }
  return found;
}

/** Lock files anywhere under refs/ (a ref lock sits beside its ref). */
async function refLocks(fs: FsPort, dir: string): Promise<string[]> {
  const found: string[] = [];
  for (const name of await fs.list(dir)) {
    const file = path.join(dir, name);
    const stat = await fs.stat(file);
    if (stat?.isDirectory) found.push(...(await refLocks(fs, file)));
    else if (stat && name.endsWith('.lock')) found.push(file);
  }
  return found;
}

export async function findGitLocks(fs: FsPort, gitCommonDir: string): Promise<string[]> {
  const found = [...(await locksIn(fs, gitCommonDir)), ...(await refLocks(fs, path.join(gitCommonDir, 'refs')))];
  const worktrees = path.join(gitCommonDir, 'worktrees');
  for (const name of await fs.list(worktrees)) found.push(...(await locksIn(fs, path.join(worktrees, name))));
  return found.sort();
}

/**
 * Removes the stale git locks of the repository whose checkout is
 * `workspace`; returns a note per lock removed or kept. Call it holding the
 * drain lock, after this repository's orphans were ended.
 */
export async function clearStaleGitLocks(
  deps: GitLockDeps,
  workspace: string,
  gitCommonDir: string,
): Promise<string[]> {
  const locks = await findGitLocks(deps.fs, gitCommonDir);
  // Where a live git of this repository would work.
  const dirs = [workspace, worktreesDir(workspace), gitCommonDir];
  if (!locks.length) return [];
  const verdict = judgeGitLocks(locks, await deps.control.processesHolding(locks, dirs));
  const notes: string[] = [];
  for (const file of verdict.remove) {
    await deps.fs.remove(file);
    notes.push(`removed git lock ${file} left by a git that was killed (no process holds it)`);
  }
  return [...notes, ...verdict.keep.map(keptLockNote)];
}
