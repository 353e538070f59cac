// Promote through a pull request: open or update the PR from the published
// auto/work into the base, and merge it only when every check on that exact
// staging commit is green. Read (git + GitHub) -> decide (github/merge-verdict,
// pure) -> apply (one API call). The PR is found by its head branch, so a
// second call never opens a duplicate.
import type { GitHubApi, MergeMethod, PullRequest, CommitCheck, RepoSlug } from '../github/api.js';
import { pullRequestText } from '../github/pr-text.js';
import { mergeVerdict, type MergeVerdict } from '../github/merge-verdict.js';
import { ExitError, EXIT, FailedError } from '../errors.js';
import { STAGING_BRANCH } from './names.js';
import { stagingStatus, type LifecycleInput, type StagingStatus } from './lifecycle.js';
import { fetchAndResolveBase, publishedStaging, publishStaging } from './branch.js';
import { createBranch, resolveCommit } from '../git/refs.js';
import { resetAndClean } from '../git/tree.js';
import { stagingWorktree } from '../paths.js';
import { readBoard } from '../board/read.js';

export interface PullRequestView {
  readonly number: number;
  readonly url: string;
  readonly state: 'open' | 'closed';
  readonly merged: boolean;
  readonly mergeable: boolean | null;
  readonly headSha: string;
  readonly checks: readonly {
    readonly name: string;
    readonly kind: CommitCheck['kind'];
    readonly state: CommitCheck['state'];
    readonly conclusion: string;
  }[];
}

export interface PullRequestSync {
  readonly action: 'opened' | 'updated' | 'nothing-to-promote';
  readonly stagingSha: string | undefined;
  readonly pr: PullRequestView | undefined;
  readonly detail: string;
}

export interface PullRequestMerge extends Omit<PullRequestSync, 'action'> {
  readonly action: PullRequestSync['action'] | 'merged';
  readonly verdict: MergeVerdict['kind'];
  readonly reasons: readonly string[];
  readonly mergeSha?: string;
}

export interface GitHubTarget {
  readonly api: GitHubApi;
  readonly slug: RepoSlug;
}

export function viewOf(pr: PullRequest, checks: readonly CommitCheck[]): PullRequestView {
  return {
    number: pr.number,
    url: pr.url,
    state: pr.state,
    merged: pr.merged,
    mergeable: pr.mergeable,
    headSha: pr.headSha,
    checks: checks.map((check) => ({
      name: check.name,
      kind: check.kind,
      state: check.state,
      conclusion: check.conclusion,
    })),
  };
}

async function taskTitles(input: LifecycleInput): Promise<Map<string, string>> {
  try {
    const board = await readBoard(input.ports.fs, stagingWorktree(input.workspace));
    return new Map(board.tasks.map((task) => [task.id, task.title]));
  } catch {
    return new Map();
  }
}

async function stagingText(input: LifecycleInput, status: StagingStatus, sha: string) {
  const titles = await taskTitles(input);
  return pullRequestText({
    baseBranch: status.baseBranch,
    stagingBranch: STAGING_BRANCH,
    stagingSha: sha,
    landed: status.landed.map((landing) => ({
      taskId: landing.taskId,
      title: titles.get(landing.taskId) ?? landing.subject.replace(`Land ${landing.taskId}: `, ''),
      gate: landing.gate || 'passed',
      commit: landing.commit,
    })),
    parked: status.parked,
  });
}

/** Staging as origin has it; refuses when local staging was not published (the PR would show something else). */
async function publishedHead(input: LifecycleInput, status: StagingStatus): Promise<string> {
  const refs = { baseRef: status.baseRef, hasOrigin: true };
  const published = await publishedStaging(input.git, input.workspace, refs);
  if (!published)
    throw new FailedError(
      `${STAGING_BRANCH} is not on origin yet; a drain publishes it (or push it: git push origin ${STAGING_BRANCH})`,
    );
  if (status.staging && published !== status.staging) {
    throw new FailedError(
      `${STAGING_BRANCH} on origin (${published.slice(0, 12)}) is not the local ${STAGING_BRANCH} (${status.staging.slice(0, 12)}); the next drain publishes it, then run promote --pr again`,
    );
  }
  return published;
}

/** Opens the staging PR, or rewrites the open one's title and body. */
export async function syncPullRequest(
  input: LifecycleInput,
  target: GitHubTarget,
): Promise<PullRequestSync & { readonly raw?: PullRequest; readonly status: StagingStatus }> {
  const status = await stagingStatus(input);
  if (!status.staging || status.ahead === 0) {
    const open = await target.api.findOpenPull(target.slug, STAGING_BRANCH, input.baseBranch);
    return {
      action: 'nothing-to-promote',
      stagingSha: status.staging,
      pr: open ? viewOf(open, []) : undefined,
      detail: `${STAGING_BRANCH} has nothing ${input.baseBranch} lacks`,
      status,
    };
  }
  const head = await publishedHead(input, status);
  const text = await stagingText(input, status, head);
  const { api, slug } = target;
  let existing = await api.findOpenPull(slug, STAGING_BRANCH, input.baseBranch);
  if (!existing) {
    const created = await api.createPull(slug, STAGING_BRANCH, input.baseBranch, text);
    if (created !== 'exists')
      return {
        action: 'opened',
        stagingSha: head,
        pr: viewOf(created, []),
        raw: created,
        detail: `opened pull request #${created.number}: ${created.url}`,
        status,
      };
    // Someone (a parallel call) opened it between our look and our create.
    existing = await api.findOpenPull(slug, STAGING_BRANCH, input.baseBranch);
    if (!existing)
      throw new FailedError(
        `GitHub says a pull request from ${STAGING_BRANCH} into ${input.baseBranch} exists, but none is open; look at ${slug.owner}/${slug.repo}'s pull requests`,
      );
  }
  const updated = await api.updatePull(slug, existing.number, text);
  return {
    action: 'updated',
    stagingSha: head,
    pr: viewOf(updated, []),
    raw: updated,
    detail: `updated pull request #${updated.number}: ${updated.url}`,
    status,
  };
}

/** The PR with the checks on staging's head, for status. */
export async function pullRequestState(target: GitHubTarget, baseBranch: string): Promise<PullRequestView | undefined> {
  const pr = await target.api.findOpenPull(target.slug, STAGING_BRANCH, baseBranch);
  if (!pr) return undefined;
  return viewOf(pr, await target.api.checksOn(target.slug, pr.headSha));
}

/**
 * After a squash or rebase merge the base has new commits with staging's
 * content but not staging's commits: start staging again from the new base
 * so the next drain does not carry the old landings forward.
 */
async function restartStaging(input: LifecycleInput): Promise<void> {
  const refs = await fetchAndResolveBase(input.git, input.workspace, input.baseBranch, true);
  const base = (await resolveCommit(input.git, input.workspace, refs.baseRef))!;
  const before = await publishedStaging(input.git, input.workspace, refs);
  const dir = stagingWorktree(input.workspace);
  if (await input.ports.fs.stat(`${dir}/.git`)) await resetAndClean(input.git, dir, base);
  else await createBranch(input.git, input.workspace, STAGING_BRANCH, base, { force: true });
  const publish = await publishStaging(input.git, input.workspace, refs, before, base);
  if (!publish.pushed)
    throw new FailedError(
      `merged, but ${STAGING_BRANCH} could not be restarted from ${input.baseBranch}: ${publish.reason}; run agent-runner discard`,
    );
}

/** The exit a merge that did not happen ends with: 75 to try again later, 1 when waiting will not help. */
export class MergeNotDoneError extends ExitError {
  constructor(
    message: string,
    exitCode: typeof EXIT.busy | typeof EXIT.failed,
    readonly result: PullRequestMerge,
  ) {
    super(message, exitCode);
    this.name = 'MergeNotDoneError';
  }
}

/** Merges the staging PR when every check on exactly staging's head is green and GitHub says it is mergeable. */
export async function mergePullRequest(
  input: LifecycleInput,
  target: GitHubTarget,
  method: MergeMethod,
): Promise<PullRequestMerge> {
  const sync = await syncPullRequest(input, target);
  if (sync.action === 'nothing-to-promote' || !sync.raw || !sync.stagingSha) {
    return {
      action: sync.action,
      stagingSha: sync.stagingSha,
      pr: sync.pr,
      detail: sync.detail,
      verdict: 'refuse',
      reasons: [sync.detail],
    };
  }
  const { api, slug } = target;
  const expected = sync.stagingSha;
  const pr = await api.getPull(slug, sync.raw.number);
  const base = await api.getBranch(slug, input.baseBranch);
  if (!base)
    throw new FailedError(
      `the base branch "${input.baseBranch}" does not exist on GitHub (${slug.owner}/${slug.repo})`,
    );
  const checks = await api.checksOn(slug, expected);
  const verdict = mergeVerdict({ pr, expectedSha: expected, checks, requiredChecks: base.requiredChecks });
  const view = viewOf(pr, checks);
  const result = (change: Partial<PullRequestMerge>): PullRequestMerge => ({
    action: sync.action,
    stagingSha: expected,
    pr: view,
    detail: sync.detail,
    verdict: verdict.kind,
    reasons: verdict.kind === 'merge' ? [] : verdict.reasons,
    ...change,
  });
  if (verdict.kind === 'wait')
    throw new MergeNotDoneError(
      `not merging #${pr.number} yet: ${verdict.reasons.join('; ')}; try again later`,
      EXIT.busy,
      result({}),
    );
  if (verdict.kind === 'refuse')
    throw new MergeNotDoneError(`not merging #${pr.number}: ${verdict.reasons.join('; ')}`, EXIT.failed, result({}));
  const text = await stagingText(input, sync.status, expected);
  const answer = await api.mergePull(slug, pr.number, expected, method, text);
  if (!answer.merged) {
    const why =
      answer.status === 409
        ? `the pull request's head moved away from ${expected.slice(0, 12)} while merging (GitHub: ${answer.message}); nothing was merged, run promote --pr --merge again`
        : `GitHub refused the merge (${answer.status}: ${answer.message})`;
    throw new MergeNotDoneError(
      `not merged #${pr.number}: ${why}`,
      EXIT.failed,
      result({ verdict: 'refuse', reasons: [why] }),
    );
  }
  if (method !== 'merge') await restartStaging(input);
  return result({
    action: 'merged',
    mergeSha: answer.sha,
    detail: `merged pull request #${pr.number} (${method}) at ${answer.sha.slice(0, 12)}: ${pr.url}`,
    pr: { ...view, state: 'closed', merged: true },
  });
}
