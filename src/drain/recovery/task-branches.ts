// What a killed drain leaves behind, cleaned up before the next one starts:
// task branches and worktrees of tasks that are not running. Each leftover
// branch is judged (verdict/leftover.ts): finished work (the branch's task
// says Done) is handed back for integration; landed work is only tidied;
// unfinished or empty work is dropped, since the task is still To Do on
// auto/work and simply runs again. Parked tasks keep theirs for inspection,
// unless this drain reset auto/work: then every leftover branch grew from
// discarded work and is dropped.
import * as path from 'node:path';
import type { Ports } from '../../ports.js';
import type { Git } from '../../git/git.js';
import type { Task } from '../../types.js';
import type { Mutex } from '../mutex.js';
import { readBoard, findTask } from '../../board/read.js';
import { isUnreadable, parseTaskFile } from '../../board/parse.js';
import { branchOnStaging } from '../../staging/branch.js';
import { taskIdOfBranch } from '../../staging/names.js';
import { listTaskBranches, removeTaskWorktree } from '../../staging/task-branches.js';
import { stagingWorktree, worktreesDir } from '../../paths.js';
import { judgeLeftover, strayWorktreeFolders } from '../verdict/index.js';
import { showFileAt } from '../../git/objects.js';
import { pruneWorktrees } from '../../git/worktree.js';

export interface RecoveryInput {
  readonly ports: Ports;
  readonly git: Git;
  readonly workspace: string;
  readonly stagingDir: string;
  readonly refs: Mutex;
  /** This drain reset auto/work to the base: every leftover branch grew from discarded work. */
  readonly stagingReset: boolean;
}

export interface RecoveryResult {
  readonly notes: readonly string[];
  readonly toIntegrate: readonly Task[];
}

/** The task's status as a branch has its file; undefined when the file is missing or unreadable. */
async function statusOnBranch(git: Git, workspace: string, branch: string, file: string): Promise<string | undefined> {
  const text = await showFileAt(git, workspace, branch, file);
  if (text === undefined) return undefined;
  const parsed = parseTaskFile(file, text);
  return isUnreadable(parsed) ? undefined : parsed.status;
}

export async function recoverTaskBranches(input: RecoveryInput): Promise<RecoveryResult> {
  const { git, workspace } = input;
  const notes: string[] = [];
  const toIntegrate: Task[] = [];
  const keep = new Set<string>([path.basename(stagingWorktree(workspace))]);
  const board = await readBoard(input.ports.fs, input.stagingDir);
  for (const branch of await listTaskBranches(git, workspace)) {
    const taskId = taskIdOfBranch(branch);
    const task = findTask(board, taskId);
    const verdict = judgeLeftover({
      branch,
      task,
      onStaging: await branchOnStaging(git, workspace, branch),
      stagingReset: input.stagingReset,
      statusOnBranch: task ? await statusOnBranch(git, workspace, branch, task.file) : undefined,
    });
    if (verdict.kind === 'keep-parked' || verdict.kind === 'integrate') keep.add(taskId);
    else await removeTaskWorktree(input, taskId, true);
    if (verdict.kind === 'integrate') toIntegrate.push(verdict.task);
    if (verdict.kind !== 'keep-parked') notes.push(verdict.note);
  }
  // Folders no git worktree claims any more (a crash between mkdir and worktree add).
  const root = worktreesDir(workspace);
  for (const name of strayWorktreeFolders(await input.ports.fs.list(root), keep)) {
    await input.ports.fs.remove(path.join(root, name));
    await pruneWorktrees(git, workspace);
  }
  return { notes, toIntegrate };
}
