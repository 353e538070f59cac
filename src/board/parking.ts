// Parking: a task that keeps failing gets the `parked` label and a note line
// "Parked: <reason> (branch auto/TASK-3)" in its implementation notes, so it
// stops being picked and the operator sees why and where its work is; those
// lines are not the agent's reason when it marks a task Blocked. Pure.
import type { Task } from '../types.js';

export const PARKED_LABEL = 'parked';
const NOTE_PREFIX = 'Parked:';

/** The note line recording why a task was parked and which branch holds its work. */
export function parkNote(reason: string, branch: string): string {
  const oneLine = reason.replace(/\s+/g, ' ').trim() || 'no reason given';
  return `${NOTE_PREFIX} ${oneLine} (branch ${branch})`;
}

export function isParked(task: Task): boolean {
  return task.labels.includes(PARKED_LABEL);
}

/** The reason of the last "Parked:" line of the notes, or '' when there is none. */
export function parkedReason(task: Task): string {
  const lines = task.notes.split('\n').map((line) => line.trim()).filter((line) => line.startsWith(NOTE_PREFIX));
  const last = lines[lines.length - 1];
  return last === undefined ? '' : last.slice(NOTE_PREFIX.length).trim();
}

/**
 * The agent's reason for Blocked: the last note line that is not one of our
 * park notes, without a leading "Blocked:".
 */
export function blockedReason(task: Task | undefined): string {
  const lines = (task?.notes ?? '')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith(NOTE_PREFIX));
  return lines.at(-1)?.replace(/^Blocked:\s*/i, '') ?? 'the agent gave no reason';
}
