// Files a drain keeps under the workspace's state dir.
import * as path from 'node:path';
import type { TaskId } from './types.js';
import type { FsPort, Ports } from './ports.js';
import type { AgentProcessEvent } from './run.js';
import { Mutex } from './mutex.js';

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

/**
 * The agents of this drain: a record file per running agent (for whoever
 * cleans up after a crash) and the means to stop them all (for a stop request).
 */
export class AgentTracker {
  private readonly running = new Map<TaskId, AgentProcessEvent['signalGroup']>();
  /** Record writes in event order: an agent that ends at once must not leave its record behind. */
  private readonly writes = new Mutex();

  constructor(
    private readonly ports: Pick<Ports, 'fs' | 'process' | 'clock'>,
    private readonly workspaceState: string,
    private readonly runId: string,
  ) {}

  update(taskId: TaskId, event: AgentProcessEvent): Promise<void> {
    if (event.ended) this.running.delete(taskId);
    else this.running.set(taskId, event.signalGroup);
    return this.writes.run(() => this.write(taskId, event));
  }

  private async write(taskId: TaskId, event: AgentProcessEvent): Promise<void> {
    const file = agentRecordFile(this.workspaceState, taskId);
    if (event.ended) return this.ports.fs.remove(file);
    const startTime = await this.ports.process.startTimeOf(event.pid);
    const record = { pid: event.pid, startTime, taskId, runId: this.runId, startedAt: new Date(this.ports.clock.now()).toISOString() };
    await this.ports.fs.writeAtomic(file, `${JSON.stringify(record)}\n`, 0o600);
  }

  signalAll(signal: 'SIGTERM' | 'SIGKILL'): void {
    for (const signalGroup of this.running.values()) signalGroup(signal);
  }
}
