// Every key of the dashboard, once: the help overlay (`?`) and docs/tui.md's
// table are this list, and the key handler (console-state.ts) answers each.
export interface KeyHelp {
  readonly keys: string;
  readonly where: 'everywhere' | 'fleet' | 'repo' | 'tasks' | 'overlay';
  readonly does: string;
}

export const KEY_HELP: readonly KeyHelp[] = [
  { keys: '?', where: 'everywhere', does: 'this help (any key closes it)' },
  { keys: 'q, Ctrl-C', where: 'everywhere', does: 'quit (asks first while an action still runs)' },
  { keys: 'up/down, k/j', where: 'fleet', does: 'select a repo' },
  { keys: 'Enter', where: 'fleet', does: "open the selected repo's screen" },
  { keys: '/', where: 'fleet', does: 'filter repos by name (Enter keeps it, Esc clears it)' },
  { keys: 'r', where: 'everywhere', does: 'read the fleet (and the open tab) now' },
  { keys: 'd', where: 'everywhere', does: 'dispatch the repo now (agent-runner dispatch)' },
  { keys: 'e', where: 'everywhere', does: 'enqueue: type a prompt or a task id (agent-runner enqueue)' },
  { keys: 'p', where: 'everywhere', does: 'promote, after a confirmation listing what lands' },
  { keys: 'x', where: 'everywhere', does: 'discard auto/work, after a confirmation' },
  { keys: 'w', where: 'everywhere', does: "pause or resume the repo's watcher" },
  { keys: 'Tab, 1-4', where: 'repo', does: 'tabs: 1 summary, 2 runs, 3 tasks, 4 log' },
  { keys: 'Esc', where: 'repo', does: 'back to the fleet' },
  { keys: 'up/down, k/j', where: 'tasks', does: 'select a task' },
  { keys: 'Enter', where: 'tasks', does: 'the task: reason, attempts, last transcript lines' },
  { keys: 'u', where: 'tasks', does: 'un-park the selected task (agent-runner unpark)' },
  { keys: 'l', where: 'tasks', does: "follow the selected task's transcript in the log tab" },
  { keys: 'PgUp/PgDn', where: 'everywhere', does: 'scroll the pane below the table, or the overlay' },
  { keys: 'Home/End', where: 'everywhere', does: 'scroll to the top / the end (End follows the log again)' },
  { keys: 'y / n, Esc', where: 'overlay', does: 'confirm / cancel a promote, discard or quit' },
];

/** The help overlay's lines. */
export function helpLines(): string[] {
  const width = Math.max(...KEY_HELP.map((key) => key.keys.length));
  const whereWidth = Math.max(...KEY_HELP.map((key) => key.where.length));
  return KEY_HELP.map((key) => `${key.keys.padEnd(width)}  ${key.where.padEnd(whereWidth)}  ${key.does}`);
}
