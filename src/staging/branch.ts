// The staging branch auto/work and its worktree: prepare it for a drain,
// report on it, promote it to the base branch, or discard it. Nothing here
// touches the base branch except promote.
import * as path from 'node:path';
import type { FsPort } from '../ports.js';
import type { Git } from '../git/git.js';
import type { WorkBranchMode } from '../types.js';
import { FailedError } from '../errors.js';
import { worktreesDir } from '../paths.js';

export const STAGING_BRANCH = 'auto/work';
export const TASK_BRANCH_PREFIX = 'auto/';

export function taskBranch(taskId: string): string {
  return `${TASK_BRANCH_PREFIX}${taskId}`;
}

export function stagingWorktree(workspace: string): string {
  return path.join(worktreesDir(workspace), 'staging');
}

export interface Refs {
  /** The ref the base is read from: origin/<base> when there is an origin, else <base>. */
  readonly baseRef: string;
  readonly hasOrigin: boolean;
}

export async function hasOrigin(git: Git, workspace: string): Promise<boolean> {
  const remotes = await git.run(workspace, ['remote']);
  return remotes.split('\n').some((name) => name.trim() === 'origin');
}

/** Fetches origin when there is one; returns where the base is read from. */
export async function fetchAndResolveBase(git: Git, workspace: string, base: string, fetch: boolean): Promise<Refs> {
  const origin = await hasOrigin(git, workspace);
  if (origin && fetch) await git.run(workspace, ['fetch', '--quiet', '--prune', 'origin']);
  const baseRef = origin && (await git.resolve(workspace, `refs/remotes/origin/${base}`)) ? `refs/remotes/origin/${base}` : `refs/heads/${base}`;
  if (!(await git.resolve(workspace, baseRef))) {
    throw new FailedError(`base branch "${base}" does not exist in ${workspace}; set "baseBranch" in .agent/config.json (or base in the registry)`);
  }
  return { baseRef, hasOrigin: origin };
}

/** Makes sure the staging worktree exists, is on auto/work, and is clean (recovering a killed merge). */
export async function ensureStagingWorktree(git: Git, fs: FsPort, workspace: string): Promise<{ dir: string; recovered: string[] }> {
  const dir = stagingWorktree(workspace);
  const recovered: string[] = [];
  await git.run(workspace, ['worktree', 'prune']);
  if (!(await fs.stat(path.join(dir, '.git')))) {
    await fs.remove(dir);
    await fs.mkdirp(path.dirname(dir), 0o700);
    await git.run(workspace, ['worktree', 'add', '--quiet', dir, STAGING_BRANCH]);
    return { dir, recovered };
  }
  if (await git.resolve(dir, 'MERGE_HEAD')) {
    await git.run(dir, ['merge', '--abort']);
    recovered.push('aborted a merge left half-done in the staging worktree');
  }
  const branch = (await git.try(dir, ['symbolic-ref', '--quiet', '--short', 'HEAD'])).stdout.trim();
  if (branch !== STAGING_BRANCH) {
    await git.run(dir, ['checkout', '--quiet', '--force', STAGING_BRANCH]);
    recovered.push(`staging worktree was on ${branch || 'a detached HEAD'}; put back on ${STAGING_BRANCH}`);
  }
  const dirty = (await git.run(dir, ['status', '--porcelain'])).trim();
  if (dirty) {
    await git.run(dir, ['reset', '--quiet', '--hard', 'HEAD']);
    await git.run(dir, ['clean', '-fdq']);
    recovered.push('cleaned uncommitted changes from the staging worktree');
  }
  return { dir, recovered };
}

export interface PrepareResult {
  readonly created: boolean;
  readonly mergedBase: boolean;
  readonly reset: boolean;
  readonly head: string;
  readonly baseHead: string;
  readonly stagingDir: string;
  readonly recovered: readonly string[];
}

/**
 * Creates auto/work from the base when missing (or from origin's auto/work,
 * which holds published, unpromoted work); otherwise merges the base in
 * (accumulate) or recreates it (reset, refused over unpromoted work without force).
 */
export async function prepareStaging(git: Git, fs: FsPort, workspace: string, refs: Refs, mode: WorkBranchMode, force: boolean): Promise<PrepareResult> {
  const baseHead = (await git.resolve(workspace, refs.baseRef))!;
  let created = false;
  let reset = false;
  let mergedBase = false;
  if (!(await git.resolve(workspace, `refs/heads/${STAGING_BRANCH}`))) {
    const published = refs.hasOrigin ? await git.resolve(workspace, `refs/remotes/origin/${STAGING_BRANCH}`) : undefined;
    await git.run(workspace, ['branch', '--no-track', STAGING_BRANCH, published ?? baseHead]);
    created = true;
  }
  const { dir, recovered } = await ensureStagingWorktree(git, fs, workspace);
  const stagingHead = (await git.resolve(dir, 'HEAD'))!;

  if (mode === 'reset' && !created && stagingHead !== baseHead) {
    const unpromoted = (await git.run(dir, ['rev-list', '--count', `${baseHead}..HEAD`])).trim();
    if (unpromoted !== '0' && !force) {
      throw new FailedError(
        `auto/work has ${unpromoted} commit(s) not on the base branch (landed, unpromoted work); workBranchMode "reset" would throw them away. Run \`agent-runner promote\` or \`agent-runner discard\` first, or pass --force`,
      );
    }
    await git.run(dir, ['reset', '--quiet', '--hard', baseHead]);
    reset = true;
  } else if (!(await git.isAncestor(dir, baseHead, 'HEAD'))) {
    const merge = await git.try(dir, ['merge', '--no-ff', '--no-edit', '-m', `Merge ${refs.baseRef.replace(/^refs\/(heads|remotes)\//, '')} into ${STAGING_BRANCH}`, baseHead]);
    if (merge.exitCode !== 0) {
      const conflicts = (await git.try(dir, ['diff', '--name-only', '--diff-filter=U'])).stdout.trim().split('\n').filter(Boolean);
      await git.try(dir, ['merge', '--abort']);
      throw new FailedError(
        `merging the base branch into ${STAGING_BRANCH} conflicts${conflicts.length ? ` in ${conflicts.join(', ')}` : ''}; nothing was changed. Resolve it by hand in ${dir} (merge the base, commit), or run \`agent-runner discard\``,
      );
    }
    mergedBase = true;
  }
  const head = (await git.resolve(dir, 'HEAD'))!;
  return { created, mergedBase, reset, head, baseHead, stagingDir: dir, recovered };
}

export interface PublishResult {
  readonly pushed: boolean;
  readonly reason?: string;
}

/** Pushes auto/work to origin with a lease on what origin had when we fetched. */
export async function publishStaging(git: Git, workspace: string, refs: Refs, expectedRemote: string | undefined): Promise<PublishResult> {
  if (!refs.hasOrigin) return { pushed: false, reason: 'no origin remote' };
  const lease = `--force-with-lease=refs/heads/${STAGING_BRANCH}:${expectedRemote ?? ''}`;
  const result = await git.try(workspace, ['push', '--quiet', lease, 'origin', `refs/heads/${STAGING_BRANCH}:refs/heads/${STAGING_BRANCH}`]);
  if (result.exitCode !== 0) {
    return { pushed: false, reason: `push of ${STAGING_BRANCH} refused: ${result.stderr.trim().split('\n').slice(-2).join(' ')}` };
  }
  return { pushed: true };
}

/** Whether a branch's tip is already contained in auto/work. */
export function isMergedIntoStaging(git: Git, cwd: string, ref: string): Promise<boolean> {
  return git.isAncestor(cwd, ref, `refs/heads/${STAGING_BRANCH}`);
}
