// Statuses as the Backlog.md CLI compares them (src/utils/terminal-status.ts
// upstream): trimmed and case-insensitive, and the board's LAST configured
// status is the finished one (`Done` by default; a board whose statuses end
// in `Shipped` finishes with `Shipped`). Pure.

/** Backlog.md's statuses when backlog/config.yml does not name any. */
export const DEFAULT_STATUSES: readonly string[] = ['To Do', 'In Progress', 'Done'];

export const READY_STATUS = 'To Do';
export const DONE_STATUS = 'Done';
/** The status an agent (or the drain) sets when a task needs a human. */
export const BLOCKED_STATUS = 'Blocked';

function normalizeStatus(status: string | undefined): string {
  return (status ?? '').trim().replace(/\s+/g, ' ').toLowerCase();
}

export function sameStatus(a: string | undefined, b: string | undefined): boolean {
  return normalizeStatus(a) === normalizeStatus(b);
}

/** The board's finished status: its last configured one (Backlog.md's defaults when it lists none). */
export function finishedStatus(statuses: readonly string[]): string {
  const last = (statuses.length ? statuses : DEFAULT_STATUSES).at(-1)!;
  return last.trim() ? last : DONE_STATUS;
}

/** Whether `status` finishes a task on a board with these statuses. */
export function isFinishedStatus(status: string | undefined, statuses: readonly string[]): boolean {
  return sameStatus(status, finishedStatus(statuses));
}
