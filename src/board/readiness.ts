// Which tasks may run now, in which order, and why every other one may not.
// Pure: the board in, the verdict out. The rules follow the Backlog.md CLI
// (src/utils/readiness.ts upstream): statuses and labels compare trimmed and
// case-insensitive, ids by their canonical form (task-03 is TASK-3).
//
// Ready = status "To Do", every dependency finished (its file is in
// backlog/completed/, or its status is the board's last configured status),
// no `risk:*` label (risk:needs-human, or any risk label we do not know), no
// `parked` label, and no label the assistant that would run it cannot take
// (a `model:`/`effort:` label; `labels`, the repo's check, says which). A
// dependency that is missing, archived, a draft or claimed by two files is
// unresolved and blocks, as in the CLI. Order: priority high, medium, low,
// none; then ordinal (tasks without one after those with one); then the
// number in the id (TASK-2 before TASK-10).
import type { Board, LabelCheck, NotReadyReason, Readiness, Task, TaskId } from '../types.js';
import { isParked, parkedReason } from './parking.js';
import { describeLabelProblem, needsHumanLabels, NEEDS_HUMAN_LABEL } from './labels.js';
import { canonicalTaskId } from './task-id.js';
import { isFinishedStatus, READY_STATUS, sameStatus } from './status.js';

export { BLOCKED_STATUS, DONE_STATUS } from './status.js';

type Dependency = { readonly finished: true } | { readonly finished: false; readonly status: string };

/**
 * `labels` is the repo's check of escalation labels (repo/escalation.ts labelCheckFor): next, the drain and root's
 * snapshot each pass theirs, so all three apply one rule.
 */
export function assessReadiness(board: Board, labels: LabelCheck): Readiness {
  const dependencies = new Map<string, Dependency | 'ambiguous'>();
  const add = (id: string, entry: Dependency) => {
    const key = canonicalTaskId(id);
    dependencies.set(key, dependencies.has(key) ? 'ambiguous' : entry);
  };
  for (const task of board.tasks)
    add(
      task.id,
      isFinishedStatus(task.status, board.statuses)
        ? { finished: true }
        : { finished: false, status: task.status || 'no status' },
    );
  for (const id of board.completed ?? []) add(id, { finished: true });
  // A dependency on an unreadable task blocks: its status cannot be known.
  for (const entry of board.unreadable) {
    if (entry.id && !dependencies.has(canonicalTaskId(entry.id)))
      dependencies.set(canonicalTaskId(entry.id), { finished: false, status: 'unreadable' });
  }
  const ready: Task[] = [];
  const notReady: Readiness['notReady'][number][] = [];
  for (const task of [...board.tasks].sort(compareTasks)) {
    const reasons = reasonsNotReady(task, board.statuses, dependencies, labels);
    if (reasons.length === 0) ready.push(task);
    else notReady.push({ id: task.id, file: task.file, title: task.title, reasons });
  }
  for (const entry of [...board.unreadable].sort((a, b) => compareText(a.file, b.file))) {
    notReady.push({
      id: entry.id ?? '',
      file: entry.file,
      title: '',
      reasons: [{ kind: 'unreadable', reason: entry.reason }],
    });
  }
  return { ready, notReady };
}

function reasonsNotReady(
  task: Task,
  statuses: readonly string[],
  dependencies: ReadonlyMap<string, Dependency | 'ambiguous'>,
  labels: LabelCheck,
): NotReadyReason[] {
  if (isFinishedStatus(task.status, statuses)) return [{ kind: 'done' }];
  const reasons: NotReadyReason[] = [];
  if (!task.status.trim()) reasons.push({ kind: 'no-status' });
  else if (!sameStatus(task.status, READY_STATUS)) reasons.push({ kind: 'status', status: task.status });
  for (const dependency of task.dependencies) {
    const entry = dependencies.get(canonicalTaskId(dependency));
    if (entry === undefined || entry === 'ambiguous') reasons.push({ kind: 'missing-dependency', dependency });
    else if (!entry.finished) reasons.push({ kind: 'blocked-by', dependency, dependencyStatus: entry.status });
  }
  const risks = needsHumanLabels(task);
  if (risks.length)
    reasons.push(
      risks.every((label) => label.trim().toLowerCase() === NEEDS_HUMAN_LABEL)
        ? { kind: 'needs-human' }
        : { kind: 'needs-human', labels: risks },
    );
  if (isParked(task)) reasons.push({ kind: 'parked', note: parkedReason(task) });
  for (const problem of labels(task)) reasons.push({ kind: 'label', ...problem });
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
      return reason.labels?.length
        ? `needs a human (${reason.labels.join(', ')}: a risk label is not understood, so it counts as risk:needs-human)`
        : 'needs a human';
    case 'no-status':
      return 'no status (set one, e.g. status: To Do)';
    case 'parked':
      return reason.note ? `parked: ${reason.note}` : 'parked';
    case 'unreadable':
      return `unreadable: ${reason.reason}`;
    case 'label':
      return describeLabelProblem(reason);
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
