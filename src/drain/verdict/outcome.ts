// The drain's outcome, from what happened: the --task it was asked for, a
// systemic failure, a stop, how many tasks ran, and the push. Pure.
import type { TaskId } from '../../types.js';
import type { DrainOutcome } from '../types.js';
import { STAGING_BRANCH } from '../../staging/names.js';

export interface DrainFacts {
  /** With --task: whether the drain ran it, and (when not) whether it is on auto/work at all. */
  readonly only?: {
    readonly id: TaskId;
    readonly ran: boolean;
    readonly onBoard: boolean;
    readonly unreadable?: string;
    /** On the board but not ready: why, in readiness's words. */
    readonly notReady?: readonly string[];
  };
  /** The first systemic agent failure (the drain stopped for it). */
  readonly systemicFailure: string | undefined;
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
}

/** Pure: whether auto/work is pushed at the end: asked to, and it moved since origin last had it. */
export function shouldPublish(push: boolean, head: string, remoteBefore: string | undefined): boolean {
  return push && head !== remoteBefore;
}

export function drainOutcome(facts: DrainFacts): DrainVerdict {
  let outcome: DrainOutcome = 'drained';
  let failure: string | undefined;
  if (facts.only && !facts.only.ran) {
    failure = facts.only.onBoard
      ? `${facts.only.id} is not ready on ${STAGING_BRANCH}${facts.only.notReady?.length ? ` (${facts.only.notReady.join('; ')})` : ''}; \`agent-runner next\` (which reads ${STAGING_BRANCH}) says why`
      : facts.only.unreadable
        ? `${facts.only.id} is unreadable on ${STAGING_BRANCH}: ${facts.only.unreadable}`
        : `no task ${facts.only.id} on ${STAGING_BRANCH}`;
    outcome = 'failed';
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
  return { outcome, ...(failure ? { failure } : {}) };
}
