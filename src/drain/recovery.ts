// What a killed drain leaves behind, cleaned up before the next one starts:
// task branches and worktrees of tasks that are not running. Finished work
// (the branch's task says Done) is handed back for integration; landed work is
// only tidied; unfinished work is dropped, since the task is still To Do on
// auto/work and simply runs again. Parked tasks keep theirs for inspection.
import * as path from 'node:path';
import type { Ports } from '../ports.js';
import type { Git } from '../git/git.js';
import type { Task } from '../types.js';
import type { Mutex } from './mutex.js';
import { readBoard, findTask } from '../board/read.js';
import { isUnreadable, parseTaskFile } from '../board/parse.js';
import { isParked } from '../board/parking.js';
import { isMergedIntoStaging, STAGING_BRANCH, TASK_BRANCH_PREFIX } from '../staging/branch.js';
import { removeTaskWorktree } from './task-worker.js';
import { worktreesDir } from '../paths.js';

export interface RecoveryInput {
  readonly ports: Ports;
  readonly git: Git;
  readonly workspace: string;
  readonly stagingDir: string;
  readonly refs: Mutex;
}

export interface RecoveryResult {
  readonly notes: readonly string[];
  readonly toIntegrate: readonly Task[];
}

export async function listTaskBranches(git: Git, workspace: string): Promise<string[]> {
  const out = await git.run(workspace, ['for-each-ref', '--format=%(refname:short)', `refs/heads/${TASK_BRANCH_PREFIX}`]);
  return out.split('\n').map((line) => line.trim()).filter((name) => name && name !== STAGING_BRANCH);
}

async function statusOnBranch(git: Git, workspace: string, branch: string, file: string): Promise<string | undefined> {
  const shown = await git.try(workspace, ['show', `${branch}:${file}`]);
  if (shown.exitCode !== 0) return undefined;
  const parsed = parseTaskFile(file, shown.stdout);
  return isUnreadable(parsed) ? undefined : parsed.status;
}

export async function recoverTaskBranches(input: RecoveryInput): Promise<RecoveryResult> {
  const { git, workspace } = input;
  const notes: string[] = [];
  const toIntegrate: Task[] = [];
  const keep = new Set<string>(['staging']);
  const board = await readBoard(input.ports.fs, input.stagingDir);
  for (const branch of await listTaskBranches(git, workspace)) {
    const taskId = branch.slice(TASK_BRANCH_PREFIX.length);
    const task = findTask(board, taskId);
    if (task && isParked(task)) {
      keep.add(taskId);
      continue;
    }
    if (await isMergedIntoStaging(git, workspace, branch)) {
      await removeTaskWorktree(input, taskId, true);
      notes.push(`${branch}: already landed; removed the branch`);
      continue;
    }
    if (task && (await statusOnBranch(git, workspace, branch, task.file)) === 'Done') {
      keep.add(taskId);
      toIntegrate.push(task);
      notes.push(`${branch}: finished by an interrupted drain; integrating it now`);
      continue;
    }
    await removeTaskWorktree(input, taskId, true);
    notes.push(`${branch}: unfinished work of an interrupted drain removed; ${task ? `${task.id} runs again` : 'no such task on auto/work'}`);
  }
  // Folders no git worktree claims any more (a crash between mkdir and worktree add).
  const root = worktreesDir(workspace);
  for (const name of await input.ports.fs.list(root)) {
    if (keep.has(name) || name.startsWith('.')) continue;
    await input.ports.fs.remove(path.join(root, name));
    await git.try(workspace, ['worktree', 'prune']);
  }
  return { notes, toIntegrate };
}
