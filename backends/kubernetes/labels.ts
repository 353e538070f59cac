// The labels on every object agent-runner creates in a cluster: the repo,
// the run, the task and the attempt it belongs to, and who manages it. The
// drain selects its Jobs by them and removes a dead run's objects by them,
// so a value is the raw id itself or nothing: a mapped value could name two
// ids at once and a selector would then match another task's objects.
import { FailedError } from '../../src/errors.js';

export const REPO_LABEL = 'agent-runner/repo';
export const RUN_LABEL = 'agent-runner/run';
export const TASK_LABEL = 'agent-runner/task';
export const ATTEMPT_LABEL = 'agent-runner/attempt';
export const MANAGED_BY_LABEL = 'app.kubernetes.io/managed-by';
export const MANAGED_BY = 'agent-runner';

/** The label value syntax of the API server: at most 63 characters, alphanumeric at both ends. */
export const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
export const LABEL_VALUE_MAX = 63;

/** Pure: why `raw` cannot be a label value, or undefined when it can. */
export function labelValueProblem(raw: string): string | undefined {
  if (raw === '') return 'is empty';
  if (raw.length > LABEL_VALUE_MAX) return `is ${raw.length} characters; a label value has at most ${LABEL_VALUE_MAX}`;
  if (!LABEL_VALUE.test(raw))
    return 'is not a label value (letters, digits, "-", "_" and ".", a letter or digit at both ends)';
  return undefined;
}

/** An id that cannot be written as a label value, so its objects could not be selected. */
export class LabelValueError extends FailedError {
  constructor(
    readonly raw: string,
    readonly problem: string,
  ) {
    super(
      `${JSON.stringify(raw)} ${problem}: Kubernetes objects are labelled with task and run ids as they are; rename the task (its id becomes its label) or run it on the host backend`,
    );
    this.name = 'LabelValueError';
  }
}

/** A task id, run id or repo name as a label value: itself, or a LabelValueError when it cannot be one. */
export function labelValue(raw: string): string {
  const problem = labelValueProblem(raw);
  if (problem !== undefined) throw new LabelValueError(raw, problem);
  return raw;
}

/** What the labels of one task attempt's objects say. */
export interface TaskLabels {
  readonly repo: string;
  readonly run: string;
  readonly task: string;
  readonly attempt: number;
}

/** The labels of one task attempt's Job, pod and Secret. Throws LabelValueError for an id that cannot be one. */
export function taskLabels(of: TaskLabels): Record<string, string> {
  return {
    [MANAGED_BY_LABEL]: MANAGED_BY,
    [REPO_LABEL]: labelValue(of.repo),
    [RUN_LABEL]: labelValue(of.run),
    [TASK_LABEL]: labelValue(of.task),
    [ATTEMPT_LABEL]: labelValue(String(of.attempt)),
  };
}

/** The labels every object of a repo carries: what its NetworkPolicy selects and its orphan sweep lists by. */
export function repoLabels(repo: string): Record<string, string> {
  return { [MANAGED_BY_LABEL]: MANAGED_BY, [REPO_LABEL]: labelValue(repo) };
}

/** A label selector (the list and watch query) for the given labels. */
export function selectorOf(labels: Readonly<Record<string, string>>): string {
  return Object.entries(labels)
    .map(([key, value]) => `${key}=${value}`)
    .join(',');
}

/** The selector of every object of a repo, optionally narrowed to one run: what the watch and the sweep list by. */
export function repoSelector(repo: string, run?: string): string {
  return selectorOf({ ...repoLabels(repo), ...(run === undefined ? {} : { [RUN_LABEL]: labelValue(run) }) });
}
