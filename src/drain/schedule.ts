// The drain loop: keep up to maxParallel workers busy, refilling a slot the
// moment a task finishes (no waves), re-reading the board on auto/work after
// every integration so tasks whose dependencies just landed are picked in the
// same drain. It ends when nothing is ready and nothing is running.
import type { Board, LabelCheck, Task, TaskId } from '../types.js';
import { assessReadiness } from '../board/readiness.js';
import { pickRunnable } from '../board/leases.js';

export interface SchedulerState {
  readonly board: Board;
  /** Tasks of this drain not yet finished: their agents run, or they wait to be integrated. They hold their leases. */
  readonly active: readonly Task[];
  /** Agents running now; only these take slots. */
  readonly busySlots: number;
  readonly slots: number;
  /** Tasks this drain will not start again (finished for good, or given up on). */
  readonly excluded: ReadonlySet<TaskId>;
  /** With --task: the only task this drain may start. */
  readonly only: TaskId | undefined;
  /** The escalation labels the repo's assistant cannot take: such a task is not ready, so it never starts. */
  readonly labels: LabelCheck;
}

/** Pure: which ready tasks to start now. */
export function tasksToStart(state: SchedulerState): Task[] {
  const free = state.slots - state.busySlots;
  if (free <= 0) return [];
  const activeIds = new Set(state.active.map((task) => task.id));
  const candidates = assessReadiness(state.board, state.labels).ready.filter(
    (task) =>
      !activeIds.has(task.id) &&
      !state.excluded.has(task.id) &&
      (state.only === undefined || task.id.toLowerCase() === state.only.toLowerCase()),
  );
  return pickRunnable(candidates, state.active, free);
}

export interface DrainLoopHooks {
  /** The board as it stands on auto/work now. */
  readBoard(): Promise<Board>;
  /**
   * Runs one task to the end (including its integration). It calls
   * releaseSlot when its agent is done, so the next agent can start while
   * this task waits for the integrator.
   */
  runTask(task: Task, releaseSlot: () => void): Promise<void>;
  /** True once a stop was requested: start nothing new. */
  stopping(): boolean;
  excluded(): ReadonlySet<TaskId>;
}

/** Wakes the loop when a slot frees or a task ends; a wake-up that came while it was busy is not lost. */
class Wakeup {
  private pending = false;
  private resolve: (() => void) | undefined;

  notify(): void {
    this.pending = true;
    this.resolve?.();
  }

  async wait(): Promise<void> {
    if (!this.pending) await new Promise<void>((resolve) => (this.resolve = resolve));
    this.pending = false;
    this.resolve = undefined;
  }
}

export async function drainLoop(
  hooks: DrainLoopHooks,
  slots: number,
  only: TaskId | undefined,
  labels: LabelCheck,
): Promise<void> {
  const active = new Map<TaskId, Task>();
  let busySlots = 0;
  const wakeup = new Wakeup();
  for (;;) {
    if (!hooks.stopping()) {
      const board = await hooks.readBoard();
      for (const task of tasksToStart({
        board,
        active: [...active.values()],
        busySlots,
        slots,
        excluded: hooks.excluded(),
        only,
        labels,
      })) {
        active.set(task.id, task);
        busySlots++;
        let holdsSlot = true;
        const releaseSlot = () => {
          if (!holdsSlot) return;
          holdsSlot = false;
          busySlots--;
          wakeup.notify();
        };
        void hooks
          .runTask(task, releaseSlot)
          .catch(() => undefined)
          .finally(() => {
            releaseSlot();
            active.delete(task.id);
            wakeup.notify();
          });
      }
    }
    if (active.size === 0) return;
    await wakeup.wait();
  }
}
