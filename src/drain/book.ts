// A drain's bookkeeping: each task's outcome, the tasks it will not start
// again, retry reasons, and attempt counts (kept across drains, written
// atomically before anything depends on them).
import type { Clock, FsPort } from '../ports.js';
import type { Task, TaskId } from '../types.js';
import type {
  AttemptRecord,
  Attempts,
  Emit,
  GateRunSummary,
  TaskOutcome,
  TaskReviewedEvent,
  TaskSummary,
} from './types.js';
import { forget, readAttempts, recordConflictRetry, recordFailure, writeAttempts } from './attempts.js';

export class DrainBook {
  readonly results = new Map<TaskId, TaskSummary>();
  /** Tasks this drain will not start again. */
  readonly excluded = new Set<TaskId>();
  /** Every gate run of this drain, in order. */
  readonly gates: GateRunSummary[] = [];
  private readonly retries = new Map<TaskId, string>();
  /** What review said of each task it judged in this drain, for its summary. */
  private readonly reviews = new Map<TaskId, NonNullable<TaskSummary['review']>>();

  private constructor(
    private readonly fs: FsPort,
    private readonly clock: Clock,
    private readonly workspaceState: string,
    readonly emit: Emit,
    private attempts: Attempts,
  ) {}

  static async open(fs: FsPort, clock: Clock, workspaceState: string, emit: Emit): Promise<DrainBook> {
    return new DrainBook(fs, clock, workspaceState, emit, await readAttempts(fs, workspaceState));
  }

  /** Records a task's final outcome for this drain and says so. */
  finish(
    task: Pick<Task, 'id' | 'title'>,
    outcome: TaskOutcome,
    reason: string | undefined,
    started: number,
    commit?: string,
  ): void {
    const summary: TaskSummary = {
      id: task.id,
      title: task.title,
      outcome,
      ...(reason ? { reason } : {}),
      durationMs: this.clock.now() - started,
      ...(commit ? { stagingCommit: commit } : {}),
      ...(this.reviews.has(task.id) ? { review: this.reviews.get(task.id)! } : {}),
    };
    this.results.set(task.id, summary);
    if (outcome !== 'failed') this.excluded.add(task.id);
    this.emit({
      event: `task-${outcome}`,
      taskId: task.id,
      title: task.title,
      ...(reason ? { reason } : {}),
      ...(commit ? { commit } : {}),
      durationMs: summary.durationMs,
    });
  }

  /** Review ended for a task and says so (its summary carries it). */
  reviewed(event: TaskReviewedEvent): void {
    this.reviews.set(event.taskId, { verdict: event.verdict, rounds: event.rounds, detail: event.detail });
    this.emit(event);
  }

  /** The gate ran over these tasks (gated together). */
  gateRan(run: GateRunSummary): void {
    this.gates.push(run);
    this.emit({ event: 'gate-run', gateRun: this.gates.length, ...run });
  }

  /** A failed attempt, counted. */
  async failed(taskId: TaskId, reason: string): Promise<void> {
    await this.save(recordFailure(this.attempts, taskId, reason));
  }

  /** The task's failed attempts and conflict retry so far (kept across drains). */
  attemptsOf(taskId: TaskId): AttemptRecord | undefined {
    return this.attempts[taskId];
  }

  /** The task runs again in this drain, and its agent is told why. */
  async retryAfterConflict(taskId: TaskId, reason: string, tellAgent: string): Promise<void> {
    await this.save(recordConflictRetry(this.attempts, taskId, reason));
    this.retries.set(taskId, tellAgent);
  }

  /** The retry reason for the task's next start, consumed. */
  takeRetryReason(taskId: TaskId): string | undefined {
    const reason = this.retries.get(taskId);
    this.retries.delete(taskId);
    return reason;
  }

  /** The task is settled (landed, parked, blocked): its attempts no longer count. */
  async settle(taskId: TaskId): Promise<void> {
    if (taskId in this.attempts) await this.save(forget(this.attempts, taskId));
  }

  private async save(next: Attempts): Promise<void> {
    this.attempts = next;
    await writeAttempts(this.fs, this.workspaceState, next);
  }
}
