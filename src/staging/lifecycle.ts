// The operator's side of staging: status, promote, discard, gc. Promote is
// the only code path that moves the base branch, and only by fast-forward.
// Each is idempotent: re-running after a crash finishes or finds nothing to do.
import * as path from 'node:path';
import type { Ports } from '../ports.js';
import type { Git } from '../git/git.js';
import type { Board } from '../types.js';
import { FailedError } from '../errors.js';
import { fetchAndResolveBase, STAGING_BRANCH, stagingWorktree, publishStaging, type Refs } from './branch.js';
import { listTaskBranches } from '../drain/recovery.js';
import { removeTaskWorktree } from '../drain/task-worker.js';
import { readBoard } from '../board/read.js';
import { isParked, parkedReason } from '../board/parking.js';
import { workspaceStateDir } from '../paths.js';
import { lastDrainFile } from '../drain/records.js';
import { attemptsFile } from '../drain/attempts.js';
import { Mutex } from '../drain/mutex.js';
import { blockedReason } from '../agent/run-task.js';
import type { DrainSummary } from '../drain/types.js';

export interface Landing {
  readonly taskId: string;
  readonly commit: string;
  readonly subject: string;
  readonly gate: string;
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
  readonly lastDrain: DrainSummary | undefined;
}

/** Pure: landings from `git log --format=%H%x1f%s%x1f%b%x1e` output of merge commits. */
export function parseLandings(log: string): Landing[] {
  const landings: Landing[] = [];
  for (const record of log.split('\x1e')) {
    const [commit, subject, body] = record.replace(/^\n/, '').split('\x1f');
    if (!commit || !body) continue;
    const task = body.match(/^Agent-Runner-Task: (\S+)$/m)?.[1];
    if (!task) continue;
    landings.push({ taskId: task, commit: commit.trim(), subject: subject ?? '', gate: body.match(/^Agent-Runner-Gate: (.+)$/m)?.[1] ?? '' });
  }
  return landings;
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
  const base = (await git.resolve(workspace, refs.baseRef))!;
  const staging = await git.resolve(workspace, `refs/heads/${STAGING_BRANCH}`);
  let ahead = 0;
  let behind = 0;
  let landed: Landing[] = [];
  if (staging) {
    const counts = (await git.value(workspace, ['rev-list', '--left-right', '--count', `${base}...${staging}`])).split(/\s+/);
    behind = Number(counts[0]);
    ahead = Number(counts[1]);
    landed = parseLandings(await git.run(workspace, ['log', '--merges', '--reverse', '--format=%H%x1f%s%x1f%b%x1e', `${base}..${staging}`]));
  }
  const board = staging ? await stagingBoard(input) : undefined;
  const parked = (board?.tasks ?? []).filter(isParked).map((task) => ({ id: task.id, title: task.title, reason: parkedReason(task) }));
  const blocked = (board?.tasks ?? []).filter((task) => task.status === 'Blocked').map((task) => ({ id: task.id, title: task.title, reason: blockedReason(task) }));
  const lastText = await input.ports.fs.readTextIfExists(lastDrainFile(workspaceStateDir(input.stateDir, workspace)));
  let lastDrain: DrainSummary | undefined;
  try {
    lastDrain = lastText ? (JSON.parse(lastText) as DrainSummary) : undefined;
  } catch {
    lastDrain = undefined;
  }
  return { baseBranch: input.baseBranch, baseRef: refs.baseRef, base, staging, ahead, behind, landed, parked, blocked, lastDrain };
}

export interface PromoteResult {
  readonly promoted: boolean;
  readonly from: string;
  readonly to: string;
  readonly pushed: boolean;
  readonly detail: string;
}

async function pushBase(git: Git, workspace: string, refs: Refs, branch: string): Promise<boolean> {
  if (!refs.hasOrigin) return false;
  const local = await git.resolve(workspace, `refs/heads/${branch}`);
  const remote = await git.resolve(workspace, `refs/remotes/origin/${branch}`);
  if (local === remote) return false;
  const result = await git.try(workspace, ['push', '--quiet', 'origin', `refs/heads/${branch}:refs/heads/${branch}`]);
  if (result.exitCode !== 0) throw new FailedError(`push of ${branch} to origin failed: ${result.stderr.trim().split('\n').slice(-2).join(' ')}; fetch, then run promote again`);
  return true;
}

export async function promote(input: LifecycleInput): Promise<PromoteResult> {
  const { git, workspace, baseBranch } = input;
  const refs = await fetchAndResolveBase(git, workspace, baseBranch, input.fetch);
  const staging = await git.resolve(workspace, `refs/heads/${STAGING_BRANCH}`);
  if (!staging) throw new FailedError(`there is no ${STAGING_BRANCH} branch in ${workspace}: nothing to promote (run orchestrate first)`);
  const remoteBase = (await git.resolve(workspace, refs.baseRef))!;
  const localBase = await git.resolve(workspace, `refs/heads/${baseBranch}`);
  for (const [name, sha] of [[refs.baseRef.replace(/^refs\/(remotes|heads)\//, ''), remoteBase], [baseBranch, localBase]] as const) {
    if (sha && !(await git.isAncestor(workspace, sha, staging))) {
      throw new FailedError(
        `${name} has moved: it has commits that ${STAGING_BRANCH} does not, so promoting is not a fast-forward. Run orchestrate (it merges the base into ${STAGING_BRANCH} and re-gates), then promote again; or discard`,
      );
    }
  }
  const from = localBase ?? remoteBase;
  if (from !== staging) {
    const current = (await git.try(workspace, ['symbolic-ref', '--quiet', '--short', 'HEAD'])).stdout.trim();
    if (current === baseBranch) {
      // The base is checked out here: move it with the tree, and never over local edits.
      const dirty = (await git.run(workspace, ['status', '--porcelain', '--untracked-files=no'])).trim();
      if (dirty) throw new FailedError(`${workspace} has uncommitted changes on ${baseBranch}; commit or stash them, then promote again`);
      await git.run(workspace, ['merge', '--quiet', '--ff-only', `refs/heads/${STAGING_BRANCH}`]);
    } else {
      await git.run(workspace, ['update-ref', `refs/heads/${baseBranch}`, staging, ...(localBase ? [localBase] : [])]);
    }
  }
  const pushed = await pushBase(git, workspace, refs, baseBranch);
  const promoted = from !== staging;
  return { promoted, from, to: staging, pushed, detail: promoted ? `${baseBranch} fast-forwarded ${from.slice(0, 10)}..${staging.slice(0, 10)}` : `${baseBranch} is already at ${STAGING_BRANCH}` };
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
  const refs = new Mutex();
  for (const branch of branches) {
    await removeTaskWorktree({ git: input.git, ports: input.ports, workspace: input.workspace, refs }, branch.slice('auto/'.length), true);
  }
  return branches;
}

export async function discard(input: LifecycleInput): Promise<DiscardResult> {
  const { git, workspace, ports } = input;
  const refs = await fetchAndResolveBase(git, workspace, input.baseBranch, input.fetch);
  const base = (await git.resolve(workspace, refs.baseRef))!;
  const staging = await git.resolve(workspace, `refs/heads/${STAGING_BRANCH}`);
  const remoteBefore = refs.hasOrigin ? await git.resolve(workspace, `refs/remotes/origin/${STAGING_BRANCH}`) : undefined;
  const dir = stagingWorktree(workspace);
  if (await ports.fs.stat(path.join(dir, '.git'))) {
    if (await git.resolve(dir, 'MERGE_HEAD')) await git.run(dir, ['merge', '--abort']);
    await git.run(dir, ['reset', '--quiet', '--hard', base]);
    await git.run(dir, ['clean', '-fdq']);
  } else if (staging) {
    await git.run(workspace, ['branch', '--force', '--no-track', STAGING_BRANCH, base]);
  }
  const removedBranches = await removeAllTaskBranches(input);
  await ports.fs.remove(attemptsFile(workspaceStateDir(input.stateDir, workspace)));
  let pushed = false;
  if (staging && remoteBefore && remoteBefore !== base) {
    const publish = await publishStaging(git, workspace, refs, remoteBefore);
    if (!publish.pushed) throw new FailedError(`${STAGING_BRANCH} was reset locally, but ${publish.reason}; run discard again`);
    pushed = true;
  }
  return { discarded: Boolean(staging) && staging !== base, to: base, removedBranches, pushed };
}
