// A task attempt run somewhere other than the agent's repository on this host: a repo whose registry entry says
// backend = "kubernetes" runs each attempt as a Job (backends/kubernetes/drain/). The drain sees only this seam, so
// it stays below the backends that implement it; the CLI wires the implementation in.
import type { Task } from '../types.js';
import type { WorkOutcome } from './verdict/index.js';

/** Where an attempt's transcript lines go (agent/transcript.ts: stamped and redacted). */
export interface TranscriptSink {
  write(event: Record<string, unknown>): void;
}

export interface RemoteWork {
  /** auto/work at the task's start: the commit the attempt starts from and its result must descend from. */
  readonly base: string;
  /** The task's failed attempts recorded before this one (attempts.json). */
  readonly failuresBefore: number;
  /** Why it runs again (the conflict of its last attempt), for the agent. */
  readonly retryReason?: string;
  readonly transcript: TranscriptSink;
}

export interface RemoteAttempts {
  /** Before the first task: what earlier runs left behind, removed; each removal said as a recovery note. */
  prepare(): Promise<readonly string[]>;
  /** One attempt of the task to its outcome, as the host's worker would end it. */
  work(task: Task, work: RemoteWork): Promise<WorkOutcome>;
  /** The drain's stop reaching every running attempt: 'stop' with the pod's grace, 'kill' at once. */
  stopAll(how: 'stop' | 'kill'): Promise<void>;
}
