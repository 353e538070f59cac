// Un-parking a task, the edit docs/board.md documents: the `parked` label
// comes off the task on auto/work (its Parked: note stays as history) and
// the edit is committed there, so the next drain picks the task again. Runs
// as the checkout's owner under the workspace lock, in the staging worktree
// a drain keeps; the task's failed-attempt count is forgotten with it, so it
// gets its full tries again.
import type { LifecycleInput } from '../../staging/lifecycle.js';
import { FailedError, UsageError } from '../../errors.js';
import { readBoard, findTask } from '../../board/read.js';
import { isParked, PARKED_LABEL } from '../../board/parking.js';
import { removeLabel, setUpdatedDate, backlogTimestamp } from '../../board/edit.js';
import { updateTaskFile } from '../../board/write.js';
import { stagePaths, commitIndex, isDirty } from '../../git/tree.js';
import { currentBranch, resolveCommit } from '../../git/refs.js';
import { stagingWorktree, workspaceStateDir } from '../../paths.js';
import { STAGING_BRANCH } from '../../staging/names.js';
import { forget, readAttempts, writeAttempts } from '../attempts.js';

export interface UnparkResult {
  readonly taskId: string;
  readonly unparked: boolean;
  /** The commit on auto/work that un-parked it (the current one when nothing changed). */
  readonly commit: string | undefined;
  readonly detail: string;
}

export async function unparkTask(input: LifecycleInput, taskId: string): Promise<UnparkResult> {
  const { git, ports } = input;
  const dir = stagingWorktree(input.workspace);
  if (!(await ports.fs.stat(dir)))
    throw new UsageError(`${input.workspace} has no staging worktree (${dir}): no drain has run, so no task is parked`);
  if ((await currentBranch(git, dir)) !== STAGING_BRANCH)
    throw new FailedError(
      `${dir} is not on ${STAGING_BRANCH}; run a drain (it repairs the staging worktree), then un-park again`,
    );
  if (await isDirty(git, dir, 'no'))
    throw new FailedError(
      `${dir} has uncommitted changes; run a drain (it repairs the staging worktree), then un-park again`,
    );
  const task = findTask(await readBoard(ports.fs, dir), taskId.toUpperCase());
  if (!task)
    throw new UsageError(`no task ${taskId} on ${STAGING_BRANCH}; "agent-runner status" lists the parked ones`);
  if (!isParked(task))
    return {
      taskId: task.id,
      unparked: false,
      commit: await resolveCommit(git, dir, 'HEAD'),
      detail: `${task.id} is not parked`,
    };
  await updateTaskFile(ports.fs, dir, task, (text) =>
    setUpdatedDate(removeLabel(text, PARKED_LABEL), backlogTimestamp(ports.clock.now())),
  );
  await stagePaths(git, dir, [task.file]);
  await commitIndex(git, dir, `Un-park ${task.id}`);
  const wsState = workspaceStateDir(input.stateDir, input.workspace);
  const attempts = await readAttempts(ports.fs, wsState);
  const remaining = forget(attempts, task.id);
  if (remaining !== attempts) await writeAttempts(ports.fs, wsState, remaining);
  return {
    taskId: task.id,
    unparked: true,
    commit: await resolveCommit(git, dir, 'HEAD'),
    detail: `${task.id} un-parked on ${STAGING_BRANCH}; the next drain picks it again`,
  };
}
