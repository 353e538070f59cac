// What becomes of a task, as data: the verdicts the other files here reach,
// and the one plan of effects each implies. task-flow.ts applies a plan in a
// fixed order (count a failure, commit onto auto/work, attempts, worktree,
// report), so every trip ends through the same path. Pure.
import type { TaskId } from '../../types.js';
import type { TaskOutcome } from '../types.js';

export type TaskVerdict =
  /** Merged and gated onto auto/work (or found there already). */
  | { readonly kind: 'land'; readonly commit: string; readonly reason?: string }
  /**
   * Label `parked` and a note on auto/work; the branch stays for a human.
   * `failedAttempt` is counted first (the last of maxAttempts); a recovered
   * branch's worktree goes, its branch stays.
   */
  | { readonly kind: 'park'; readonly reason: string; readonly failedAttempt?: string; readonly recovered?: boolean }
  /** The agent set Blocked: committed onto auto/work so it stops recurring. */
  | { readonly kind: 'block'; readonly reason: string }
  /** Its merge conflicted with a task that landed first: runs again in this drain, told why. */
  | { readonly kind: 'retry'; readonly reason: string; readonly tellAgent: string }
  /** A counted failed attempt (`failedAttempt` is what is recorded; `reason` adds the count). */
  | { readonly kind: 'fail'; readonly reason: string; readonly failedAttempt: string }
  /** The agent cannot work at all (not logged in, rate limited): the drain stops; no attempt counts. */
  | { readonly kind: 'systemic'; readonly reason: string; readonly keepBranch?: boolean }
  /**
   * The drain was stopped while the task ran: not the task's fault, no attempt counts. `keepBranch`: its work is
   * Done and waits for review; the next drain finds the branch and reviews it before it integrates.
   */
  | { readonly kind: 'interrupted'; readonly reason: string; readonly keepBranch?: boolean }
  /** The runner itself failed on this task: counted if it can be, and not started again. */
  | { readonly kind: 'internal-error'; readonly reason: string }
  /** Recovered work that no longer integrates: dropped; the task is To Do on auto/work and runs again. */
  | { readonly kind: 'run-again'; readonly detail: string };

export type Report =
  | { readonly finish: TaskOutcome; readonly reason?: string; readonly commit?: string }
  | { readonly retrying: string }
  | { readonly recovered: string };

/** The effects of a verdict, each at most once, in the order they are applied. */
export interface TaskPlan {
  /** Told to the drain: nothing new starts. */
  readonly systemic?: string;
  /** A failed attempt recorded first; best effort when the runner itself failed. */
  readonly countFailure?: { readonly reason: string; readonly bestEffort: boolean };
  /** The commit the integrator makes onto auto/work for the task. */
  readonly stagingEdit?: { readonly kind: 'park' | 'block'; readonly reason: string };
  /** Settled: its attempts no longer count. Or a conflict retry recorded, with what the agent is told. */
  readonly attempts: 'settle' | 'keep' | { readonly conflictRetry: string; readonly tellAgent: string };
  readonly worktree: 'remove' | 'remove-keep-branch' | 'keep';
  /** Not started again in this drain even though it failed. */
  readonly exclude: boolean;
  readonly report: Report;
}

/** Pure: what applying a verdict does. */
export function planFor(taskId: TaskId, verdict: TaskVerdict): TaskPlan {
  switch (verdict.kind) {
    case 'land':
      return {
        attempts: 'settle',
        worktree: 'remove',
        exclude: false,
        report: { finish: 'landed', commit: verdict.commit, ...(verdict.reason ? { reason: verdict.reason } : {}) },
      };
    case 'park':
      return {
        ...(verdict.failedAttempt ? { countFailure: { reason: verdict.failedAttempt, bestEffort: false } } : {}),
        stagingEdit: { kind: 'park', reason: verdict.reason },
        attempts: 'settle',
        // A parked branch stays for review; so does the worktree of one that just ran.
        worktree: verdict.recovered ? 'remove-keep-branch' : 'keep',
        exclude: false,
        report: { finish: 'parked', reason: verdict.reason },
      };
    case 'block':
      return {
        stagingEdit: { kind: 'block', reason: verdict.reason },
        attempts: 'settle',
        worktree: 'remove',
        exclude: false,
        report: { finish: 'blocked', reason: verdict.reason },
      };
    case 'retry':
      return {
        attempts: { conflictRetry: verdict.reason, tellAgent: verdict.tellAgent },
        worktree: 'remove',
        exclude: false,
        report: { retrying: verdict.reason },
      };
    case 'fail':
      return {
        countFailure: { reason: verdict.failedAttempt, bestEffort: false },
        attempts: 'keep',
        worktree: 'remove',
        exclude: false,
        report: { finish: 'failed', reason: verdict.reason },
      };
    case 'systemic':
      return {
        systemic: `${taskId}: ${verdict.reason}`,
        attempts: 'keep',
        worktree: verdict.keepBranch ? 'keep' : 'remove',
        exclude: true,
        report: { finish: 'failed', reason: verdict.reason },
      };
    case 'interrupted':
      return {
        attempts: 'keep',
        worktree: verdict.keepBranch ? 'keep' : 'remove',
        exclude: false,
        report: { finish: 'interrupted', reason: verdict.reason },
      };
    case 'internal-error':
      // The worktree stays as it is: whatever failed may have left it for a human to see.
      return {
        countFailure: { reason: verdict.reason, bestEffort: true },
        attempts: 'keep',
        worktree: 'keep',
        exclude: true,
        report: { finish: 'failed', reason: verdict.reason },
      };
    case 'run-again':
      return { attempts: 'keep', worktree: 'remove', exclude: false, report: { recovered: verdict.detail } };
  }
}
