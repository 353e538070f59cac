// Whether a staging pull request may be merged now. Pure: the PR, the commit
// staging is at, every check and status on that exact commit, and the checks
// the base's protection requires. Waiting (exit 75) is not failing (exit 1).
import type { CommitCheck, PullRequest } from './api.js';

export type MergeVerdict =
  | { readonly kind: 'merge' }
  /** Try again later: something has not reported or GitHub is still computing. */
  | { readonly kind: 'wait'; readonly reasons: readonly string[] }
  /** Will not become mergeable by waiting. */
  | { readonly kind: 'refuse'; readonly reasons: readonly string[] };

export interface MergeFacts {
  readonly pr: PullRequest;
  /** The staging commit the operator is promoting. */
  readonly expectedSha: string;
  readonly checks: readonly CommitCheck[];
  readonly requiredChecks: readonly string[];
}

const short = (sha: string) => sha.slice(0, 12);

export function mergeVerdict(facts: MergeFacts): MergeVerdict {
  const { pr, expectedSha, checks } = facts;
  if (pr.merged) return { kind: 'refuse', reasons: [`pull request #${pr.number} is already merged`] };
  if (pr.state !== 'open')
    return { kind: 'refuse', reasons: [`pull request #${pr.number} is closed; run promote --pr to open a new one`] };
  if (pr.headSha !== expectedSha) {
    return {
      kind: 'refuse',
      reasons: [
        `the pull request's head moved: it is at ${short(pr.headSha)}, staging is at ${short(expectedSha)}; run promote --pr again once both agree (fetch, or wait for the next published drain)`,
      ],
    };
  }
  const red = checks.filter((check) => check.state === 'failure');
  if (red.length)
    return {
      kind: 'refuse',
      reasons: red.map(
        (check) =>
          `${check.kind} "${check.name}" is ${check.conclusion} on ${short(expectedSha)}${check.url ? ` (${check.url})` : ''}`,
      ),
    };
  if (pr.mergeable === false)
    return {
      kind: 'refuse',
      reasons: [
        `pull request #${pr.number} is not mergeable (${pr.mergeableState ?? 'conflicts'}); fix the conflict with the base, or discard staging`,
      ],
    };
  const wait: string[] = [];
  for (const check of checks.filter((entry) => entry.state === 'pending'))
    wait.push(`${check.kind} "${check.name}" is ${check.conclusion} on ${short(expectedSha)}`);
  const reported = new Set(checks.map((check) => check.name));
  for (const name of facts.requiredChecks)
    if (!reported.has(name)) wait.push(`required check "${name}" has not reported on ${short(expectedSha)} yet`);
  if (pr.mergeable === null) wait.push(`GitHub is still computing whether #${pr.number} is mergeable`);
  return wait.length ? { kind: 'wait', reasons: wait } : { kind: 'merge' };
}

/** A check run's state from GitHub's status and conclusion. */
export function checkRunState(status: string, conclusion: string | null): CommitCheck['state'] {
  if (status !== 'completed' || conclusion === null) return 'pending';
  if (conclusion === 'success') return 'success';
  if (conclusion === 'neutral') return 'neutral';
  if (conclusion === 'skipped') return 'skipped';
  return 'failure';
}

/** A commit status's state (success, pending, failure, error). */
export function statusState(state: string): CommitCheck['state'] {
  if (state === 'success') return 'success';
  if (state === 'pending') return 'pending';
  return 'failure';
}
