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
