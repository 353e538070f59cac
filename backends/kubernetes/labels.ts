// The labels every object agent-runner creates in a cluster carries, and the one rule that turns a repo name, run id,
// task id or attempt into a label value. Both the manifests and the runtime (watch, cleanup) select by these, so they
// are spelled once, here. Pure.

export const LABEL_REPO = 'agent-runner/repo';
export const LABEL_RUN = 'agent-runner/run';
export const LABEL_TASK = 'agent-runner/task';
export const LABEL_ATTEMPT = 'agent-runner/attempt';
export const LABEL_MANAGED_BY = 'app.kubernetes.io/managed-by';
export const MANAGED_BY = 'agent-runner';

/** The API server's label value syntax: at most 63 characters, alphanumeric at both ends, `-_.` inside. */
const LABEL_VALUE = /^(?:[A-Za-z0-9](?:[-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)$/;

export class LabelValueError extends Error {
  constructor(
    readonly raw: string,
    readonly what: string,
  ) {
    super(
      `${what} ${JSON.stringify(raw)} cannot be a Kubernetes label value (at most 63 characters of ` +
        'A-Z a-z 0-9 - _ ., starting and ending with a letter or digit): rename it to fit',
    );
    this.name = 'LabelValueError';
  }
}

/** `raw` as a label value, unchanged: a value the syntax refuses is refused here, never altered to fit. */
export function labelValue(raw: string, what = 'the value'): string {
  if (!LABEL_VALUE.test(raw)) throw new LabelValueError(raw, what);
  return raw;
}

export interface TaskAttemptLabels {
  readonly repo: string;
  readonly run: string;
  readonly task: string;
  readonly attempt: number;
}

/** The labels of one task attempt's objects (its Job, its Secret). */
export function taskAttemptLabels(of: TaskAttemptLabels): Record<string, string> {
  return {
    [LABEL_REPO]: labelValue(of.repo, 'the repo name'),
    [LABEL_RUN]: labelValue(of.run, 'the run id'),
    [LABEL_TASK]: labelValue(of.task, 'the task id'),
    [LABEL_ATTEMPT]: labelValue(String(of.attempt), 'the attempt'),
    [LABEL_MANAGED_BY]: MANAGED_BY,
  };
}

/** A label selector for every object of a repo ("k=v,k=v"), optionally narrowed to one run. */
export function repoSelector(repo: string, run?: string): string {
  const parts = [`${LABEL_MANAGED_BY}=${MANAGED_BY}`, `${LABEL_REPO}=${labelValue(repo, 'the repo name')}`];
  if (run !== undefined) parts.push(`${LABEL_RUN}=${labelValue(run, 'the run id')}`);
  return parts.join(',');
}
