// What a drain reports, defined once: progress events while it runs and the
// summary at the end (orchestrate --json prints the summary; dispatch reads
// it back through OrchestrateSummary and records it).
import type { TaskId } from '../types.js';

export type TaskOutcome = 'landed' | 'parked' | 'blocked' | 'failed' | 'interrupted';

export type DrainOutcome = 'drained' | 'nothing-to-do' | 'failed' | 'interrupted';

export interface TaskSummary {
  readonly id: TaskId;
  readonly title: string;
  readonly outcome: TaskOutcome;
  readonly reason?: string;
  readonly durationMs: number;
  /** For landed: the merge commit on auto/work; for parked/blocked: the commit that recorded it. */
  readonly stagingCommit?: string;
  /** What review said, when one ran: its verdict, rounds, and the trailer or the reason. */
  readonly review?: {
    readonly verdict: TaskReviewedEvent['verdict'];
    readonly rounds: number;
    readonly detail: string;
  };
}

/**
 * One agent session as the drain reports it in its summary. Root seals these
 * into its ledger (control/ledger/ledger.ts) after checking every field; a value the
 * CLI did not report is null (unknown), never 0.
 */
export interface SessionReport {
  readonly taskId: TaskId;
  readonly assistant: string;
  /** What the session was for: the task's own work, a fix round after review, or the review itself. */
  readonly role: 'implement' | 'fix' | 'review';
  readonly model: string | null;
  readonly effort: string | null;
  readonly startedAt: string;
  readonly endedAt: string;
  readonly wallMs: number;
  readonly inputTokens: number | null;
  readonly outputTokens: number | null;
  readonly cacheReadTokens: number | null;
  readonly cacheWriteTokens: number | null;
  readonly costUsd: number | null;
  /** "ok", or the adapter's failure ("rate-limited", "crashed", ...). */
  readonly outcome: string;
  /** The session hit a rate limit (it is not charged as an attempt). */
  readonly rateLimited: boolean;
}

/** One gate run: the tasks it judged together (beyond what auto/work already held) and its verdict. */
export interface GateRunSummary {
  readonly tasks: readonly TaskId[];
  readonly ok: boolean;
  readonly durationMs: number;
}

export interface DrainSummary {
  readonly runId: string;
  readonly outcome: DrainOutcome;
  readonly failure?: string;
  /** What the drain has to say when nothing failed: a --task that had already landed ("already landed in ..."). */
  readonly note?: string;
  readonly tasks: readonly TaskSummary[];
  /** Every agent session of the drain, for the ledger. */
  readonly sessions: readonly SessionReport[];
  /** Why new tasks stopped starting: the repo went over a daily budget. */
  readonly budgetStop?: string;
  /** How many times the gate ran in this drain (a batch runs it once when green, more while it bisects). */
  readonly gateRuns?: number;
  /** Every gate run in order: which tasks were gated together. */
  readonly gates?: readonly GateRunSummary[];
  readonly staging: { readonly base: string; readonly head: string };
  readonly pushed: boolean;
  readonly startedAt: string;
  readonly endedAt: string;
}

/**
 * The summary as a reader of `orchestrate --json` relies on it: the outcome
 * and the tasks always, staging and pushed when the runner wrote them.
 */
export type OrchestrateSummary = Pick<DrainSummary, 'runId' | 'outcome' | 'tasks'> &
  Partial<Pick<DrainSummary, 'staging' | 'pushed' | 'sessions' | 'budgetStop' | 'failure' | 'note' | 'gates'>>;

/** Something the drain noticed and tidied, or a stop request, or the push: a line of detail. */
export interface DrainNoteEvent {
  readonly event: 'recovered' | 'stopping' | 'published' | 'publish-skipped' | 'budget-reached' | 'review-setup';
  readonly detail: string;
}

/** auto/work was found moved by something other than the runner: the drain stops and publishes nothing. */
export interface StagingMovedEvent {
  readonly event: 'staging-moved';
  /** The commit the runner wrote last. */
  readonly expected: string;
  /** Where auto/work (or the staging worktree's HEAD) was found; null when the branch is gone. */
  readonly found: string | null;
  readonly detail: string;
}

export interface StagingReadyEvent {
  readonly event: 'staging-ready';
  readonly base: string;
  readonly head: string;
  readonly created: boolean;
  readonly mergedBase: boolean;
  readonly reset: boolean;
}

export interface TaskStartedEvent {
  readonly event: 'task-started';
  readonly taskId: TaskId;
  readonly title: string;
  /** Why it runs again (the conflict of its last attempt). */
  readonly retry?: string;
}

export interface TaskRetryingEvent {
  readonly event: 'task-retrying';
  readonly taskId: TaskId;
  readonly title: string;
  readonly reason: string;
}

/** A task's end in this drain (DrainBook.finish). */
export interface TaskFinishedEvent {
  readonly event: `task-${TaskOutcome}`;
  readonly taskId: TaskId;
  readonly title: string;
  readonly reason?: string;
  readonly commit?: string;
  readonly durationMs: number;
}

/** A task's review ended: approved (its trailer in detail), or why it will not land in this drain. */
export interface TaskReviewedEvent {
  readonly event: 'task-reviewed';
  readonly taskId: TaskId;
  readonly title: string;
  readonly verdict: 'approved' | 'park' | 'systemic' | 'over-budget' | 'interrupted';
  /** Review rounds taken, relaunches included. */
  readonly rounds: number;
  readonly detail: string;
}

/** A gate run of the integrator: the tasks it judged together, its verdict, and its number in this drain. */
export interface GateRunEvent extends GateRunSummary {
  readonly event: 'gate-run';
  readonly gateRun: number;
}

export interface DrainFinishedEvent {
  readonly event: 'drain-finished';
  readonly outcome: DrainOutcome;
  readonly reason?: string;
}

/** The assistant reported a rate limit: no new session of it starts before `until` (ISO). */
export interface RateLimitWaitEvent {
  readonly event: 'rate-limit-wait';
  readonly assistant: string;
  readonly until: string;
  readonly taskId: TaskId;
  readonly detail: string;
}

/** An event as the drain emits it; orchestrate adds the time and the run id. */
export type DrainEventBody =
  | DrainNoteEvent
  | RateLimitWaitEvent
  | StagingReadyEvent
  | StagingMovedEvent
  | TaskStartedEvent
  | TaskRetryingEvent
  | TaskFinishedEvent
  | TaskReviewedEvent
  | GateRunEvent
  | DrainFinishedEvent;

export type DrainEvent = DrainEventBody & { readonly time: string; readonly runId: string };

/** Where the drain's modules send events. */
export type Emit = (event: DrainEventBody) => void;

/** A task's failed attempts and conflict retry, kept across drains (attempts.ts). */
export interface AttemptRecord {
  readonly failures: number;
  readonly lastReason: string;
  readonly conflictRetried: boolean;
}

export type Attempts = Readonly<Record<TaskId, AttemptRecord>>;
