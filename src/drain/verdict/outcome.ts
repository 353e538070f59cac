// The drain's outcome, from what happened: the --task it was asked for (and,
// when it did not run, how it stands: already landed is met, parked or
// Blocked is said), a systemic failure, a stop, how many tasks ran, and the
// push. Pure.
import type { TaskId } from '../../types.js';
import type { DrainOutcome } from '../types.js';
import { STAGING_BRANCH } from '../../staging/names.js';

/** Where a --task that did not run stands on auto/work. */
export type OnlyStanding =
  /** Done, and a landing of the runner names it: the request is met. */
  | { readonly kind: 'landed'; readonly commit: string; readonly runId: string | undefined }
  /** Done (or in completed/) with no landing naming it: finished by hand, met all the same. */
  | { readonly kind: 'done' }
  | { readonly kind: 'parked'; readonly reason: string }
  | { readonly kind: 'blocked'; readonly reason: string }
  /** Not ready for any other reason, in readiness's words. */
  | { readonly kind: 'not-ready'; readonly reasons: readonly string[] };

export interface DrainFacts {
  /** With --task: whether the drain ran it, and (when not) whether it is on auto/work at all and how it stands. */
  readonly only?: {
    readonly id: TaskId;
    readonly ran: boolean;
    readonly onBoard: boolean;
    readonly unreadable?: string;
    readonly standing?: OnlyStanding;
  };
  /** The first systemic agent failure (the drain stopped for it). */
  readonly systemicFailure: string | undefined;
  /** auto/work was found moved by something other than the runner (staging/tip.ts): why the drain stopped. */
  readonly stagingMoved?: string;
  /** A stop was requested. */
  readonly stopped: boolean;
  /** Tasks that ended in this drain. */
  readonly tasksEnded: number;
  /** The push of auto/work, when one was tried. */
  readonly publish?: { readonly pushed: boolean; readonly reason: string | undefined; readonly hasOrigin: boolean };
}

export interface DrainVerdict {
  readonly outcome: DrainOutcome;
  readonly failure?: string;
  /** What the drain has to say beyond its tasks when nothing failed: a --task that had already landed. */
  readonly note?: string;
}

/** Pure: whether auto/work is pushed at the end: asked to, and it moved since origin last had it. */
export function shouldPublish(push: boolean, head: string, remoteBefore: string | undefined): boolean {
  return push && head !== remoteBefore;
}

/**
 * Pure: what a --task that did not run comes to: met (a note; it had landed, or is Done) or not (a failure: parked,
 * Blocked, not ready for another reason, unreadable, absent).
 */
function onlyVerdict(only: NonNullable<DrainFacts['only']>): { failure: string } | { note: string } {
  const { id, standing } = only;
  const next = `\`agent-runner next\` (which reads ${STAGING_BRANCH}) says why`;
  if (!only.onBoard)
    return {
      failure: only.unreadable
        ? `${id} is unreadable on ${STAGING_BRANCH}: ${only.unreadable}`
        : `no task ${id} on ${STAGING_BRANCH}`,
    };
  switch (standing?.kind) {
    case 'landed':
      return {
        note: `${id} already landed in ${standing.commit.slice(0, 12)} by run ${standing.runId ?? '(unnamed)'}`,
      };
    case 'done':
      return { note: `${id} is already Done on ${STAGING_BRANCH} (no landing of the runner names it)` };
    case 'parked':
      return {
        failure: `${id} is parked on ${STAGING_BRANCH}${standing.reason ? `: ${standing.reason}` : ''}; fix what parked it, then \`agent-runner unpark ${id}\` and queue it again`,
      };
    case 'blocked':
      return {
        failure: `${id} is Blocked on ${STAGING_BRANCH}: ${standing.reason}; answer what blocks it, set it To Do and queue it again`,
      };
    case 'not-ready':
      return {
        failure: `${id} is not ready on ${STAGING_BRANCH}${standing.reasons.length ? ` (${standing.reasons.join('; ')})` : ''}; ${next}`,
      };
    case undefined:
      return { failure: `${id} is not ready on ${STAGING_BRANCH}; ${next}` };
  }
}

export function drainOutcome(facts: DrainFacts): DrainVerdict {
  let outcome: DrainOutcome = 'drained';
  let failure: string | undefined;
  let note: string | undefined;
  if (facts.only && !facts.only.ran) {
    const verdict = onlyVerdict(facts.only);
    if ('note' in verdict) note = verdict.note;
    else {
      failure = verdict.failure;
      outcome = 'failed';
    }
  }
  if (facts.systemicFailure) {
    outcome = 'failed';
    failure = `stopped: the agent cannot work (${facts.systemicFailure}); fix it and run again`;
  } else if (facts.stopped) {
    // A stop wins over a --task that did not run; its reason stays.
    outcome = 'interrupted';
  } else if (facts.tasksEnded === 0 && outcome !== 'failed') {
    outcome = 'nothing-to-do';
  }
  if (facts.publish && !facts.publish.pushed && facts.publish.hasOrigin) {
    outcome = 'failed';
    failure = facts.publish.reason;
  }
  // Nothing was published then, and nothing else matters as much.
  if (facts.stagingMoved) {
    outcome = 'failed';
    failure = facts.stagingMoved;
  }
  return { outcome, ...(failure ? { failure } : {}), ...(note && !failure ? { note } : {}) };
}
