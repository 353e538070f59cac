// What makes a process "the one recorded": its pid AND the kernel's start
// time (field 22 of /proc/PID/stat). A pid alone is recycled; the pair is
// unique for the life of the machine. One rule for every record of a process
// (lock holders, the workspace lock, a drain's agents): a record without a
// start time proves nothing, so it never matches a live process.
import type { ProcessPort } from './ports.js';

export interface ProcessIdentity {
  readonly pid: number;
  /** Field 22 of /proc/PID/stat when the record was written; undefined when it could not be read. */
  readonly startTime: string | undefined;
}

/**
 * Pure: is the recorded process the one running now under its pid?
 * `currentStartTime` is undefined when no process has that pid.
 */
export function isSameProcess(recorded: ProcessIdentity, currentStartTime: string | undefined): boolean {
  return recorded.startTime !== undefined && currentStartTime !== undefined && currentStartTime === recorded.startTime;
}

/** Whether the recorded process still runs (reads its start time now). */
export async function stillRunning(
  process: Pick<ProcessPort, 'startTimeOf'>,
  recorded: ProcessIdentity,
): Promise<boolean> {
  if (!Number.isInteger(recorded.pid) || recorded.pid <= 0) return false;
  return isSameProcess(recorded, await process.startTimeOf(recorded.pid));
}

/**
 * The variable every git the runner starts carries: the identity of the agent-runner process that started it,
 * "PID:STARTTIME". A git outlives its starter (it leads its own session, so a group kill misses it); with this,
 * the next run can prove the run that started it is gone (src/drain/recovery/git-locks.ts).
 */
export const STARTED_BY_VARIABLE = 'AGENT_RUNNER_STARTED_BY';

/** Pure: the variable's value for `starter`, or undefined when its start time is unknown (it would prove nothing). */
export function startedByValue(starter: ProcessIdentity): string | undefined {
  if (!Number.isInteger(starter.pid) || starter.pid <= 1 || starter.startTime === undefined) return undefined;
  return /^\d{1,20}$/.test(starter.startTime) ? `${starter.pid}:${starter.startTime}` : undefined;
}

/** Pure: the identity a STARTED_BY value names, or undefined when it names none (absent, malformed). */
export function parseStartedBy(value: string | undefined): ProcessIdentity | undefined {
  const match = /^(\d{1,10}):(\d{1,20})$/.exec(value ?? '');
  if (!match) return undefined;
  const pid = Number(match[1]);
  return pid > 1 ? { pid, startTime: match[2] } : undefined;
}
