// The other side of the hand-off: what the agent (or the gate) does in its
// own repository, as plain git (and rm, cat, ls) run as that identity through
// its process port (root's launcher on a host). The runner decides every
// step and reads each answer as data; nothing here ever touches the runner's
// repository, and no program of agent-runner's runs as the agent: a git is a
// few milliseconds where a node start is a hundred.
import * as path from 'node:path';
import type { ProcessPort } from '../ports.js';
import type { Git, GitIdentity } from '../git/git.js';
import { gitsLastWords } from '../git/git.js';
import { givenRef } from './give.js';
import { commitLeftovers } from './leftovers.js';
import { moveWorktree, pruneWorktrees, removeWorktree } from '../git/worktree.js';
import { checkoutNewBranch, cleanEverythingUntracked } from '../git/tree.js';

/** A side identity's tools: git and the few other programs its steps need, all run as it. */
export interface SideTools {
  readonly git: Git;
  readonly process: ProcessPort;
  readonly env: Readonly<Record<string, string>>;
  /** The identity's name, for messages. */
  readonly who: string;
}

/** A side step that failed: whose, which, and what the program said. */
export class SideStepError extends Error {}

async function must(tools: SideTools, what: string, cwd: string, args: readonly string[]): Promise<string> {
  const result = await tools.git.try(cwd, args);
  if (result.exitCode !== 0)
    throw new SideStepError(`the ${tools.who}'s ${what} failed: ${gitsLastWords(result.stderr || result.stdout)}`);
  return result.stdout;
}

async function program(tools: SideTools, name: string, args: readonly string[], cwd = '/') {
  return tools.process.run({ program: name, args, env: { ...tools.env }, cwd });
}

/**
 * The side's own bare repository, made anew, with whatever was in the side's folders for it before gone: the side
 * could write all of it (config, hooks, a linked objects/), so nothing of it outlives the drain that let it.
 */
export async function freshRepository(
  tools: SideTools,
  repo: string,
  scratch: readonly string[],
  author: GitIdentity | undefined,
): Promise<void> {
  const removed = await program(tools, 'rm', ['-rf', '--', repo, ...scratch]);
  if (removed.exitCode !== 0)
    throw new SideStepError(`the ${tools.who} could not remove ${repo}: ${gitsLastWords(removed.stderr)}`);
  await must(tools, 'git init', '/', ['init', '--quiet', '--bare', repo]);
  if (author) {
    await must(tools, 'git config', repo, ['config', 'user.name', author.name]);
    await must(tools, 'git config', repo, ['config', 'user.email', author.email]);
  }
}

/** A worktree and its folder gone, tolerant of either being gone already. */
export async function dropTree(tools: SideTools, repo: string, dir: string): Promise<void> {
  if (!(await removeWorktree(tools.git, repo, dir))) {
    await program(tools, 'rm', ['-rf', '--', dir]);
    await pruneWorktrees(tools.git, repo);
  }
}

export interface Checkout {
  readonly repo: string;
  /** The runner's bundle of `commit` (giveCommit); undefined: the side holds it already. */
  readonly bundle: string | undefined;
  readonly commit: string;
  /** The worktree to make (replacing what an earlier attempt left there). */
  readonly dir: string;
  /** The branch to cut at `commit`; undefined: detached (the gate's candidate). */
  readonly branch: string | undefined;
  /**
   * A finished task's worktree to make this one of (moved here, switched, cleaned) instead of writing every file
   * anew; its branch goes.
   */
  readonly reuse?: { readonly dir: string; readonly branch: string };
}

/** The given commit fetched into the side's repository and checked out in `dir`. */
export async function checkoutGiven(tools: SideTools, checkout: Checkout): Promise<void> {
  const { repo, dir } = checkout;
  // Kept under its own ref for the drain (the repository is new each drain): later, thin bundles lean on it.
  if (checkout.bundle)
    await must(tools, 'fetch of the bundle', repo, [
      'fetch',
      '--no-tags',
      '--no-write-fetch-head',
      '--quiet',
      checkout.bundle,
      `+${givenRef(checkout.commit)}:${givenRef(checkout.commit)}`,
    ]);
  const reuse = checkout.reuse;
  if (reuse && reuse.dir !== dir) {
    await dropTree(tools, repo, dir);
    if (!(await moveWorktree(tools.git, repo, reuse.dir, dir))) await dropTree(tools, repo, reuse.dir);
  }
  // An earlier worktree here (a retry, a spare, the gate's last candidate): only the files that differ are written,
  // and clean -ffdx removes what the last run left. Else, or when git would not, a fresh one.
  const switched =
    (checkout.branch
      ? await checkoutNewBranch(tools.git, dir, checkout.branch, checkout.commit)
      : (await tools.git.try(dir, ['checkout', '--quiet', '--force', '--detach', checkout.commit])).exitCode === 0) &&
    (await cleanEverythingUntracked(tools.git, dir));
  if (!switched) {
    await dropTree(tools, repo, dir);
    await must(tools, 'git worktree add', repo, [
      'worktree',
      'add',
      '--quiet',
      ...(checkout.branch ? ['-B', checkout.branch] : ['--detach']),
      dir,
      checkout.commit,
    ]);
  }
  if (reuse && reuse.branch !== checkout.branch) await tools.git.try(repo, ['branch', '-D', '--quiet', reuse.branch]);
}

/** The text of a task's file in a side's worktree, found by its name or, renamed, by its id; undefined when gone. */
export async function taskFileText(
  tools: SideTools,
  dir: string,
  file: string,
  taskId: string,
  maxBytes: number,
): Promise<{ readonly file: string; readonly text: string } | undefined> {
  const read = async (relative: string) => {
    const result = await program(tools, 'head', ['-c', String(maxBytes + 1), '--', path.join(dir, relative)]);
    return result.exitCode === 0 ? { file: relative, text: result.stdout } : undefined;
  };
  const asNamed = await read(file);
  if (asNamed) return asNamed;
  // Backlog renames a task's file when its title changes; the id stays its first word.
  const listed = await program(tools, 'ls', ['-1', '--', path.join(dir, path.dirname(file))]);
  const prefix = `${taskId.toLowerCase()} `;
  const renamed = listed.stdout.split('\n').find((name) => name.toLowerCase().startsWith(prefix));
  return renamed ? read(path.join(path.dirname(file), renamed)) : undefined;
}

export interface HandOver {
  readonly dir: string;
  readonly taskId: string;
  readonly branch: string;
  /** The commit the task was cut from: the bundle holds what the branch has beyond it. */
  readonly base: string;
  /** The bundle to write (in the folder the side writes; the runner reads it). */
  readonly out: string;
  /** Commit what the agent left uncommitted first (a task it said Done or Blocked); else only what it committed. */
  readonly withLeftovers: boolean;
}

/** Commits what the agent left uncommitted (when asked), then bundles the task's branch beyond its base; or why not. */
export async function handOverTask(tools: SideTools, handOver: HandOver): Promise<string | undefined> {
  if (handOver.withLeftovers) await commitLeftovers(tools.git, handOver.dir, handOver.taskId);
  const head = (await must(tools, 'git rev-parse', handOver.dir, ['rev-parse', 'HEAD'])).trim();
  const tip = (await must(tools, 'git rev-parse', handOver.dir, ['rev-parse', `refs/heads/${handOver.branch}`])).trim();
  if (head !== tip) return `the worktree's HEAD ${head.slice(0, 12)} is not ${handOver.branch}`;
  if (tip === handOver.base) return `${handOver.branch} has no commit beyond ${handOver.base.slice(0, 12)}`;
  // An earlier attempt's bundle must never stand in for this one's.
  await program(tools, 'rm', ['-f', '--', handOver.out]);
  await must(tools, 'git bundle create', handOver.dir, [
    'bundle',
    'create',
    '--quiet',
    handOver.out,
    `${handOver.base}..refs/heads/${handOver.branch}`,
  ]);
  return undefined;
}

/** The verdict file a reviewer writes, made empty by the agent itself so it is the agent's own regular file. */
export async function freshVerdictFile(tools: SideTools, file: string): Promise<void> {
  await program(tools, 'rm', ['-f', '--', file]);
  const made = await program(tools, 'touch', ['--', file]);
  if (made.exitCode !== 0)
    throw new SideStepError(`the ${tools.who} could not make ${file}: ${gitsLastWords(made.stderr)}`);
}

/**
 * Why a reviewer's checkout is not as it was given (the candidate, clean, its branch unmoved), or undefined. Read as
 * the agent, so a hostile tree can only lie about itself: the runner's copy of the candidate is what is judged and
 * landed, this is the check that the reviewer kept to its verdict file.
 */
export async function checkoutChangedBy(
  tools: SideTools,
  dir: string,
  branch: string,
  candidate: string,
): Promise<string | undefined> {
  const status = await tools.git.try(dir, ['status', '--porcelain=v1', '--untracked-files=all', '--no-renames']);
  if (status.exitCode !== 0) return `git status failed in its checkout: ${gitsLastWords(status.stderr)}`;
  const changed = status.stdout
    .split('\n')
    .filter(Boolean)
    .map((line) => line.slice(3));
  if (changed.length)
    return `it changed ${changed.slice(0, 5).join(', ')}${changed.length > 5 ? ` and ${changed.length - 5} more` : ''}`;
  const head = (await tools.git.try(dir, ['rev-parse', '--verify', '--quiet', 'HEAD'])).stdout.trim();
  if (head !== candidate)
    return `its checkout is at ${head.slice(0, 12) || '(nothing)'}, not the candidate ${candidate.slice(0, 12)}`;
  const tip = (await tools.git.try(dir, ['rev-parse', '--verify', '--quiet', `refs/heads/${branch}`])).stdout.trim();
  if (tip !== candidate) return `it moved ${branch} to ${tip.slice(0, 12) || '(deleted)'}`;
  return undefined;
}

/** The checkout (and its branch) back at `commit`, untracked files gone (ignored build output stays). */
export async function restoreCheckout(tools: SideTools, dir: string, commit: string): Promise<void> {
  await must(tools, 'git reset', dir, ['reset', '--hard', '--quiet', commit]);
  await must(tools, 'git clean', dir, ['clean', '-ffd', '--quiet']);
}
