// The other side of the hand-off: what the agent (or the gate) does in its
// own repository, run as that identity by `agent-runner side` (cli/side.ts).
// It takes the runner's bundles from the folder it may only read, keeps its
// own repository and worktrees, and hands a task's branch back as a bundle in
// the folder it writes. Nothing here ever touches the runner's repository.
import * as path from 'node:path';
import type { FsPort } from '../ports.js';
import type { Task, TaskId } from '../types.js';
import type { Git, GitIdentity } from '../git/git.js';
import { readBoard, findTask } from '../board/read.js';
import { sameTaskId } from '../board/task-id.js';
import { givenRef } from './give.js';
import { commitLeftovers } from './leftovers.js';
import { addWorktree, pruneWorktrees, removeWorktree } from '../git/worktree.js';
import { deleteBranch } from '../git/refs.js';

export interface Checkout {
  /** The side's own (bare) repository. */
  readonly repo: string;
  /** The runner's bundle of `commit` (giveCommit). */
  readonly bundle: string;
  readonly commit: string;
  /** The worktree to make (replacing what an earlier attempt left there). */
  readonly dir: string;
  /** The branch to cut at `commit`; undefined: detached (the gate's candidate). */
  readonly branch: string | undefined;
  /** Who the agent's commits are by (the repo's author), set in the side's repository. */
  readonly author: GitIdentity | undefined;
  /**
   * A finished task's worktree to make this one of (moved here, switched, cleaned) instead of writing every file
   * anew; its branch goes.
   */
  readonly reuse?: { readonly dir: string; readonly branch: string };
}

/** Where the given commit is kept in a side's repository until its worktree holds it (checkouts run one at a time). */
const GIVEN_HERE = 'refs/agent-runner/given';

/** Fetches the given commit into the side's repository and checks it out in a fresh worktree. */
export async function checkoutGiven(git: Git, fs: FsPort, checkout: Checkout): Promise<void> {
  if (!(await fs.stat(path.join(checkout.repo, 'HEAD')))) {
    await fs.mkdirp(checkout.repo, 0o700);
    await git.run(checkout.repo, ['init', '--quiet', '--bare']);
  }
  const kept = GIVEN_HERE;
  await git.run(checkout.repo, [
    'fetch',
    '--no-tags',
    '--no-write-fetch-head',
    '--quiet',
    checkout.bundle,
    `+${givenRef(checkout.commit)}:${kept}`,
  ]);
  if (checkout.author) {
    await git.run(checkout.repo, ['config', 'user.name', checkout.author.name]);
    await git.run(checkout.repo, ['config', 'user.email', checkout.author.email]);
  }
  if (checkout.reuse) await moveSpare(git, fs, checkout.repo, checkout.reuse, checkout);
  if (await reuseTree(git, fs, checkout)) return;
  await dropTree(git, fs, checkout.repo, checkout.dir);
  await fs.mkdirp(path.dirname(checkout.dir), 0o700);
  if (checkout.branch)
    await addWorktree(git, checkout.repo, { dir: checkout.dir, commitish: checkout.commit, branch: checkout.branch });
  else await git.run(checkout.repo, ['worktree', 'add', '--quiet', '--detach', checkout.dir, checkout.commit]);
}

/**
 * A worktree left by an earlier checkout (the gate's last candidate, a task's last attempt) switched to the new
 * commit: only the files that differ are written, and `clean -ffdx` removes what the last run left. False when there
 * is none or git would not; the caller then makes a fresh one.
 */
async function reuseTree(git: Git, fs: FsPort, checkout: Checkout): Promise<boolean> {
  if (!(await fs.stat(path.join(checkout.dir, '.git')))) return false;
  const to = checkout.branch
    ? ['checkout', '--quiet', '--force', '-B', checkout.branch, checkout.commit]
    : ['checkout', '--quiet', '--force', '--detach', checkout.commit];
  if ((await git.try(checkout.dir, to)).exitCode !== 0) return false;
  return (await git.try(checkout.dir, ['clean', '-ffdxq'])).exitCode === 0;
}

/**
 * A finished task's worktree moved to the new task's folder (or removed when git will not move it); its branch gone.
 */
async function moveSpare(
  git: Git,
  fs: FsPort,
  repo: string,
  spare: NonNullable<Checkout['reuse']>,
  checkout: Checkout,
): Promise<void> {
  if (spare.dir !== checkout.dir && (await fs.stat(spare.dir))) {
    await dropTree(git, fs, repo, checkout.dir);
    await fs.mkdirp(path.dirname(checkout.dir), 0o700);
    if ((await git.try(repo, ['worktree', 'move', spare.dir, checkout.dir])).exitCode !== 0)
      await dropTree(git, fs, repo, spare.dir);
  }
  // Detached first, so the old branch is free to go whatever happens next.
  if (await fs.stat(path.join(checkout.dir, '.git')))
    await git.try(checkout.dir, ['checkout', '--quiet', '--force', '--detach', checkout.commit]);
  if (spare.branch !== checkout.branch) await deleteBranch(git, repo, spare.branch);
}

/** A worktree and its folder gone (tolerant of either being gone already). */
async function dropTree(git: Git, fs: FsPort, repo: string, dir: string): Promise<void> {
  if (!(await fs.stat(dir))) return;
  if (!(await removeWorktree(git, repo, dir))) await fs.remove(dir);
  await pruneWorktrees(git, repo);
}

/** Removes a task's worktree and, when given, its branch. */
export async function removeCheckout(
  git: Git,
  fs: FsPort,
  repo: string,
  dir: string,
  branch: string | undefined,
): Promise<void> {
  await dropTree(git, fs, repo, dir);
  if (branch) await deleteBranch(git, repo, branch);
}

/**
 * Every worktree under `dir` and every task branch gone from the side's repository: what a killed or finished drain
 * left. Nothing of the side's is needed across drains (the runner keeps what landed or waits for review); its objects
 * stay, so the next bundles can be small.
 */
export async function clearSide(git: Git, fs: FsPort, repo: string, dir: string): Promise<number> {
  if (!(await fs.stat(path.join(repo, 'HEAD')))) return 0;
  const names = await fs.list(dir);
  for (const name of names) await dropTree(git, fs, repo, path.join(dir, name));
  await pruneWorktrees(git, repo);
  const branches = (await git.run(repo, ['for-each-ref', '--format=%(refname)', 'refs/heads/auto/']))
    .split('\n')
    .filter(Boolean);
  for (const ref of branches) await git.try(repo, ['update-ref', '-d', ref]);
  return names.length;
}

/** How a task's tree stands after a session, as the side reports it to the runner (as data). */
export interface SideTreeState {
  readonly head: string | null;
  readonly dirty: boolean;
  readonly status: string | null;
  /** What the board says is wrong, when the task cannot be read. */
  readonly unreadable: string | null;
  /** The task's notes and blocked note, from which a Blocked reason is taken. */
  readonly notes: string | null;
  readonly blockedNote: string | null;
}

export async function treeStateOf(git: Git, fs: FsPort, dir: string, taskId: TaskId): Promise<SideTreeState> {
  const { head, dirty } = await git.treeState(dir);
  const board = await readBoard(fs, dir);
  const task: Task | undefined = findTask(board, taskId);
  if (task)
    return {
      head: head ?? null,
      dirty,
      status: task.status,
      unreadable: null,
      notes: task.notes ?? null,
      blockedNote: task.blockedNote ?? null,
    };
  const broken = board.unreadable.find((entry) => entry.id !== undefined && sameTaskId(entry.id, taskId));
  return {
    head: head ?? null,
    dirty,
    status: null,
    unreadable: broken ? `${broken.file}: ${broken.reason}` : `task ${taskId} is no longer on the board`,
    notes: null,
    blockedNote: null,
  };
}

export interface HandOver {
  readonly dir: string;
  readonly taskId: TaskId;
  readonly branch: string;
  /** The commit the task was cut from: the bundle holds what the branch has beyond it. */
  readonly base: string;
  /** The folder the side writes (the hand-off's fromAgent) and the bundle's name there. */
  readonly out: string;
  readonly name: string;
}

/** What the hand-over did: whether it committed what the agent left, and the tip it bundled. */
export interface HandedOver {
  readonly committedLeftovers: boolean;
  readonly commit: string;
}

/** Commits what the agent left uncommitted, then bundles the task's branch beyond its base into `out/name`. */
export async function handOverTask(git: Git, fs: FsPort, handOver: HandOver): Promise<HandedOver | string> {
  const leftover = await commitLeftovers(git, handOver.dir, handOver.taskId);
  const commit = await git.value(handOver.dir, ['rev-parse', 'HEAD']);
  const branch = await git.value(handOver.dir, ['rev-parse', `refs/heads/${handOver.branch}`]);
  if (commit !== branch) return `the worktree's HEAD ${commit.slice(0, 12)} is not ${handOver.branch}`;
  if (commit === handOver.base) return `${handOver.branch} has no commit beyond ${handOver.base.slice(0, 12)}`;
  const file = path.join(handOver.out, handOver.name);
  const partial = `${file}.partial`;
  // The runner cannot delete in this folder: the side keeps it to one bundle per task.
  for (const name of await fs.list(handOver.out))
    if (name.startsWith(`${handOver.taskId}-`)) await fs.remove(path.join(handOver.out, name)).catch(() => undefined);
  await git.run(handOver.dir, [
    'bundle',
    'create',
    '--quiet',
    partial,
    `${handOver.base}..refs/heads/${handOver.branch}`,
  ]);
  await fs.rename(partial, file);
  return { committedLeftovers: leftover !== undefined, commit };
}
