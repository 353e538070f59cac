// Applies a pure text edit to one task file on disk: read, edit, write
// atomically (readers see the old file or the new one, never half).
import * as path from 'node:path';
import type { FsPort } from '../ports.js';
import type { Task } from '../types.js';
import { FailedError } from '../errors.js';
import { findBoardOnDisk } from './read.js';
import { ensureBlockedStatus } from './edit.js';
import { MAX_TASK_FILE_BYTES, tooLarge } from './parse.js';

/** Returns whether the file changed (an edit that changes nothing writes nothing). */
export async function updateTaskFile(
  fs: FsPort,
  workspace: string,
  task: Pick<Task, 'id' | 'file'>,
  edit: (text: string) => string,
): Promise<boolean> {
  const full = path.join(workspace, task.file);
  const stat = await fs.stat(full);
  if (!stat) throw new FailedError(`${task.file}: the file of ${task.id} is gone; read the board again`);
  if (stat.size > MAX_TASK_FILE_BYTES) throw new FailedError(`${task.file}: ${tooLarge(stat.size)}`);
  const before = await fs.readText(full);
  let after: string;
  try {
    after = edit(before);
  } catch (error) {
    throw new FailedError(
      `${task.file}: cannot edit ${task.id}: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  if (after === before) return false;
  await fs.writeAtomic(full, after);
  return true;
}

/**
 * Adds "Blocked" before the finished status of the board's config (wherever
 * the board lives). Returns the config file (relative to the workspace) when
 * it changed, undefined when it already had Blocked in place.
 */
export async function ensureBlockedStatusFile(fs: FsPort, workspace: string): Promise<string | undefined> {
  const location = await findBoardOnDisk(fs, workspace);
  if (!location.configFile)
    throw new FailedError(
      `${path.join(workspace, location.dir)} has no config.yml; run \`backlog init\` in ${workspace}`,
    );
  const full = path.join(workspace, location.configFile);
  const before = await fs.readText(full);
  const after = ensureBlockedStatus(before, location.configFile);
  if (after === before) return undefined;
  await fs.writeAtomic(full, after);
  return location.configFile;
}
