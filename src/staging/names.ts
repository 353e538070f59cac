// The names of the runner's branches, defined once: the staging branch every
// drain integrates into, and one branch per task beside it. Pure constants,
// safe to import from anywhere (control, tui, backends).

/** The staging branch: gated landings accumulate here until promote. */
export const STAGING_BRANCH = 'auto/work';

/** The staging branch's full ref. */
export const STAGING_REF = `refs/heads/${STAGING_BRANCH}`;

/** Every branch the runner makes starts with this. */
export const TASK_BRANCH_PREFIX = 'auto/';

/** A task's branch: `auto/<id>`. */
export function taskBranch(taskId: string): string {
  return `${TASK_BRANCH_PREFIX}${taskId}`;
}

/** Pure: the task id of a task branch (`auto/TASK-3` -> `TASK-3`). */
export function taskIdOfBranch(branch: string): string {
  return branch.slice(TASK_BRANCH_PREFIX.length);
}
