// The staging branch auto/work and its worktree: prepare it for a drain and
// publish it. Nothing here touches the base branch (promote does, in
// lifecycle.ts). Each step gathers facts, asks verdict.ts, applies the answer.
import * as path from 'node:path';
import type { FsPort } from '../ports.js';
import type { Git } from '../git/git.js';
import type { WorkBranchMode } from '../types.js';
import { FailedError } from '../errors.js';
import { stagingWorktree } from '../paths.js';
import { STAGING_BRANCH, STAGING_REF } from './names.js';
import {
  baseConflictMessage,
  baseStep,
  nextWorktreeRepair,
  stagingStart,
  type WorktreeFacts,
  type WorktreeRepair,
} from './verdict.js';
import {
  createBranch,
  currentBranch,
  headRef,
  isAncestor,
  remoteRef,
  resolveCommit,
  shortRefName,
} from '../git/refs.js';
import { addWorktree, pruneWorktreesOrThrow } from '../git/worktree.js';
import { abortMerge, abortMergeOrThrow, conflictedFiles, mergeInProgress, mergeWithMessage } from '../git/merge.js';
import { checkoutForce, isDirty, resetAndClean, resetHard } from '../git/tree.js';
import { fetchPrune, hasRemote, pushWithLease } from '../git/remote.js';
import { countCommits } from '../git/history.js';

export interface Refs {
  /** The ref the base is read from: origin/<base> when there is an origin, else <base>. */
  readonly baseRef: string;
  readonly hasOrigin: boolean;
}

/** Fetches origin when there is one; returns where the base is read from. */
export async function fetchAndResolveBase(git: Git, workspace: string, base: string, fetch: boolean): Promise<Refs> {
  const origin = await hasRemote(git, workspace, 'origin');
  if (origin && fetch) await fetchPrune(git, workspace, 'origin');
  const baseRef =
    origin && (await resolveCommit(git, workspace, remoteRef('origin', base)))
      ? remoteRef('origin', base)
      : headRef(base);
  if (!(await resolveCommit(git, workspace, baseRef))) {
    throw new FailedError(
      `base branch "${base}" does not exist in ${workspace}; set "baseBranch" in .agent/config.json (or base in the registry)`,
    );
  }
  return { baseRef, hasOrigin: origin };
}

/** auto/work as origin has it (published work), when there is an origin. */
export function publishedStaging(git: Git, workspace: string, refs: Refs): Promise<string | undefined> {
  return refs.hasOrigin
    ? resolveCommit(git, workspace, remoteRef('origin', STAGING_BRANCH))
    : Promise.resolve(undefined);
}

async function worktreeFacts(git: Git, fs: FsPort, dir: string): Promise<WorktreeFacts> {
  if (!(await fs.stat(path.join(dir, '.git')))) return { checkedOut: false };
  return {
    checkedOut: true,
    mergeInProgress: await mergeInProgress(git, dir),
    branch: await currentBranch(git, dir),
    dirty: await isDirty(git, dir),
  };
}

async function repairWorktree(
  git: Git,
  fs: FsPort,
  workspace: string,
  dir: string,
  repair: WorktreeRepair,
): Promise<void> {
  switch (repair.kind) {
    case 'add':
      await fs.remove(dir);
      await fs.mkdirp(path.dirname(dir), 0o700);
      return addWorktree(git, workspace, { dir, commitish: STAGING_BRANCH });
    case 'abort-merge':
      return abortMergeOrThrow(git, dir);
    case 'checkout':
      return checkoutForce(git, dir, STAGING_BRANCH);
    case 'clean':
      return resetAndClean(git, dir, 'HEAD');
    case 'ready':
      return;
  }
}

/** Makes sure the staging worktree exists, is on auto/work, and is clean (recovering a killed merge). */
async function ensureStagingWorktree(
  git: Git,
  fs: FsPort,
  workspace: string,
): Promise<{ dir: string; recovered: string[] }> {
  const dir = stagingWorktree(workspace);
  const recovered: string[] = [];
  const done = new Set<WorktreeRepair['kind']>();
  await pruneWorktreesOrThrow(git, workspace);
  for (;;) {
    const repair = nextWorktreeRepair(await worktreeFacts(git, fs, dir), done);
    if (repair.kind === 'ready') return { dir, recovered };
    await repairWorktree(git, fs, workspace, dir, repair);
    done.add(repair.kind);
    if ('note' in repair) recovered.push(repair.note);
  }
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
export async function prepareStaging(
  git: Git,
  fs: FsPort,
  workspace: string,
  refs: Refs,
  mode: WorkBranchMode,
  force: boolean,
): Promise<PrepareResult> {
  const baseHead = (await resolveCommit(git, workspace, refs.baseRef))!;
  const exists = (await resolveCommit(git, workspace, STAGING_REF)) !== undefined;
  const start = stagingStart({
    exists,
    published: exists ? undefined : await publishedStaging(git, workspace, refs),
    baseHead,
  });
  if (start.kind === 'create') await createBranch(git, workspace, STAGING_BRANCH, start.from);
  const created = start.kind === 'create';
  const { dir, recovered } = await ensureStagingWorktree(git, fs, workspace);
  const stagingHead = (await resolveCommit(git, dir, 'HEAD'))!;

  const step = baseStep({
    mode,
    created,
    stagingHead,
    baseHead,
    unpromoted: await countCommits(git, dir, `${baseHead}..HEAD`),
    baseContained: await isAncestor(git, dir, baseHead, 'HEAD'),
    force,
    baseName: shortRefName(refs.baseRef),
    stagingDir: dir,
  });
  if (step.kind === 'refuse') throw new FailedError(step.message);
  if (step.kind === 'reset') await resetHard(git, dir, baseHead);
  if (step.kind === 'merge') {
    const merge = await mergeWithMessage(git, dir, baseHead, step.message);
    if (!merge.ok) {
      const conflicts = await conflictedFiles(git, dir);
      await abortMerge(git, dir);
      throw new FailedError(baseConflictMessage(conflicts, dir));
    }
  }
  const head = (await resolveCommit(git, dir, 'HEAD'))!;
  return {
    created,
    mergedBase: step.kind === 'merge',
    reset: step.kind === 'reset',
    head,
    baseHead,
    stagingDir: dir,
    recovered,
  };
}

export interface PublishResult {
  readonly pushed: boolean;
  readonly reason?: string;
}

/**
 * Pushes `tip` (the commit the runner wrote last, never whatever the branch
 * points at now) as auto/work to origin, with a lease on what origin had when we fetched.
 */
export async function publishStaging(
  git: Git,
  workspace: string,
  refs: Refs,
  expectedRemote: string | undefined,
  tip: string,
): Promise<PublishResult> {
  if (!refs.hasOrigin) return { pushed: false, reason: 'no origin remote' };
  const result = await pushWithLease(git, workspace, 'origin', STAGING_BRANCH, expectedRemote, tip);
  if (!result.ok)
    return {
      pushed: false,
      reason: `push of ${STAGING_BRANCH} refused: ${result.stderr.trim().split('\n').slice(-2).join(' ')}`,
    };
  return { pushed: true };
}

/**
 * Where a task branch stands against auto/work: landed (a landing merge on
 * auto/work's first-parent line has the branch's tip as its second parent),
 * empty (contained in auto/work without having landed: it has no commits of
 * its own), or not landed.
 */
export async function branchOnStaging(
  git: Git,
  cwd: string,
  branch: string,
): Promise<'landed' | 'empty' | 'not-landed'> {
  const tip = await resolveCommit(git, cwd, branch);
  if (!tip || !(await isAncestor(git, cwd, tip, STAGING_REF))) return 'not-landed';
  const parents = await git.run(cwd, [
    'log',
    '--first-parent',
    '--merges',
    '--fixed-strings',
    `--grep=Agent-Runner-Branch: ${branch}`,
    '--format=%P',
    '-n',
    '50',
    STAGING_REF,
    '--',
  ]);
  return parents.split('\n').some((line) => line.split(' ')[1] === tip) ? 'landed' : 'empty';
}
