// The staging decisions, with no git in sight: whether auto/work must be
// created, what repairs its worktree needs, how the base comes in, and
// whether promote may fast-forward the base. branch.ts and lifecycle.ts
// gather the facts, call these, and apply the answer. Pure.
import type { WorkBranchMode } from '../types.js';
import { STAGING_BRANCH } from './names.js';

export type StagingStart = { readonly kind: 'create'; readonly from: string } | { readonly kind: 'exists' };

/** Pure: a missing auto/work starts from origin's (published, unpromoted work) or else from the base. */
export function stagingStart(facts: {
  readonly exists: boolean;
  readonly published: string | undefined;
  readonly baseHead: string;
}): StagingStart {
  return facts.exists ? { kind: 'exists' } : { kind: 'create', from: facts.published ?? facts.baseHead };
}

export type WorktreeFacts =
  | { readonly checkedOut: false }
  | {
      readonly checkedOut: true;
      readonly mergeInProgress: boolean;
      /** The branch checked out there ('' for a detached HEAD). */
      readonly branch: string;
      readonly dirty: boolean;
    };

export type WorktreeRepair =
  | { readonly kind: 'add' }
  | { readonly kind: 'abort-merge'; readonly note: string }
  | { readonly kind: 'checkout'; readonly note: string }
  | { readonly kind: 'clean'; readonly note: string }
  | { readonly kind: 'ready' };

/**
 * Pure: the next repair the staging worktree needs (a killed drain can leave
 * a half-done merge, another branch, or changes). Each repair is made at most
 * once (`done`); the caller gathers the facts again after each.
 */
export function nextWorktreeRepair(facts: WorktreeFacts, done: ReadonlySet<WorktreeRepair['kind']>): WorktreeRepair {
  if (!facts.checkedOut) return done.has('add') ? { kind: 'ready' } : { kind: 'add' };
  // A fresh worktree is as git made it: nothing to repair.
  if (done.has('add')) return { kind: 'ready' };
  if (facts.mergeInProgress && !done.has('abort-merge'))
    return { kind: 'abort-merge', note: 'aborted a merge left half-done in the staging worktree' };
  if (facts.branch !== STAGING_BRANCH && !done.has('checkout')) {
    return {
      kind: 'checkout',
      note: `staging worktree was on ${facts.branch || 'a detached HEAD'}; put back on ${STAGING_BRANCH}`,
    };
  }
  if (facts.dirty && !done.has('clean'))
    return { kind: 'clean', note: 'cleaned uncommitted changes from the staging worktree' };
  return { kind: 'ready' };
}

export interface BaseFacts {
  readonly mode: WorkBranchMode;
  /** auto/work was created by this drain. */
  readonly created: boolean;
  readonly stagingHead: string;
  readonly baseHead: string;
  /** Commits on auto/work not on the base (landed, unpromoted work). */
  readonly unpromoted: number;
  /** The base is already contained in auto/work. */
  readonly baseContained: boolean;
  readonly force: boolean;
  /** Where the base was read from, for the merge message ("origin/main"). */
  readonly baseName: string;
  /** The staging worktree, for the refusal's fix. */
  readonly stagingDir: string;
}

export type BaseStep =
  | { readonly kind: 'up-to-date' }
  | { readonly kind: 'reset' }
  | { readonly kind: 'refuse'; readonly message: string }
  | { readonly kind: 'merge'; readonly message: string };

/**
 * Pure: how the base comes into auto/work: reset (refused over unpromoted work without force), merged in, or nothing.
 */
export function baseStep(facts: BaseFacts): BaseStep {
  if (facts.mode === 'reset' && !facts.created && facts.stagingHead !== facts.baseHead) {
    if (facts.unpromoted !== 0 && !facts.force) {
      return {
        kind: 'refuse',
        message: `${STAGING_BRANCH} has ${facts.unpromoted} commit(s) not on the base branch (landed, unpromoted work); workBranchMode "reset" would throw them away. Run \`agent-runner promote\` or \`agent-runner discard\` first, or pass --force`,
      };
    }
    return { kind: 'reset' };
  }
  if (!facts.baseContained) return { kind: 'merge', message: `Merge ${facts.baseName} into ${STAGING_BRANCH}` };
  return { kind: 'up-to-date' };
}

/** Pure: the refusal when merging the base into auto/work conflicts (the merge was aborted). */
export function baseConflictMessage(conflicts: readonly string[], stagingDir: string): string {
  return `merging the base branch into ${STAGING_BRANCH} conflicts${conflicts.length ? ` in ${conflicts.join(', ')}` : ''}; nothing was changed. Resolve it by hand in ${stagingDir} (merge the base, commit), or run \`agent-runner discard\``;
}

export interface PromoteFacts {
  readonly workspace: string;
  readonly baseBranch: string;
  /** auto/work's tip, when the branch exists. */
  readonly staging: string | undefined;
  /**
   * Each base ref that exists (the one the base is read from, then the local branch), and whether auto/work contains
   * it.
   */
  readonly bases: readonly { readonly name: string; readonly sha: string; readonly contained: boolean }[];
  /** The local base branch, when it exists. */
  readonly localBase: string | undefined;
  /** The base as read (origin's when there is an origin). */
  readonly remoteBase: string;
  /**
   * The base is checked out in the workspace; whether its tracked files have
   * changes; and whether every change there is auto/work's own version of
   * the file (what a promote killed during its fast-forward leaves).
   */
  readonly checkout: {
    readonly onBase: boolean;
    readonly dirty: boolean;
    readonly changesAreStaging?: boolean;
    /** Untracked files in the checkout that the fast-forward would write over (auto/work adds them). */
    readonly untrackedInTheWay?: readonly string[];
  };
}

export type PromoteVerdict =
  | { readonly kind: 'refuse'; readonly message: string }
  | { readonly kind: 'nothing-to-do'; readonly at: string }
  /**
   * By the checked-out tree (merge --ff-only), by moving the ref
   * (compare-and-swap on the local base), or by finishing the fast-forward a
   * killed promote left half-done in the checkout (reset to auto/work: every
   * change there is already auto/work's).
   */
  | {
      readonly kind: 'fast-forward';
      readonly from: string;
      readonly to: string;
      readonly how: 'checkout' | 'ref' | 'finish-interrupted';
    };

/** Pure: promote only ever fast-forwards the base to auto/work, and never over local edits. */
export function promoteVerdict(facts: PromoteFacts): PromoteVerdict {
  const { staging } = facts;
  if (!staging)
    return {
      kind: 'refuse',
      message: `there is no ${STAGING_BRANCH} branch in ${facts.workspace}: nothing to promote (run orchestrate first)`,
    };
  const moved = facts.bases.find((base) => !base.contained);
  if (moved) {
    return {
      kind: 'refuse',
      message: `${moved.name} has moved: it has commits that ${STAGING_BRANCH} does not, so promoting is not a fast-forward. Run orchestrate (it merges the base into ${STAGING_BRANCH} and re-gates), then promote again; or discard`,
    };
  }
  const from = facts.localBase ?? facts.remoteBase;
  if (from === staging) return { kind: 'nothing-to-do', at: staging };
  if (facts.checkout.onBase) {
    if (facts.checkout.changesAreStaging) return { kind: 'fast-forward', from, to: staging, how: 'finish-interrupted' };
    if (facts.checkout.dirty)
      return {
        kind: 'refuse',
        message: `${facts.workspace} has uncommitted changes on ${facts.baseBranch}; commit or stash them, then promote again`,
      };
    const inTheWay = facts.checkout.untrackedInTheWay ?? [];
    if (inTheWay.length) {
      const shown = inTheWay.slice(0, 5).join(', ') + (inTheWay.length > 5 ? ` and ${inTheWay.length - 5} more` : '');
      return {
        kind: 'refuse',
        message: `${facts.workspace} has untracked files that ${STAGING_BRANCH} adds (${shown}); move or delete them, then promote again`,
      };
    }
    return { kind: 'fast-forward', from, to: staging, how: 'checkout' };
  }
  return { kind: 'fast-forward', from, to: staging, how: 'ref' };
}

/** Pure: the base is pushed after promote when there is an origin and it lags the local base. */
export function shouldPushBase(facts: {
  readonly hasOrigin: boolean;
  readonly local: string | undefined;
  readonly remote: string | undefined;
}): boolean {
  return facts.hasOrigin && facts.local !== facts.remote;
}

/**
 * Pure: whether every changed path of a checkout holds exactly the target's
 * version (a file the target lacks must be gone). `worktree` maps the
 * changed paths still present to their blob; `target` maps paths to the
 * target's blob. No changes is not a leftover of anything.
 */
export function changesMatchTarget(
  changed: readonly { readonly path: string; readonly deleted: boolean }[],
  worktree: ReadonlyMap<string, string>,
  target: ReadonlyMap<string, string>,
): boolean {
  return (
    changed.length > 0 &&
    changed.every((entry) =>
      entry.deleted
        ? !target.has(entry.path)
        : worktree.get(entry.path) !== undefined && worktree.get(entry.path) === target.get(entry.path),
    )
  );
}
