// Ending agents, setup commands and gates a killed drain left running, by orchestrate itself: it runs
// as the repo user and reads its own records (agents/<task>.json in its own
// state dir), so this is the user signalling its own processes. Root never
// signals anything from these records (a repo user can write them); at the
// end of a run root ends every process of the user instead
// (src/control/dispatch/user-sweep.ts). A group is signalled only while its leader is
// provably the recorded process (src/process-identity.ts).
import type { Clock, FsPort, ProcessControl, ProcessPort } from '../../ports.js';
import { readProcessRecords } from './process-records.js';
import { stillRunning, type ProcessIdentity } from '../../process-identity.js';

export interface RecordedGroup extends ProcessIdentity {
  /** What it is, for the log: "agent TASK-3". */
  readonly label: string;
}

/**
 * Processes (agents, setup commands, gates) a drain recorded under its workspace state dir (malformed files are
 * skipped).
 */
export async function recordedGroups(fs: FsPort, workspaceState: string): Promise<RecordedGroup[]> {
  const records = await readProcessRecords(fs, workspaceState);
  // Only this uid's own processes can be reaped from here; the other identities' ended with their run's sweep.
  return records.flatMap((record) =>
    record.pid === undefined
      ? []
      : [{ pid: record.pid, startTime: record.startTime, label: `${record.kind} ${record.taskId}` }],
  );
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
export async function reapGroups(
  deps: ReapDeps,
  records: readonly RecordedGroup[],
  graceMs: number,
): Promise<{ label: string; pid: number; killed: boolean }[]> {
  const live: RecordedGroup[] = [];
  for (const record of records) {
    if (await stillRunning(deps.process, record)) live.push(record);
  }
  for (const record of live) deps.control.signalGroup(record.pid, 'SIGTERM');
  const deadline = deps.clock.now() + graceMs;
  const results: { label: string; pid: number; killed: boolean }[] = [];
  let remaining = live;
  while (remaining.length && deps.clock.now() < deadline) {
    await deps.clock.sleep(Math.min(200, Math.max(1, deadline - deps.clock.now())));
    const still: RecordedGroup[] = [];
    for (const record of remaining) {
      if (await stillRunning(deps.process, record)) still.push(record);
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
