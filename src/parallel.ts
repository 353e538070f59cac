// The drain loop: keep up to maxParallel workers busy, refilling a slot the
// moment a task finishes (no waves), re-reading the board on auto/work after
// every integration so tasks whose dependencies just landed are picked in the
// same drain. It ends when nothing is ready and nothing is running.
import type { Board, Task, TaskId } from './types.js';
import { assessReadiness } from './board/readiness.js';
import { pickRunnable } from './board/leases.js';

export interface SchedulerState {
  readonly board: Board;
  readonly running: readonly Task[];
  readonly slots: number;
  /** Tasks this drain will not start again (finished for good, or given up on). */
  readonly excluded: ReadonlySet<TaskId>;
  /** With --task: the only task this drain may start. */
  readonly only: TaskId | undefined;
}

/** Pure: which ready tasks to start now. */
export function tasksToStart(state: SchedulerState): Task[] {
  const free = state.slots - state.running.length;
  if (free <= 0) return [];
  const runningIds = new Set(state.running.map((task) => task.id));
  const candidates = assessReadiness(state.board).ready.filter(
    (task) => !runningIds.has(task.id) && !state.excluded.has(task.id) && (state.only === undefined || task.id.toLowerCase() === state.only.toLowerCase()),
  );
  return pickRunnable(candidates, state.running, free);
}

export interface DrainLoopHooks {
  /** The board as it stands on auto/work now. */
  readBoard(): Promise<Board>;
  /** Runs one task to the end (including its integration). */
  runTask(task: Task): Promise<void>;
  /** True once a stop was requested: start nothing new. */
  stopping(): boolean;
  excluded(): ReadonlySet<TaskId>;
}

export async function drainLoop(hooks: DrainLoopHooks, slots: number, only: TaskId | undefined): Promise<void> {
  const running = new Map<TaskId, { task: Task; done: Promise<TaskId> }>();
  for (;;) {
    if (!hooks.stopping()) {
      const board = await hooks.readBoard();
      const start = tasksToStart({ board, running: [...running.values()].map((entry) => entry.task), slots, excluded: hooks.excluded(), only });
      for (const task of start) {
        const done = hooks.runTask(task).then(
          () => task.id,
          () => task.id,
        );
        running.set(task.id, { task, done });
      }
    }
    if (running.size === 0) return;
    const finished = await Promise.race([...running.values()].map((entry) => entry.done));
    running.delete(finished);
  }
}
