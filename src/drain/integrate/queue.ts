// Finished tasks wait here for the integrator. Whenever the integrator is
// free it takes a batch of the waiting ones (verdict/batch.ts formBatch): the
// first task to finish is integrated at once, alone; tasks finishing while a
// gate runs wait and go together into the next batch. A batch of one takes
// the one-at-a-time path (integrateBranch), so maxBatch 1 is the integrator
// as it always was.
import type { Task, TaskId } from '../../types.js';
import type { Mutex } from '../mutex.js';
import { type IntegrationOutcome, formBatch } from '../verdict/index.js';

interface Waiting {
  readonly task: Task;
  readonly resolve: (outcome: IntegrationOutcome) => void;
  readonly reject: (error: unknown) => void;
}

export interface QueueHooks {
  /** Integrates one task alone. */
  one(task: Task): Promise<IntegrationOutcome>;
  /** Integrates a batch of two or more, in the given order; every task gets an outcome. */
  batch(tasks: readonly Task[]): Promise<ReadonlyMap<TaskId, IntegrationOutcome>>;
}

export class IntegrationQueue {
  private readonly waiting: Waiting[] = [];

  constructor(
    /**
     * The integrator's mutex: a batch holds it from forming to its end; park and block commits take it between batches.
     */
    private readonly integrator: Mutex,
    private readonly maxBatch: number,
    private readonly hooks: QueueHooks,
  ) {}

  /** Resolves with the task's own outcome once its batch is integrated. */
  integrate(task: Task): Promise<IntegrationOutcome> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ task, resolve, reject });
      // Each waiting task asks for one turn; a turn that finds the queue emptied by an earlier batch does nothing.
      void this.integrator.run(() => this.turn());
    });
  }

  private async turn(): Promise<void> {
    if (!this.waiting.length) return;
    const ids = formBatch(
      this.waiting.map((entry) => entry.task.id),
      this.maxBatch,
    );
    const taken = ids.map(
      (id) =>
        this.waiting.splice(
          this.waiting.findIndex((entry) => entry.task.id === id),
          1,
        )[0]!,
    );
    try {
      if (taken.length === 1) {
        taken[0]!.resolve(await this.hooks.one(taken[0]!.task));
        return;
      }
      const outcomes = await this.hooks.batch(taken.map((entry) => entry.task));
      for (const entry of taken) {
        const outcome = outcomes.get(entry.task.id);
        if (outcome) entry.resolve(outcome);
        else entry.reject(new Error(`the batch integrator gave ${entry.task.id} no outcome`));
      }
    } catch (error) {
      for (const entry of taken) entry.reject(error);
    }
  }
}
