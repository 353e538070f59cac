// What happens after a task's agent ended, from what its worker saw (the
// task's status on its branch, or how it failed) and the task's attempts.
// Typed on the adapter's AgentFailure, never on the words of a reason. Pure.
import type { AgentFailure, RunOutcome } from '../../types.js';
import type { AttemptRecord } from '../types.js';
import type { TaskVerdict } from './task.js';

/** How a task's work ended: the run loop's outcome, or its setup command failed. */
export type WorkOutcome =
  | RunOutcome
  | { readonly kind: 'setup-failed'; readonly reason: string }
  /** The agent said Done, but its branch's bundle failed the runner's checks (handoff/accept.ts). */
  | { readonly kind: 'handoff-refused'; readonly reason: string }
  /** A step in the agent's own repository failed (what the agent did to it, or its disk): a failed attempt. */
  | { readonly kind: 'side-failed'; readonly reason: string }
  /**
   * The cluster refused to run the attempt at all (401, 403, 409, 422, no answer): nothing of the task's own, and every
   * other task would meet the same, so the drain stops without charging an attempt.
   */
  | { readonly kind: 'cluster-refused'; readonly reason: string };

/** Failures that say nothing about the task: the drain stops instead of counting attempts. */
export const SYSTEMIC_FAILURES: ReadonlySet<AgentFailure> = new Set<AgentFailure>(['not-logged-in', 'rate-limited']);

export interface AgentFacts {
  readonly outcome: WorkOutcome;
  /** The adapter's typed failure when the agent itself failed (outcome agent-failed). */
  readonly failure: AgentFailure | undefined;
  /** The drain was asked to stop while the task ran. */
  readonly stopped: boolean;
  /** The task's failed attempts before this one. */
  readonly attempts: AttemptRecord | undefined;
  readonly maxAttempts: number;
}

export type AgentVerdict =
  | { readonly kind: 'integrate' }
  | Extract<TaskVerdict, { kind: 'block' | 'interrupted' | 'systemic' | 'fail' | 'park' }>;

export function isSystemic(outcome: WorkOutcome, failure: AgentFailure | undefined): boolean {
  return outcome.kind === 'agent-failed' && failure !== undefined && SYSTEMIC_FAILURES.has(failure);
}

/** Pure: Done goes to the integrator, Blocked is committed, anything else is a failed attempt (or a stop). */
export function afterAgent(facts: AgentFacts): AgentVerdict {
  const { outcome } = facts;
  if (outcome.kind === 'done') return { kind: 'integrate' };
  if (outcome.kind === 'blocked') return { kind: 'block', reason: outcome.reason };
  // A bundle that names other refs, is malformed, oversized or does not descend is a human's to look at.
  if (outcome.kind === 'handoff-refused') return { kind: 'park', reason: outcome.reason };
  if (facts.stopped) return { kind: 'interrupted', reason: 'the drain was stopped' };
  // The repo's daily budget ran out under it: nothing of the task's own; it waits for the next day's drain.
  if (outcome.kind === 'over-budget' && outcome.daily) return { kind: 'interrupted', reason: outcome.reason };
  // Spending more on it is the operator's call, not another attempt's.
  if (outcome.kind === 'over-budget') return { kind: 'park', reason: outcome.reason };
  // Stopped at its budget where no SessionGuard turned it into over-budget: the same park.
  if (outcome.kind === 'agent-failed' && facts.failure === 'over-budget')
    return { kind: 'park', reason: `over its budget (${outcome.reason})` };
  if (isSystemic(outcome, facts.failure)) return { kind: 'systemic', reason: outcome.reason };
  if (outcome.kind === 'cluster-refused') return { kind: 'systemic', reason: outcome.reason };
  const failures = (facts.attempts?.failures ?? 0) + 1;
  if (failures >= facts.maxAttempts)
    return {
      kind: 'park',
      reason: `failed ${failures} time(s); last: ${outcome.reason}`,
      failedAttempt: outcome.reason,
    };
  return {
    kind: 'fail',
    reason: `${outcome.reason} (attempt ${failures} of ${facts.maxAttempts})`,
    failedAttempt: outcome.reason,
  };
}

/** Pure: the runner itself failed while working on the task. */
export function afterInternalError(error: unknown): Extract<TaskVerdict, { kind: 'internal-error' }> {
  return {
    kind: 'internal-error',
    reason: `internal error: ${error instanceof Error ? error.message : String(error)}`,
  };
}
