// Area leases: a task labelled `area:<name>` holds that area while it runs, so
// two tasks touching the same area never run at once. Unlabelled tasks hold
// nothing and never conflict. Pure.
import type { Task } from '../types.js';

/** The areas a task leases, lower-cased and without duplicates. */
export function areasOf(task: Task): string[] {
  const areas = new Set<string>();
  for (const label of task.labels) {
    if (!label.startsWith('area:')) continue;
    const area = label.slice('area:'.length).trim().toLowerCase();
    if (area) areas.add(area);
  }
  return [...areas];
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
  const runningIds = new Set(running.map((task) => task.id.toUpperCase()));
  for (const task of ready) {
    if (picked.length >= slots) break;
    if (runningIds.has(task.id.toUpperCase())) continue;
    if (running.some((other) => leasesConflict(task, other))) continue;
    if (picked.some((other) => leasesConflict(task, other))) continue;
    picked.push(task);
  }
  return picked;
}
