// The working tree and index as named verbs: status, reset, clean, stage,
// commit, checkout. Thin typed wrappers over Git.
import type { Git } from './git.js';
import { headRef } from './refs.js';

export type UntrackedMode = 'all' | 'normal' | 'no';

/** `status --porcelain` lines: what differs from HEAD (untracked files per `untracked`). */
export async function statusLines(git: Git, cwd: string, untracked: UntrackedMode = 'normal'): Promise<string[]> {
  const args = ['status', '--porcelain', ...(untracked === 'normal' ? [] : [`--untracked-files=${untracked}`])];
  return (await git.run(cwd, args)).split('\n').filter((line) => line.trim());
}

/** Whether the tree has changes (untracked files per `untracked`). */
export async function isDirty(git: Git, cwd: string, untracked: UntrackedMode = 'normal'): Promise<boolean> {
  return (await statusLines(git, cwd, untracked)).length > 0;
}

/** HEAD, index and tree set to `to`. */
export async function resetHard(git: Git, cwd: string, to: string): Promise<void> {
  await git.run(cwd, ['reset', '--quiet', '--hard', to]);
}

/** Untracked files and folders removed (ignored ones stay). */
export async function cleanUntracked(git: Git, cwd: string): Promise<void> {
  await git.run(cwd, ['clean', '-fdq']);
}

/** Every file git does not track removed, ignored ones and nested repositories too; whether git could. */
export async function cleanEverythingUntracked(git: Git, cwd: string): Promise<boolean> {
  return (await git.try(cwd, ['clean', '-ffdxq'])).exitCode === 0;
}

/** `branch` created or reset at `start` and checked out, the tree forced to it (only files that differ are written). */
export async function checkoutNewBranch(git: Git, cwd: string, branch: string, start: string): Promise<boolean> {
  return (await git.try(cwd, ['checkout', '--quiet', '--force', '-B', branch, start])).exitCode === 0;
}

/** The tree exactly at `to`: reset hard, then untracked files removed. */
export async function resetAndClean(git: Git, cwd: string, to: string): Promise<void> {
  await resetHard(git, cwd, to);
  await cleanUntracked(git, cwd);
}

/** Stages the given repo-relative paths. */
export async function stagePaths(git: Git, cwd: string, paths: readonly string[]): Promise<void> {
  await git.run(cwd, ['add', '--', ...paths]);
}

/** Stages every change, untracked files included. */
export async function stageAll(git: Git, cwd: string): Promise<void> {
  await git.run(cwd, ['add', '-A']);
}

/** Commits the index (no hooks); returns nothing, read HEAD for the commit. */
export async function commitIndex(git: Git, cwd: string, message: string): Promise<void> {
  await git.run(cwd, ['commit', '--quiet', '--no-verify', '-m', message]);
}

export type CommitOnto =
  { readonly ok: true; readonly commit: string } | { readonly ok: false; readonly found: string | undefined };

/**
 * Commits the index onto `branch` only while the branch is still at
 * `parent` (update-ref's compare-and-swap): the commit's first parent is
 * `parent` whatever the branch points at now, and a branch that moved
 * meanwhile is left where it is (`found`). A merge in progress is the
 * commit's second parent and is concluded. No hooks run (git commit-tree
 * runs none).
 */
export async function commitIndexOnto(
  git: Git,
  cwd: string,
  branch: string,
  parent: string,
  message: string,
): Promise<CommitOnto> {
  const { commit, mergeHead } = await commitOfIndex(git, cwd, parent, message);
  const subject = message.split('\n', 1)[0]!;
  const moved = await git.try(cwd, ['update-ref', '-m', `commit: ${subject}`, headRef(branch), commit, parent]);
  if (moved.exitCode !== 0) return { ok: false, found: await git.resolve(cwd, headRef(branch)) };
  if (mergeHead) await git.run(cwd, ['merge', '--quit']);
  return { ok: true, commit };
}

/** The index as a commit on `parent` (a merge in progress its second parent) that no ref points at yet. */
async function commitOfIndex(
  git: Git,
  cwd: string,
  parent: string,
  message: string,
): Promise<{ commit: string; mergeHead: string | undefined }> {
  const tree = await git.value(cwd, ['write-tree']);
  const mergeHead = await git.resolve(cwd, 'MERGE_HEAD');
  const parents = ['-p', parent, ...(mergeHead ? ['-p', mergeHead] : [])];
  return { commit: await git.value(cwd, ['commit-tree', tree, ...parents, '-m', message]), mergeHead };
}

/** The index as a commit on `parent` that no ref points at: what a gate is handed to judge before anything lands. */
export async function commitIndexLoose(git: Git, cwd: string, parent: string, message: string): Promise<string> {
  return (await commitOfIndex(git, cwd, parent, message)).commit;
}

/** Checks out a branch, discarding changes to tracked files. */
export async function checkoutForce(git: Git, cwd: string, branch: string): Promise<void> {
  await git.run(cwd, ['checkout', '--quiet', '--force', branch]);
}

/** Detaches HEAD at `commit` (tree and index too), leaving every branch where it is. */
export async function checkoutDetached(git: Git, cwd: string, commit: string): Promise<void> {
  await git.run(cwd, ['checkout', '--quiet', '--force', '--detach', commit]);
}

/**
 * A path that differs from HEAD (tracked changes and untracked files), and whether it is gone from the working tree.
 */
export interface ChangedPath {
  readonly path: string;
  readonly deleted: boolean;
  /** Not in the index at all (`??`). */
  readonly untracked: boolean;
}

/** Every path that differs from HEAD in the index or the working tree, untracked files included. */
export async function changedPaths(git: Git, cwd: string): Promise<ChangedPath[]> {
  const output = await git.run(cwd, ['status', '--porcelain=v1', '-z', '--untracked-files=all', '--no-renames']);
  return output
    .split('\0')
    .filter((entry) => entry.length > 3)
    .map((entry) => ({
      path: entry.slice(3),
      deleted: entry[1] === 'D' || (entry[0] === 'D' && entry[1] === ' '),
      untracked: entry.startsWith('??'),
    }));
}
