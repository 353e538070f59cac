// Parking: a task that keeps failing gets the `parked` label and a note line
// "Parked: <reason> (branch auto/TASK-3)" in its implementation notes, so it
// stops being picked and the operator sees why and where its work is; those
// lines are not the agent's reason when it marks a task Blocked. Pure.
import type { Task } from '../types.js';
import { hasLabel } from './labels.js';
import { lastBlockedParagraph } from './parse.js';

export const PARKED_LABEL = 'parked';
const NOTE_PREFIX = 'Parked:';

/** The note line recording why a task was parked and which branch holds its work. */
export function parkNote(reason: string, branch: string): string {
  const oneLine = reason.replace(/\s+/g, ' ').trim() || 'no reason given';
  return `${NOTE_PREFIX} ${oneLine} (branch ${branch})`;
}

export function isParked(task: Task): boolean {
  return hasLabel(task, PARKED_LABEL);
}

/** The reason of the last "Parked:" line of the notes, or '' when there is none. */
export function parkedReason(task: Task): string {
  const lines = task.notes
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line.startsWith(NOTE_PREFIX));
  const last = lines[lines.length - 1];
  return last === undefined ? '' : last.slice(NOTE_PREFIX.length).trim();
}

/**
 * The agent's reason for Blocked, kept whole (every line of it): the last
 * `Blocked:` paragraph of the notes; else a `Blocked:` paragraph elsewhere in
 * the file (after the last section, say); else the last paragraph of the
 * notes; else the agent's final message; our own park notes never count.
 */
export function blockedReason(task: Task | undefined, finalMessage?: string): string {
  const lines = (task?.notes ?? '').split('\n').filter((line) => !line.trim().startsWith(NOTE_PREFIX));
  const fromNotes = lastBlockedParagraph(lines) ?? task?.blockedNote ?? lastParagraph(lines);
  return fromNotes ?? (finalMessage?.trim() || NO_REASON);
}

export const NO_REASON = 'the agent gave no reason';

function lastParagraph(lines: readonly string[]): string | undefined {
  const paragraphs = lines
    .map((line) => line.trim())
    .join('\n')
    .split(/\n{2,}/)
    .map((text) => text.trim())
    .filter(Boolean);
  return paragraphs.at(-1);
}
