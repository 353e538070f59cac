// Which tasks may run now, in which order, and why every other one may not.
// Pure: the board in, the verdict out.
//
// Ready = status "To Do", every dependency "Done", no `risk:needs-human`
// label, no `parked` label. Order: priority high, medium, low, none; then
// ordinal (tasks without one after those with one); then the number in the id
// (TASK-2 before TASK-10).
import type { Board, NotReadyReason, Readiness, Task, TaskId } from '../types.js';
import { isParked, parkedReason } from './parking.js';

const READY_STATUS = 'To Do';
export const DONE_STATUS = 'Done';
/** The status an agent (or the drain) sets when a task needs a human. */
export const BLOCKED_STATUS = 'Blocked';
const NEEDS_HUMAN_LABEL = 'risk:needs-human';

export function assessReadiness(board: Board): Readiness {
  const statusById = new Map<string, string>();
  for (const task of board.tasks) statusById.set(task.id.toUpperCase(), task.status);
  // A dependency on an unreadable task blocks: its status cannot be known.
  for (const entry of board.unreadable) {
    if (entry.id && !statusById.has(entry.id.toUpperCase())) statusById.set(entry.id.toUpperCase(), 'unreadable');
  }
  const ready: Task[] = [];
  const notReady: Readiness['notReady'][number][] = [];
  for (const task of [...board.tasks].sort(compareTasks)) {
    const reasons = reasonsNotReady(task, statusById);
    if (reasons.length === 0) ready.push(task);
    else notReady.push({ id: task.id, file: task.file, title: task.title, reasons });
  }
  for (const entry of [...board.unreadable].sort((a, b) => compareText(a.file, b.file))) {
    notReady.push({ id: entry.id ?? '', file: entry.file, title: '', reasons: [{ kind: 'unreadable', reason: entry.reason }] });
  }
  return { ready, notReady };
}

function reasonsNotReady(task: Task, statusById: ReadonlyMap<string, string>): NotReadyReason[] {
  if (task.status === DONE_STATUS) return [{ kind: 'done' }];
  const reasons: NotReadyReason[] = [];
  if (task.status !== READY_STATUS) reasons.push({ kind: 'status', status: task.status });
  for (const dependency of task.dependencies) {
    const status = statusById.get(dependency.toUpperCase());
    if (status === undefined) reasons.push({ kind: 'missing-dependency', dependency });
    else if (status !== DONE_STATUS) reasons.push({ kind: 'blocked-by', dependency, dependencyStatus: status });
  }
  if (task.labels.includes(NEEDS_HUMAN_LABEL)) reasons.push({ kind: 'needs-human' });
  if (isParked(task)) reasons.push({ kind: 'parked', note: parkedReason(task) });
  return reasons;
}

export function describeReason(reason: NotReadyReason): string {
  switch (reason.kind) {
    case 'done':
      return 'Done';
    case 'status':
      return `status ${reason.status}`;
    case 'blocked-by':
      return `blocked by ${reason.dependency} (${reason.dependencyStatus})`;
    case 'missing-dependency':
      return `depends on ${reason.dependency}, which does not exist`;
    case 'needs-human':
      return 'needs a human';
    case 'parked':
      return reason.note ? `parked: ${reason.note}` : 'parked';
    case 'unreadable':
      return `unreadable: ${reason.reason}`;
  }
}

const PRIORITY_RANK = { high: 0, medium: 1, low: 2 } as const;

/** The board order: priority, then ordinal, then the id's numbers. */
function compareTasks(a: Task, b: Task): number {
  const byPriority = (a.priority ? PRIORITY_RANK[a.priority] : 3) - (b.priority ? PRIORITY_RANK[b.priority] : 3);
  if (byPriority) return byPriority;
  const byOrdinal = (a.ordinal ?? Number.POSITIVE_INFINITY) - (b.ordinal ?? Number.POSITIVE_INFINITY);
  if (byOrdinal) return byOrdinal;
  return compareIds(a.id, b.id);
}

/** TASK-2 before TASK-10, TASK-3 before TASK-3.1; the prefix breaks ties. */
export function compareIds(a: TaskId, b: TaskId): number {
  const numbersOf = (id: TaskId) => (id.slice(id.lastIndexOf('-') + 1).match(/\d+/g) ?? []).map(Number);
  const left = numbersOf(a);
  const right = numbersOf(b);
  for (let i = 0; i < Math.max(left.length, right.length); i++) {
    const difference = (left[i] ?? -1) - (right[i] ?? -1);
    if (difference) return difference;
  }
  return compareText(a.toUpperCase(), b.toUpperCase());
}

function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
