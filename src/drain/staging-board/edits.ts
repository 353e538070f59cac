// The board edits a drain commits onto auto/work, all in the staging
// worktree and under the integrator's mutex: a task parked (label and note)
// or blocked (status and reason), and the Blocked status itself put into
// the board's config before any agent needs it. Unparking, the operator's
// edit, is unpark.ts beside this.
//
// The Blocked status exists before any agent needs it. A fresh `backlog
// init` lists To Do, In Progress, Done, and the CLI refuses `-s Blocked`
// ("Invalid status: Blocked") until the board's config lists it; it must also
// come before the finished (last) status, or the CLI shows a blocked
// dependency as completed. So each drain puts it in place on auto/work, in
// its own commit, before the first task worktree is cut from it.
import type { FsPort } from '../../ports.js';
import type { Git } from '../../git/git.js';
import type { TaskId } from '../../types.js';
import { findBoardOnDisk, findTask, readBoard } from '../../board/read.js';
import { ensureBlockedStatusFile, updateTaskFile } from '../../board/write.js';
import { addLabel, appendNote, setStatus } from '../../board/edit.js';
import { NO_REASON, PARKED_LABEL, parkNote } from '../../board/parking.js';
import { isUnreadable, lastBlockedParagraph, parseTaskFile } from '../../board/parse.js';
import { BLOCKED_STATUS } from '../../board/readiness.js';
import { commitIndex, stagePaths } from '../../git/tree.js';
import type { StagingTip } from '../../staging/tip.js';
import { resolveCommit } from '../../git/refs.js';

/** What a board edit on auto/work needs: the files and git (an IntegratorDeps will do). */
export interface BoardEditDeps {
  readonly fs: FsPort;
  readonly git: Git;
  /** auto/work as the runner last wrote it: an edit is committed by compare-and-swap from it. */
  readonly tip: StagingTip;
}

/**
 * Edits one task's file on auto/work (with the board's own size guard) and
 * commits it (park, block). Returns the commit, or undefined when the task is gone.
 */
async function commitTaskEdit(
  deps: BoardEditDeps,
  stagingDir: string,
  taskId: TaskId,
  edit: (text: string) => string,
  message: string,
  alsoEnsureBlockedStatus = false,
): Promise<string | undefined> {
  // The board edited is auto/work's as the runner last wrote it, and the commit moves it from there.
  await deps.tip.verify();
  const board = await readBoard(deps.fs, stagingDir);
  const task = findTask(board, taskId);
  if (!task) return undefined;
  if (!(await updateTaskFile(deps.fs, stagingDir, task, edit))) return deps.tip.current;
  await stagePaths(deps.git, stagingDir, [task.file]);
  // The backlog CLI refuses a status its config does not list.
  const config = alsoEnsureBlockedStatus ? await ensureBlockedStatusFile(deps.fs, stagingDir) : undefined;
  if (config) await stagePaths(deps.git, stagingDir, [config]);
  return deps.tip.commit(message);
}

/** Parks a task on auto/work: label `parked` and a note with the reason and the branch. */
export function parkTask(
  deps: BoardEditDeps,
  stagingDir: string,
  taskId: TaskId,
  reason: string,
  branch: string,
): Promise<string | undefined> {
  const oneLine = reason.replace(/\s+/g, ' ').trim();
  return commitTaskEdit(
    deps,
    stagingDir,
    taskId,
    (text) => appendNote(addLabel(text, PARKED_LABEL), parkNote(oneLine, branch)),
    `Park ${taskId}: ${oneLine.slice(0, 120)}`,
  );
}

/** Commits Blocked and its reason (whole, every line) onto auto/work, so the task stops recurring. */
export function blockTask(
  deps: BoardEditDeps,
  stagingDir: string,
  taskId: TaskId,
  reason: string,
): Promise<string | undefined> {
  const whole = reason.replace(/\r\n?/g, '\n').trim() || NO_REASON;
  const oneLine = whole.replace(/\s+/g, ' ');
  return commitTaskEdit(
    deps,
    stagingDir,
    taskId,
    (text) => {
      const blocked = setStatus(text, BLOCKED_STATUS);
      // Written once: only a Blocked note of the notes already saying it counts (not the reason's words elsewhere in
      // the file).
      const parsed = parseTaskFile('', blocked);
      const notes = isUnreadable(parsed) ? '' : parsed.notes;
      return lastBlockedParagraph(notes.split('\n')) === whole ? blocked : appendNote(blocked, `Blocked: ${whole}`);
    },
    `Block ${taskId}: ${oneLine.slice(0, 120)}`,
    true,
  );
}

/** Returns the new head of auto/work when the config changed, else undefined. */
export async function ensureBlockedOnStaging(fs: FsPort, git: Git, stagingDir: string): Promise<string | undefined> {
  // A board without a config file has only the CLI's defaults; nothing to edit (blocking a task reports it).
  if (!(await findBoardOnDisk(fs, stagingDir)).configFile) return undefined;
  const config = await ensureBlockedStatusFile(fs, stagingDir);
  if (!config) return undefined;
  await stagePaths(git, stagingDir, [config]);
  await commitIndex(git, stagingDir, 'Board: add the Blocked status before the finished one');
  return resolveCommit(git, stagingDir, 'HEAD');
}
