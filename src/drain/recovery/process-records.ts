// The records of the processes a drain starts (agents, setup commands, the
// gate), kept under the workspace's state dir so that the next drain, or
// root's fleet view, can tell a live one from an orphan.
import * as path from 'node:path';
import type { TaskId } from '../../types.js';
import type { FsPort, Ports } from '../../ports.js';
import type { AgentProcessEvent } from '../../agent/run-task.js';
import { Mutex } from '../mutex.js';
import { processRecordFile, processRecordsDir } from '../../paths.js';

/** What a drain starts and records: agents, tasks' setup commands, the gate. */
export type RecordedProcessKind = 'agent' | 'setup' | 'gate';

export interface ProcessRecord {
  /** undefined: a process of another identity (root started it for the drain): shown, never signalled from here. */
  readonly pid: number | undefined;
  readonly startTime: string | undefined;
  readonly kind: RecordedProcessKind;
  /** The task it works for (the task being gated, for a gate). */
  readonly taskId: string;
  /** The record's file, removed once the process is gone. */
  readonly file: string;
}

/** A task id as it may appear in a record file name and body. */
const TASK_ID = /^[A-Za-z][A-Za-z0-9._-]{0,63}$/;
/** Bigger than any record the tracker writes: more is not a record. */
export const MAX_PROCESS_RECORD_BYTES = 4096;

/**
 * Pure: one record file's text to a record, or undefined when it is not one
 * (half-written, foreign, malformed). The one validation for every reader:
 * orchestrate (its own records) and root's fleet view (records the repo user
 * can write: hostile input, displayed, never acted on).
 */
export function parseProcessRecord(name: string, text: string, file: string): ProcessRecord | undefined {
  if (!name.endsWith('.json')) return undefined;
  let value: { pid?: unknown; startTime?: unknown; taskId?: unknown; kind?: unknown };
  try {
    value = JSON.parse(text) as typeof value;
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const launched = value.pid === null;
  if (!launched && (typeof value.pid !== 'number' || !Number.isInteger(value.pid) || value.pid <= 1)) return undefined;
  const kind: RecordedProcessKind = value.kind === 'setup' || value.kind === 'gate' ? value.kind : 'agent';
  const taskId = value.taskId ?? (kind === 'agent' ? name.slice(0, -'.json'.length) : undefined);
  if (typeof taskId !== 'string' || !TASK_ID.test(taskId)) return undefined;
  const startTime =
    typeof value.startTime === 'string' && /^\d{1,20}$/.test(value.startTime) ? value.startTime : undefined;
  return { pid: launched ? undefined : (value.pid as number), startTime, kind, taskId, file };
}

/**
 * The agents a drain recorded as running (read by orchestrate, as the user, in its own state dir); malformed records
 * are skipped.
 */
export async function readProcessRecords(fs: FsPort, workspaceState: string): Promise<ProcessRecord[]> {
  const dir = processRecordsDir(workspaceState);
  const records: ProcessRecord[] = [];
  for (const name of (await fs.list(dir)).sort()) {
    const file = path.join(dir, name);
    const record = parseProcessRecord(name, (await fs.readTextIfExists(file).catch(() => undefined)) ?? '', file);
    if (record) records.push(record);
  }
  return records;
}

/** Pure: the record file's name: the task id for an agent (what fleet lists), prefixed for the others. */
function recordName(kind: RecordedProcessKind, taskId: TaskId): string {
  return kind === 'agent' ? taskId : kind === 'setup' ? `setup.${taskId}` : 'gate';
}

/**
 * The processes of this drain (agents, setup commands, the gate): a record
 * file per running one (for whoever cleans up after a crash) and the means
 * to stop the agents (for a stop request).
 */
export class ProcessTracker {
  private readonly running = new Map<TaskId, AgentProcessEvent['signalGroup']>();
  /** Record writes in event order: a process that ends at once must not leave its record behind. */
  private readonly writes = new Mutex();

  constructor(
    private readonly ports: Pick<Ports, 'fs' | 'process' | 'clock'>,
    private readonly workspaceState: string,
    private readonly runId: string,
  ) {}

  update(taskId: TaskId, event: AgentProcessEvent, kind: RecordedProcessKind = 'agent'): Promise<void> {
    if (kind === 'agent') {
      if (event.ended) this.running.delete(taskId);
      else this.running.set(taskId, event.signalGroup);
    }
    return this.writes.run(() => this.write(taskId, event, kind));
  }

  private async write(taskId: TaskId, event: AgentProcessEvent, kind: RecordedProcessKind): Promise<void> {
    const file = processRecordFile(this.workspaceState, recordName(kind, taskId));
    if (event.ended) return this.ports.fs.remove(file);
    // A process another identity runs (started by root's launcher) is recorded without a pid, for fleet to show: this
    // uid could not signal it anyway, and the run's end sweep ends it.
    const own = event.pid > 0;
    const startTime = own ? await this.ports.process.startTimeOf(event.pid) : undefined;
    const record = {
      pid: own ? event.pid : null,
      startTime,
      kind,
      taskId,
      runId: this.runId,
      startedAt: new Date(this.ports.clock.now()).toISOString(),
    };
    await this.ports.fs.writeAtomic(file, `${JSON.stringify(record)}\n`, 0o600);
  }

  signalAll(signal: 'SIGTERM' | 'SIGKILL'): void {
    for (const signalGroup of this.running.values()) signalGroup(signal);
  }
}
