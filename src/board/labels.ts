// Per-task escalation labels: `model:<id>` and `effort:<level>` override the
// repo's configured model and effort for that one task. Pure.
import type { Task } from '../types.js';

function labelValue(task: Task, prefix: string): string | undefined {
  for (const label of task.labels) {
    if (label.startsWith(prefix)) {
      const value = label.slice(prefix.length).trim();
      if (value) return value;
    }
  }
  return undefined;
}

/** The model a `model:<id>` label asks for (the first such label wins). */
export function modelLabel(task: Task): string | undefined {
  return labelValue(task, 'model:');
}

/** The effort an `effort:<level>` label asks for (the first such label wins). */
export function effortLabel(task: Task): string | undefined {
  return labelValue(task, 'effort:');
}
