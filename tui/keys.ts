// Every key of the dashboard, once: the help overlay (`?`) and docs/tui.md's
// table are this list, and the key handler (console-state.ts) answers each.
// The footer's labelled hints (k9s style, `<d> dispatch`) are the keys of
// the screen on show, from the same words.
export interface KeyHelp {
  readonly keys: string;
  readonly where: 'everywhere' | 'fleet' | 'repo' | 'tasks' | 'log' | 'overlay';
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
  { keys: 'o', where: 'everywhere', does: "the last action's whole result: its exit, output and errors" },
  { keys: 'Tab, 1-4', where: 'repo', does: 'tabs: 1 summary, 2 runs, 3 tasks, 4 log' },
  { keys: 'Esc', where: 'repo', does: 'back to the fleet' },
  { keys: 'up/down, k/j', where: 'tasks', does: 'select a task' },
  { keys: 'Enter', where: 'tasks', does: 'the task: reason, attempts, last transcript lines' },
  { keys: 'u', where: 'tasks', does: 'un-park the selected task (agent-runner unpark)' },
  { keys: 'l', where: 'tasks', does: "follow the selected task's transcript in the log tab" },
  { keys: '/', where: 'log', does: 'search the transcript: type, Enter finds the first match, Esc clears' },
  { keys: 'n / N', where: 'log', does: 'the next / previous matching line (highlighted)' },
  { keys: 'g / G', where: 'log', does: 'the top / the end of the log (G follows it again)' },
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

/** One labelled key of the footer: `<d> dispatch`. */
export interface KeyHint {
  readonly key: string;
  readonly label: string;
}

const ACTIONS: readonly KeyHint[] = [
  { key: 'd', label: 'dispatch' },
  { key: 'e', label: 'enqueue' },
  { key: 'p', label: 'promote' },
  { key: 'x', label: 'discard' },
  { key: 'w', label: 'pause' },
];
const ALWAYS: readonly KeyHint[] = [
  { key: 'o', label: 'result' },
  { key: '?', label: 'help' },
  { key: 'q', label: 'quit' },
];

/** The footer's hints for the screen on show, most used first. */
export function keyHints(state: { readonly screen: 'fleet' | 'repo'; readonly tab: string }): KeyHint[] {
  if (state.screen === 'fleet')
    return [{ key: 'enter', label: 'open' }, { key: '/', label: 'filter' }, ...ACTIONS, ...ALWAYS];
  const back = [
    { key: 'esc', label: 'back' },
    { key: 'tab', label: 'next tab' },
  ];
  if (state.tab === 'tasks')
    return [
      { key: 'enter', label: 'why' },
      { key: 'u', label: 'unpark' },
      { key: 'l', label: 'log' },
      ...back,
      ...ACTIONS,
      ...ALWAYS,
    ];
  if (state.tab === 'log')
    return [
      { key: '/', label: 'search' },
      { key: 'n/N', label: 'next/prev' },
      { key: 'g/G', label: 'top/end' },
      ...back,
      ...ACTIONS,
      ...ALWAYS,
    ];
  return [...back, ...ACTIONS, ...ALWAYS];
}

/** The hints as the footer writes them: `<d> dispatch  <e> enqueue`. */
export function hintText(hints: readonly KeyHint[]): string {
  return hints.map((hint) => `<${hint.key}> ${hint.label}`).join('  ');
}
