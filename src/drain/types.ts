// What a drain reports: progress events while it runs and the summary at the
// end (orchestrate --json prints the summary; dispatch records it).
import type { TaskId } from '../types.js';

export type TaskOutcome = 'landed' | 'parked' | 'blocked' | 'failed' | 'interrupted';

export interface TaskSummary {
  readonly id: TaskId;
  readonly title: string;
  readonly outcome: TaskOutcome;
  readonly reason?: string;
  readonly durationMs: number;
  /** For landed: the merge commit on auto/work; for parked/blocked: the commit that recorded it. */
  readonly stagingCommit?: string;
}

export interface DrainSummary {
  readonly runId: string;
  readonly outcome: 'drained' | 'nothing-to-do' | 'failed' | 'interrupted';
  readonly failure?: string;
  readonly tasks: readonly TaskSummary[];
  readonly staging: { readonly base: string; readonly head: string };
  readonly pushed: boolean;
  readonly startedAt: string;
  readonly endedAt: string;
}

export interface DrainEvent {
  readonly time: string;
  readonly runId: string;
  readonly event: string;
  readonly taskId?: TaskId;
  readonly title?: string;
  readonly reason?: string;
  readonly detail?: string;
  readonly commit?: string;
  readonly durationMs?: number;
  readonly [key: string]: unknown;
}
