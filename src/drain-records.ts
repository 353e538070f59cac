// Files a drain keeps under the workspace's state dir.
import * as path from 'node:path';
import type { TaskId } from './types.js';
import type { FsPort } from './ports.js';

/** The last drain's summary (status shows it). */
export function lastDrainFile(workspaceState: string): string {
  return path.join(workspaceState, 'last-drain.json');
}

/** One file per running agent: pid and kernel start time, for the watcher to reap after a crash. */
export function agentRecordFile(workspaceState: string, taskId: TaskId): string {
  return path.join(workspaceState, 'agents', `${taskId}.json`);
}

export interface AgentRecord {
  readonly pid: number;
  readonly startTime: string | undefined;
  readonly taskId: string;
  /** The record's file, removed once the agent is gone. */
  readonly file: string;
}

/** The agents a drain recorded as running; malformed records are skipped. */
export async function readAgentRecords(fs: FsPort, workspaceState: string): Promise<AgentRecord[]> {
  const dir = path.join(workspaceState, 'agents');
  const records: AgentRecord[] = [];
  for (const name of (await fs.list(dir)).filter((entry) => entry.endsWith('.json')).sort()) {
    const file = path.join(dir, name);
    try {
      const value = JSON.parse((await fs.readTextIfExists(file)) ?? '') as { pid?: unknown; startTime?: unknown; taskId?: unknown };
      if (typeof value.pid === 'number' && Number.isInteger(value.pid) && value.pid > 1) {
        records.push({ pid: value.pid, startTime: typeof value.startTime === 'string' ? value.startTime : undefined, taskId: String(value.taskId ?? name.replace(/\.json$/, '')), file });
      }
    } catch {
      // half-written or removed meanwhile: nothing to signal
    }
  }
  return records;
}
