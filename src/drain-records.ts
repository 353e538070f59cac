// Files a drain keeps under the workspace's state dir.
import * as path from 'node:path';
import type { TaskId } from './types.js';

/** The last drain's summary (status shows it). */
export function lastDrainFile(workspaceState: string): string {
  return path.join(workspaceState, 'last-drain.json');
}

/** One file per running agent: pid and kernel start time, for the watcher to reap after a crash. */
export function agentRecordFile(workspaceState: string, taskId: TaskId): string {
  return path.join(workspaceState, 'agents', `${taskId}.json`);
}
