// The operator's side of staging: status, promote, discard, gc. Promote is
// the only code path that moves the base branch, and only by fast-forward.
// Each is idempotent: re-running after a crash finishes or finds nothing to do.
import * as path from 'node:path';
import type { Ports } from '../ports.js';
import type { Git } from '../git/git.js';
import type { Board, TaskId } from '../types.js';
import { FailedError } from '../errors.js';
import { fetchAndResolveBase, publishedStaging, publishStaging, type Refs } from './branch.js';
import { STAGING_BRANCH, STAGING_REF, taskIdOfBranch } from './names.js';
import { listTaskBranches, removeTaskWorktree, type RefsLock } from './task-branches.js';
import { changesMatchTarget, promoteVerdict, shouldPushBase } from './verdict.js';
import { readBoard } from '../board/read.js';
import { blockedReason, isParked, parkedReason } from '../board/parking.js';
import { BLOCKED_STATUS, sameStatus } from '../board/status.js';
import { attemptsFile, stagingWorktree, workspaceStateDir } from '../paths.js';
import {
  createBranch,
  currentBranch,
  headRef,
  isAncestor,
  remoteRef,
  resolveCommit,
  shortRefName,
  updateRef,
} from '../git/refs.js';
import { aheadBehind, firstParentMergesMatching, mergeLog } from '../git/history.js';
import { sameTaskId } from '../board/task-id.js';
import { abortMergeOrThrow, fastForward, mergeInProgress } from '../git/merge.js';
import { changedPaths, isDirty, resetAndClean, resetHard } from '../git/tree.js';
import { changedBetween } from '../git/diff.js';
import { blobsAt, worktreeBlobs } from '../git/objects.js';
import { pushBranch } from '../git/remote.js';

export interface Landing {
  readonly taskId: string;
  readonly commit: string;
  readonly subject: string;
  readonly gate: string;
  /** The run that landed it (its Agent-Runner-Run trailer), when the commit names one. */
  readonly runId?: string;
  /** How review approved it (its Agent-Runner-Review trailer), when a review ran. */
  readonly review?: string;
}

export interface StagingStatus {
  readonly baseBranch: string;
  readonly baseRef: string;
  readonly base: string;
  readonly staging: string | undefined;
  readonly ahead: number;
  readonly behind: number;
  readonly landed: readonly Landing[];
  readonly parked: readonly { id: string; title: string; reason: string }[];
  readonly blocked: readonly { id: string; title: string; reason: string }[];
}

/** How landings are read back: hash, subject and body of each merge commit. */
export const LANDING_LOG_FORMAT = '%H%x1f%s%x1f%b%x1e';

/** Pure: landings from `git log --format=LANDING_LOG_FORMAT` output of merge commits. */
export function parseLandings(log: string): Landing[] {
  const landings: Landing[] = [];
  for (const record of log.split('\x1e')) {
    const [commit, subject, body] = record.replace(/^\n/, '').split('\x1f');
    if (!commit || !body) continue;
    const task = body.match(/^Agent-Runner-Task: (\S+)$/m)?.[1];
    if (!task) continue;
    const runId = body.match(/^Agent-Runner-Run: (\S+)$/m)?.[1];
    const review = body.match(/^Agent-Runner-Review: (.+)$/m)?.[1];
    landings.push({
      taskId: task,
      commit: commit.trim(),
      subject: subject ?? '',
      gate: body.match(/^Agent-Runner-Gate: (.+)$/m)?.[1] ?? '',
      ...(runId ? { runId } : {}),
      ...(review ? { review } : {}),
    });
  }
  return landings;
}

/** Landings of one task looked at: a task lands again only after it was reopened, so a few are plenty. */
const MAX_TASK_LANDINGS = 50;

/**
 * The newest landing of `taskId` on auto/work's first-parent line (only the integrator makes the merges there; a
 * trailer an agent wrote into its own commits never counts), or undefined when none names it.
 */
export async function landingOf(git: Git, cwd: string, taskId: TaskId): Promise<Landing | undefined> {
  const log = await firstParentMergesMatching(
    git,
    cwd,
    STAGING_REF,
    `Agent-Runner-Task: ${taskId}`,
    MAX_TASK_LANDINGS,
    LANDING_LOG_FORMAT,
  );
  return parseLandings(log).find((landing) => sameTaskId(landing.taskId, taskId));
}

export interface LifecycleInput {
  readonly ports: Ports;
  readonly git: Git;
  readonly workspace: string;
  readonly baseBranch: string;
  readonly stateDir: string;
  readonly fetch: boolean;
}

async function stagingBoard(input: LifecycleInput): Promise<Board | undefined> {
  const dir = stagingWorktree(input.workspace);
  if (!(await input.ports.fs.stat(path.join(dir, 'backlog')))) return undefined;
  return readBoard(input.ports.fs, dir);
}

export async function stagingStatus(input: LifecycleInput): Promise<StagingStatus> {
  const { git, workspace } = input;
  const refs = await fetchAndResolveBase(git, workspace, input.baseBranch, input.fetch);
  const base = (await resolveCommit(git, workspace, refs.baseRef))!;
  const staging = await resolveCommit(git, workspace, STAGING_REF);
  let ahead = 0;
  let behind = 0;
  let landed: Landing[] = [];
  if (staging) {
    const counts = await aheadBehind(git, workspace, base, staging);
    behind = counts.left;
    ahead = counts.right;
    landed = parseLandings(await mergeLog(git, workspace, `${base}..${staging}`, LANDING_LOG_FORMAT));
  }
  const board = staging ? await stagingBoard(input) : undefined;
  const parked = (board?.tasks ?? [])
    .filter(isParked)
    .map((task) => ({ id: task.id, title: task.title, reason: parkedReason(task) }));
  const blocked = (board?.tasks ?? [])
    .filter((task) => sameStatus(task.status, BLOCKED_STATUS))
    .map((task) => ({ id: task.id, title: task.title, reason: blockedReason(task) }));
  return { baseBranch: input.baseBranch, baseRef: refs.baseRef, base, staging, ahead, behind, landed, parked, blocked };
}

export interface PromoteResult {
  readonly promoted: boolean;
  readonly from: string;
  readonly to: string;
  readonly pushed: boolean;
  readonly detail: string;
}

async function pushBase(git: Git, workspace: string, refs: Refs, branch: string): Promise<boolean> {
  const local = await resolveCommit(git, workspace, headRef(branch));
  const remote = await resolveCommit(git, workspace, remoteRef('origin', branch));
  if (!shouldPushBase({ hasOrigin: refs.hasOrigin, local, remote })) return false;
  const result = await pushBranch(git, workspace, 'origin', branch);
  if (!result.ok)
    throw new FailedError(
      `push of ${branch} to origin failed: ${result.stderr.trim().split('\n').slice(-2).join(' ')}; fetch, then run promote again`,
    );
  return true;
}

/** Untracked files of the checkout that moving HEAD to `to` would write over. */
async function untrackedOverwrittenBy(git: Git, workspace: string, to: string): Promise<string[]> {
  // NUL-separated on both sides: a name git would quote (beyond ASCII, a quote, a newline) compares as itself.
  const untracked = (await changedPaths(git, workspace)).filter((entry) => entry.untracked).map((entry) => entry.path);
  if (!untracked.length) return [];
  const changed = new Set(await changedBetween(git, workspace, 'HEAD', to));
  return untracked.filter((file) => changed.has(file));
}

/**
 * `expectStaging`: the auto/work commit the operator confirmed (the
 * dashboard's confirmation lists what lands up to it); promote refuses when
 * auto/work has moved since, so what lands is exactly what was shown.
 */
export async function promote(input: LifecycleInput, expectStaging?: string): Promise<PromoteResult> {
  const { git, workspace, baseBranch } = input;
  const refs = await fetchAndResolveBase(git, workspace, baseBranch, input.fetch);
  const staging = await resolveCommit(git, workspace, STAGING_REF);
  if (expectStaging !== undefined && staging !== expectStaging) {
    throw new FailedError(
      `${STAGING_BRANCH} is at ${staging?.slice(0, 12) ?? 'nothing'}, not at the ${expectStaging.slice(0, 12)} you confirmed: it moved since; look again and promote`,
    );
  }
  const remoteBase = (await resolveCommit(git, workspace, refs.baseRef))!;
  const localBase = await resolveCommit(git, workspace, headRef(baseBranch));
  const bases = [];
  for (const [name, sha] of [
    [shortRefName(refs.baseRef), remoteBase],
    [baseBranch, localBase],
  ] as const) {
    if (sha) bases.push({ name, sha, contained: staging ? await isAncestor(git, workspace, sha, staging) : false });
  }
  const onBase = (await currentBranch(git, workspace)) === baseBranch;
  // Only the base's own checkout matters: never move it over local edits.
  const dirty = onBase && (await isDirty(git, workspace, 'no'));
  const changesAreStaging = onBase && staging !== undefined && (await checkoutHoldsOnly(git, workspace, staging));
  const untrackedInTheWay = onBase && staging ? await untrackedOverwrittenBy(git, workspace, staging) : [];
  const verdict = promoteVerdict({
    workspace,
    baseBranch,
    staging,
    bases,
    localBase,
    remoteBase,
    checkout: { onBase, dirty, changesAreStaging, untrackedInTheWay },
  });
  if (verdict.kind === 'refuse') throw new FailedError(verdict.message);
  if (verdict.kind === 'fast-forward' && verdict.how === 'checkout') await fastForward(git, workspace, STAGING_REF);
  if (verdict.kind === 'fast-forward' && verdict.how === 'finish-interrupted')
    await resetHard(git, workspace, verdict.to);
  if (verdict.kind === 'fast-forward' && verdict.how === 'ref')
    await updateRef(git, workspace, headRef(baseBranch), verdict.to, localBase);
  const pushed = await pushBase(git, workspace, refs, baseBranch);
  if (verdict.kind === 'nothing-to-do')
    return {
      promoted: false,
      from: verdict.at,
      to: verdict.at,
      pushed,
      detail: `${baseBranch} is already at ${STAGING_BRANCH}`,
    };
  const finished =
    verdict.how === 'finish-interrupted'
      ? ' (finishing the fast-forward an interrupted promote left half-done in the checkout)'
      : '';
  return {
    promoted: true,
    from: verdict.from,
    to: verdict.to,
    pushed,
    detail: `${baseBranch} fast-forwarded ${verdict.from.slice(0, 10)}..${verdict.to.slice(0, 10)}${finished}`,
  };
}

/** More changed paths than this is not a half-done fast-forward worth hashing: the checkout is just dirty. */
const MAX_LEFTOVER_PATHS = 2000;

/** Whether every change in the checkout is `target`'s own version of the file (see promoteVerdict). */
async function checkoutHoldsOnly(git: Git, workspace: string, target: string): Promise<boolean> {
  const changed = await changedPaths(git, workspace);
  if (!changed.length || changed.length > MAX_LEFTOVER_PATHS) return false;
  const present = changed.filter((entry) => !entry.deleted).map((entry) => entry.path);
  const paths = changed.map((entry) => entry.path);
  return changesMatchTarget(
    changed,
    await worktreeBlobs(git, workspace, present),
    await blobsAt(git, workspace, target, paths),
  );
}

export interface DiscardResult {
  readonly discarded: boolean;
  readonly to: string;
  readonly removedBranches: readonly string[];
  readonly pushed: boolean;
}

/** Removes every task worktree and branch (parked ones too); nothing may be running. */
export async function removeAllTaskBranches(input: LifecycleInput): Promise<string[]> {
  const branches = await listTaskBranches(input.git, input.workspace);
  // One at a time already: nothing else may be running.
  const refs: RefsLock = { run: (work) => work() };
  for (const branch of branches) {
    await removeTaskWorktree(
      { git: input.git, ports: input.ports, workspace: input.workspace, refs },
      taskIdOfBranch(branch),
      true,
    );
  }
  return branches;
}

export async function discard(input: LifecycleInput): Promise<DiscardResult> {
  const { git, workspace, ports } = input;
  const refs = await fetchAndResolveBase(git, workspace, input.baseBranch, input.fetch);
  const base = (await resolveCommit(git, workspace, refs.baseRef))!;
  const staging = await resolveCommit(git, workspace, STAGING_REF);
  const remoteBefore = await publishedStaging(git, workspace, refs);
  const dir = stagingWorktree(workspace);
  if (await ports.fs.stat(path.join(dir, '.git'))) {
    if (await mergeInProgress(git, dir)) await abortMergeOrThrow(git, dir);
    await resetAndClean(git, dir, base);
  } else if (staging) {
    await createBranch(git, workspace, STAGING_BRANCH, base, { force: true });
  }
  const removedBranches = await removeAllTaskBranches(input);
  await ports.fs.remove(attemptsFile(workspaceStateDir(input.stateDir, workspace)));
  let pushed = false;
  if (staging && remoteBefore && remoteBefore !== base) {
    const publish = await publishStaging(git, workspace, refs, remoteBefore, base);
    if (!publish.pushed)
      throw new FailedError(`${STAGING_BRANCH} was reset locally, but ${publish.reason}; run discard again`);
    pushed = true;
  }
  return { discarded: Boolean(staging) && staging !== base, to: base, removedBranches, pushed };
}
