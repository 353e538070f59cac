// Labels as the Backlog.md CLI compares them: trimmed and case-insensitive
// (`Risk:Needs-Human` is `risk:needs-human`, `Area:API` is `area:api`). The
// per-task escalation labels `model:<id>` and `effort:<level>` override the
// repo's model and effort for one task. Pure.
import type { LabelProblem, Task } from '../types.js';

/** A label as the CLI compares it: trimmed, lower-cased. */
export function normalizeLabel(label: string): string {
  return label.trim().toLowerCase();
}

/** Whether the task carries `label` (compared as the CLI does). */
export function hasLabel(task: Pick<Task, 'labels'>, label: string): boolean {
  const wanted = normalizeLabel(label);
  return task.labels.some((candidate) => normalizeLabel(candidate) === wanted);
}

/** The values of every `<prefix><value>` label, prefix matched case-insensitively, values trimmed as written. */
export function labelValues(task: Pick<Task, 'labels'>, prefix: string): string[] {
  const wanted = prefix.toLowerCase();
  const values: string[] = [];
  for (const label of task.labels) {
    const trimmed = label.trim();
    if (!trimmed.toLowerCase().startsWith(wanted)) continue;
    const value = trimmed.slice(wanted.length).trim();
    if (value) values.push(value);
  }
  return values;
}

/** The model a `model:<id>` label asks for (the first such label wins). */
export function modelLabel(task: Task): string | undefined {
  return labelValues(task, 'model:')[0];
}

/** The effort an `effort:<level>` label asks for (the first such label wins). */
export function effortLabel(task: Task): string | undefined {
  return labelValues(task, 'effort:')[0];
}

/** The one risk label the runner understands: never start the task, a human does it. */
export const NEEDS_HUMAN_LABEL = 'risk:needs-human';

/**
 * The `risk:*` labels of a task that make it a human's. Any risk label the
 * runner does not understand counts too (`risk:high`, `Risk:Needs Human`, a
 * bare `risk:`): a risk label is a warning, and a misspelt warning must fail
 * closed, never let the task run.
 */
export function needsHumanLabels(task: Pick<Task, 'labels'>): string[] {
  return task.labels.filter((label) => /^risk\s*:/.test(normalizeLabel(label)));
}

/**
 * A label its assistant cannot take, in words: the label (quoted: it is the repo's text), what is wrong and the fix.
 * `next`, the drain and a run all say it so.
 */
export function describeLabelProblem(problem: LabelProblem): string {
  return `label ${JSON.stringify(problem.label)} ${problem.problem}; fix: ${problem.fix}`;
}
