// Area leases: a task labelled `area:<name>` holds that area while it runs, so
// two tasks touching the same area never run at once. Unlabelled tasks hold
// nothing and never conflict. Pure.
import type { Task } from '../types.js';
import { labelValues } from './labels.js';
import { canonicalTaskId } from './task-id.js';

/** The areas a task leases, lower-cased and without duplicates (`Area:API` is `area:api`). */
export function areasOf(task: Task): string[] {
  return [...new Set(labelValues(task, 'area:').map((area) => area.toLowerCase()))];
}

export function leasesConflict(a: Task, b: Task): boolean {
  const areasOfB = new Set(areasOf(b));
  return areasOf(a).some((area) => areasOfB.has(area));
}

/**
 * Up to `slots` tasks from `ready`, in its order, skipping any task that is
 * already running or whose areas overlap a running or already-picked task.
 */
export function pickRunnable(ready: readonly Task[], running: readonly Task[], slots: number): Task[] {
  const picked: Task[] = [];
  const runningIds = new Set(running.map((task) => canonicalTaskId(task.id)));
  for (const task of ready) {
    if (picked.length >= slots) break;
    if (runningIds.has(canonicalTaskId(task.id))) continue;
    if (running.some((other) => leasesConflict(task, other))) continue;
    if (picked.some((other) => leasesConflict(task, other))) continue;
    picked.push(task);
  }
  return picked;
}
