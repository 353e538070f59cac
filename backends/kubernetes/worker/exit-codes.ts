// How the pod worker ends, as its exit code: the agent container's code is
// what the Job's failed condition and jobOutcome carry back to the drain,
// with the one-line reason from the termination log. Pure.

export const POD_WORKER_EXIT = {
  /** The task is Done and its branch was pushed to the attempt's result ref. */
  done: 0,
  /** The worker's settings or environment are wrong (a Job not built by the drain). */
  settings: 2,
  /** The clone is not at AGENT_RUNNER_BASE_COMMIT. */
  baseMismatch: 3,
  /** The repo's setup command failed. */
  setupFailed: 4,
  /** The agent failed, stalled, did not finish, or left the task unreadable. */
  agentFailed: 5,
  /** The task says Blocked; nothing was pushed. */
  blocked: 6,
  /** The result endpoint refused the push (or could not be reached). */
  pushRefused: 7,
} as const;

export type PodWorkerEnding = keyof typeof POD_WORKER_EXIT;

/** Pure: what an agent container's exit code says (1 and signals: the worker itself crashed or was killed). */
export function podWorkerEnding(exitCode: number): PodWorkerEnding | 'crashed' {
  const found = (Object.keys(POD_WORKER_EXIT) as PodWorkerEnding[]).find((key) => POD_WORKER_EXIT[key] === exitCode);
  return found ?? 'crashed';
}
