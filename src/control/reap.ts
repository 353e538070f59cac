// Ending process groups left behind: agents recorded by orchestrate
// (<AGENT_RUNNER_STATE>/workspaces/<key>/agents/<task>.json) and the
// orchestrate process itself. A group is signalled only when its leader's
// pid AND start time still match the record, so a recycled pid is never hit.
import type { Clock, FsPort, ProcessPort } from '../ports.js';
import type { ProcessControl } from './ports.js';
import { readAgentRecords } from '../drain-records.js';
import { readUserAgentRecords } from './user-records.js';

export interface ProcessRecord {
  readonly pid: number;
  readonly startTime: string | undefined;
  /** What it is, for the log: "agent TASK-3", "orchestrate run R". */
  readonly label: string;
}

/** Agent processes a drain recorded under its workspace state dir (malformed files are skipped). */
export async function agentGroups(fs: FsPort, workspaceState: string): Promise<ProcessRecord[]> {
  const records = await readAgentRecords(fs, workspaceState);
  return records.map((record) => ({ pid: record.pid, startTime: record.startTime, label: `agent ${record.taskId}` }));
}

/** Agent processes orchestrate recorded for this repo (in its user's own state dir). */
export async function recordedAgents(fs: FsPort, home: string, workspace: string): Promise<ProcessRecord[]> {
  const records = await readUserAgentRecords(fs, home, workspace);
  return records.map((record) => ({ pid: record.pid, startTime: record.startTime, label: `agent ${record.taskId}` }));
}

/** Pure: is the process in the record the one running now under that pid? */
export function sameProcess(record: ProcessRecord, currentStartTime: string | undefined): boolean {
  // Without a recorded start time the identity cannot be proven: never signal.
  return record.startTime !== undefined && currentStartTime === record.startTime;
}

export interface ReapDeps {
  readonly process: ProcessPort;
  readonly control: Pick<ProcessControl, 'signalGroup'>;
  readonly clock: Clock;
}

/**
 * SIGTERM to every live recorded group, then SIGKILL to those still there
 * after graceMs. Returns what was signalled, for the log.
 */
export async function reapGroups(deps: ReapDeps, records: readonly ProcessRecord[], graceMs: number): Promise<{ label: string; pid: number; killed: boolean }[]> {
  const live: ProcessRecord[] = [];
  for (const record of records) {
    if (sameProcess(record, await deps.process.startTimeOf(record.pid))) live.push(record);
  }
  for (const record of live) deps.control.signalGroup(record.pid, 'SIGTERM');
  const deadline = deps.clock.now() + graceMs;
  const results: { label: string; pid: number; killed: boolean }[] = [];
  let remaining = live;
  while (remaining.length && deps.clock.now() < deadline) {
    await deps.clock.sleep(Math.min(200, Math.max(1, deadline - deps.clock.now())));
    const still: ProcessRecord[] = [];
    for (const record of remaining) {
      if (sameProcess(record, await deps.process.startTimeOf(record.pid))) still.push(record);
      else results.push({ label: record.label, pid: record.pid, killed: false });
    }
    remaining = still;
  }
  for (const record of remaining) {
    // The leader may have exited while its group lives on: SIGKILL the group regardless.
    deps.control.signalGroup(record.pid, 'SIGKILL');
    results.push({ label: record.label, pid: record.pid, killed: true });
  }
  return results;
}
