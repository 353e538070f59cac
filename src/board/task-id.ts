// Task identity as the Backlog.md CLI decides it (src/utils/task-id.ts
// upstream): the prefix ignores case and the numbers ignore leading zeros, so
// `task-03`, `TASK-3` and `Task-0003` are one task. Pure.
import type { TaskId } from '../types.js';

/** The identity two ids share when they name one task: `TASK-3.1` for `task-03.01`. */
export function canonicalTaskId(id: TaskId): string {
  const trimmed = id.trim();
  const match = /^([A-Za-z][A-Za-z0-9]*)-(\d+(?:\.\d+)*)$/.exec(trimmed);
  if (!match) return trimmed.toUpperCase();
  const numbers = match[2]!.split('.').map((part) => part.replace(/^0+(?=\d)/, ''));
  return `${match[1]!.toUpperCase()}-${numbers.join('.')}`;
}

export function sameTaskId(a: TaskId, b: TaskId): boolean {
  return canonicalTaskId(a) === canonicalTaskId(b);
}

/** The CLI's task prefix when config.yml sets none. */
export const DEFAULT_TASK_PREFIX = 'task';

/**
 * Whether the CLI lists `name` as a task file: `<prefix>-*.md` with the
 * configured prefix lower-cased (its glob is case-sensitive). A `readme.md`
 * beside the tasks is not a task, and not an unreadable one either.
 */
export function isTaskFileName(name: string, prefix: string = DEFAULT_TASK_PREFIX): boolean {
  return name.startsWith(`${prefix.toLowerCase()}-`) && name.endsWith('.md');
}
