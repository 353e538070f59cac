// What the dashboard is showing and what a key does, with no terminal in
// sight: handleKey(state, key, facts) returns the next state and the effects
// to start (an agent-runner command, a read, following a transcript). The
// blessed layer only feeds keys in, runs the effects off the render path and
// paints; every key's behaviour is a table row in the unit tests.
import type { Fleet, FleetRepo } from '../src/control/fleet/fleet.js';
import type { Tone } from './view-model.js';
import { printable } from '../src/printable.js';
import { logMatches, nextMatch, type LogSearch } from './log-search.js';

export type Tab = 'summary' | 'runs' | 'tasks' | 'log';
export const TABS: readonly Tab[] = ['summary', 'runs', 'tasks', 'log'];

/** A task the tasks tab lists. */
export interface TaskRow {
  readonly id: string;
  readonly title: string;
  readonly kind: 'running' | 'parked' | 'blocked';
  readonly reason: string;
}

export type Overlay =
  | { readonly kind: 'help' }
  | { readonly kind: 'form'; readonly repo: string; readonly value: string }
  | { readonly kind: 'confirm'; readonly title: string; readonly lines: readonly string[]; readonly onYes: Effect }
  | { readonly kind: 'task'; readonly repo: string; readonly taskId: string }
  /** A read the overlay waits for (a promote's preview). */
  | { readonly kind: 'loading'; readonly title: string }
  /** The last action's whole result (`o`): its exit, its output and its errors, every line. */
  | { readonly kind: 'result'; readonly title: string; readonly lines: readonly string[] };

/** How the last action ended, whole: the footer shows one line of it, `o` all of it. */
export interface ActionRecord {
  readonly label: string;
  readonly exitCode: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

export interface RunningAction {
  readonly id: number;
  readonly label: string;
  readonly startedAt: number;
}

export interface ConsoleState {
  readonly screen: 'fleet' | 'repo';
  readonly tab: Tab;
  readonly selectedRepo: string | null;
  readonly filter: string;
  readonly editingFilter: boolean;
  readonly selectedTask: number;
  /** The task the log tab follows; undefined: the running task, else the newest transcript. */
  readonly followTask: string | undefined;
  readonly overlay: Overlay | null;
  readonly actions: readonly RunningAction[];
  readonly nextActionId: number;
  /** The last action's result, for the footer. */
  readonly result: { readonly text: string; readonly tone: Tone } | null;
  /** The last action's whole output, for `o`. */
  readonly lastAction: ActionRecord | null;
  /** The log tab's search (`/`, then n and N). */
  readonly search: LogSearch;
}

export const INITIAL_STATE: ConsoleState = {
  screen: 'fleet',
  tab: 'summary',
  selectedRepo: null,
  filter: '',
  editingFilter: false,
  selectedTask: 0,
  followTask: undefined,
  overlay: null,
  actions: [],
  nextActionId: 1,
  result: null,
  lastAction: null,
  search: { query: '', editing: false, current: null },
};

export type Effect =
  | { readonly kind: 'quit' }
  /** Quit after stopping the actions still running. */
  | { readonly kind: 'stop-and-quit' }
  | { readonly kind: 'refresh' }
  /** `agent-runner ARGS`, the command a person would type; the footer shows how it ended. */
  | { readonly kind: 'run'; readonly label: string; readonly args: readonly string[] }
  /** Read what the tab shows (runs, tasks) for the repo. */
  | { readonly kind: 'load-tab'; readonly repo: string; readonly tab: Tab }
  /** Read staging and show the confirmation of a promote or discard. */
  | { readonly kind: 'preview'; readonly repo: string; readonly action: 'promote' | 'discard' }
  | { readonly kind: 'follow'; readonly repo: string; readonly task: string | undefined }
  | { readonly kind: 'unfollow' }
  | { readonly kind: 'task-detail'; readonly repo: string; readonly taskId: string }
  | { readonly kind: 'scroll'; readonly by: 'line-up' | 'line-down' | 'page-up' | 'page-down' | 'top' | 'end' };

/** What a key needs besides the state: the fleet on screen, the tasks tab's rows and the log tab's lines. */
export interface KeyFacts {
  readonly fleet: Fleet | null;
  readonly tasks: readonly TaskRow[];
  /** The log tab's transcript lines as shown (searched by `/`, `n`, `N`). */
  readonly logLines?: readonly string[];
}

export interface Key {
  /** blessed's full name: "up", "enter", "C-c", "S-tab", or the character. */
  readonly name: string;
  /** The character typed, for text fields. */
  readonly ch: string | undefined;
}

/** Enqueue's form: a task id queues that task, anything else is a prompt. */
const TASK_ID = /^[A-Za-z][A-Za-z0-9]*-\d+(\.\d+)*$/;

/** The repos the table shows: those whose name contains the filter. */
export function visibleRepos(fleet: Fleet | null, filter: string): readonly FleetRepo[] {
  const repos = fleet?.repos ?? [];
  const wanted = filter.trim().toLowerCase();
  return wanted ? repos.filter((repo) => repo.name.toLowerCase().includes(wanted)) : repos;
}

/** The selected repo among the visible ones (the first when the selection is filtered out). */
export function currentRepo(state: ConsoleState, fleet: Fleet | null): FleetRepo | undefined {
  const repos = visibleRepos(fleet, state.filter);
  return repos.find((repo) => repo.name === state.selectedRepo) ?? repos[0];
}

function moveRepo(state: ConsoleState, fleet: Fleet | null, delta: number): ConsoleState {
  const repos = visibleRepos(fleet, state.filter);
  if (!repos.length) return state;
  const index = Math.max(
    0,
    repos.findIndex((repo) => repo.name === state.selectedRepo),
  );
  return {
    ...state,
    selectedRepo: repos[Math.min(repos.length - 1, Math.max(0, index + delta))]!.name,
    selectedTask: 0,
    followTask: undefined,
  };
}

function printableChar(key: Key): string | undefined {
  return key.ch !== undefined && key.ch.length === 1 && key.ch >= ' ' && key.ch !== '\x7f' ? key.ch : undefined;
}

type Step = { readonly state: ConsoleState; readonly effects: readonly Effect[] };
const stay = (state: ConsoleState, ...effects: Effect[]): Step => ({ state, effects });

/** The actions every screen has, on the selected repo. */
function repoAction(state: ConsoleState, repo: FleetRepo, name: string): Step | undefined {
  switch (name) {
    case 'd':
      return stay(state, { kind: 'run', label: `dispatch ${repo.name}`, args: ['dispatch', repo.name, '--json'] });
    case 'e':
      return stay({ ...state, overlay: { kind: 'form', repo: repo.name, value: '' } });
    case 'p':
      return stay(
        { ...state, overlay: { kind: 'loading', title: `promote ${repo.name}` } },
        { kind: 'preview', repo: repo.name, action: 'promote' },
      );
    case 'x':
      return stay(
        { ...state, overlay: { kind: 'loading', title: `discard ${repo.name}` } },
        { kind: 'preview', repo: repo.name, action: 'discard' },
      );
    case 'w':
      return repo.paused
        ? stay(state, { kind: 'run', label: `resume ${repo.name}`, args: ['resume', repo.name, '--json'] })
        : stay(state, { kind: 'run', label: `pause ${repo.name}`, args: ['pause', repo.name, '--json'] });
    default:
      return undefined;
  }
}

function overlayKey(state: ConsoleState, overlay: Overlay, key: Key): Step {
  const close = { ...state, overlay: null };
  switch (overlay.kind) {
    case 'help':
    case 'task':
    case 'result':
      if (key.name === 'pageup' || key.name === 'pagedown')
        return stay(state, { kind: 'scroll', by: key.name === 'pageup' ? 'page-up' : 'page-down' });
      return stay(close);
    case 'loading':
      return key.name === 'escape' || key.name === 'q' || key.name === 'n' ? stay(close) : stay(state);
    case 'confirm':
      if (key.name === 'y') return stay(close, overlay.onYes);
      if (key.name === 'n' || key.name === 'escape' || key.name === 'q')
        return stay({ ...close, result: { text: `${overlay.title}: cancelled`, tone: 'muted' } });
      if (key.name === 'pageup' || key.name === 'pagedown')
        return stay(state, { kind: 'scroll', by: key.name === 'pageup' ? 'page-up' : 'page-down' });
      return stay(state);
    case 'form': {
      if (key.name === 'escape') return stay({ ...close, result: { text: 'enqueue: cancelled', tone: 'muted' } });
      if (key.name === 'enter' || key.name === 'return') {
        const value = overlay.value.trim();
        if (!value)
          return stay({ ...close, result: { text: 'enqueue: nothing typed, nothing queued', tone: 'muted' } });
        const args = TASK_ID.test(value)
          ? ['enqueue', overlay.repo, '--task', value.toUpperCase()]
          : ['enqueue', overlay.repo, '--prompt', value];
        return stay(close, { kind: 'run', label: `enqueue on ${overlay.repo}`, args });
      }
      if (key.name === 'backspace')
        return stay({ ...state, overlay: { ...overlay, value: overlay.value.slice(0, -1) } });
      const ch = printableChar(key);
      return stay(ch === undefined ? state : { ...state, overlay: { ...overlay, value: overlay.value + ch } });
    }
  }
}

function filterKey(state: ConsoleState, fleet: Fleet | null, key: Key): Step {
  if (key.name === 'escape') return stay({ ...state, filter: '', editingFilter: false });
  if (key.name === 'enter' || key.name === 'return') return stay({ ...state, editingFilter: false });
  let filter = state.filter;
  if (key.name === 'backspace') filter = filter.slice(0, -1);
  else {
    const ch = printableChar(key);
    if (ch === undefined) return stay(state);
    filter += ch;
  }
  const next = { ...state, filter };
  return stay({ ...next, selectedRepo: currentRepo(next, fleet)?.name ?? state.selectedRepo });
}

function tabEffects(repo: string, tab: Tab, followTask: string | undefined): Effect[] {
  if (tab === 'log') return [{ kind: 'follow', repo, task: followTask }];
  return [
    { kind: 'unfollow' },
    ...(tab === 'runs' || tab === 'tasks' ? [{ kind: 'load-tab', repo, tab } as const] : []),
  ];
}

const NO_SEARCH: LogSearch = { query: '', editing: false, current: null };

/** The search being typed: Enter jumps to the first match, Esc drops it. */
function searchKey(state: ConsoleState, key: Key, lines: readonly string[]): Step {
  const search = state.search;
  if (key.name === 'escape') return stay({ ...state, search: NO_SEARCH });
  if (key.name === 'enter' || key.name === 'return') {
    const matches = logMatches(lines, search.query);
    if (!search.query) return stay({ ...state, search: NO_SEARCH });
    if (!matches.length)
      return stay({
        ...state,
        search: { ...search, editing: false, current: null },
        result: { text: `no line of the log contains "${search.query}"`, tone: 'warn' },
      });
    return stay({ ...state, search: { ...search, editing: false, current: matches[0]! } });
  }
  if (key.name === 'backspace') return stay({ ...state, search: { ...search, query: search.query.slice(0, -1) } });
  const ch = printableChar(key);
  return stay(ch === undefined ? state : { ...state, search: { ...search, query: search.query + ch } });
}

/** The log tab's own keys: `/` searches, n and N move between matches, g and G jump to the top and the end. */
function logKey(state: ConsoleState, key: Key, lines: readonly string[]): Step | undefined {
  const search = state.search;
  switch (key.name) {
    case '/':
      return stay({ ...state, search: { query: '', editing: true, current: null } });
    case 'n':
    case 'S-n':
    case 'N': {
      if (!search.query)
        return stay({ ...state, result: { text: 'no search yet: / and the text to find', tone: 'muted' } });
      const current = nextMatch(logMatches(lines, search.query), search.current, key.name === 'n' ? 1 : -1);
      if (current === null)
        return stay({ ...state, result: { text: `no line of the log contains "${search.query}"`, tone: 'warn' } });
      return stay({ ...state, search: { ...search, current } });
    }
    case 'g':
      return stay({ ...state, search: { ...search, current: null } }, { kind: 'scroll', by: 'top' });
    case 'G':
    case 'S-g':
      return stay({ ...state, search: { ...search, current: null } }, { kind: 'scroll', by: 'end' });
    case 'escape':
      return search.query ? stay({ ...state, search: NO_SEARCH }) : undefined;
    default:
      return undefined;
  }
}

/** Pure: the lines of the last action's whole result, printable (the command's output is agent-reachable text). */
export function actionRecordLines(action: ActionRecord): string[] {
  const block = (title: string, text: string) => {
    const lines = printable(text).replace(/\s+$/, '').split('\n');
    return text.trim() ? [title, ...lines.map((line) => `  ${line}`), ''] : [`${title} (empty)`, ''];
  };
  return [
    `agent-runner ${action.label}: exit ${action.exitCode ?? 'by a signal'}`,
    '',
    ...block('stderr', action.stderr),
    ...block('stdout', action.stdout),
  ];
}

function openResult(state: ConsoleState): Step {
  if (state.lastAction)
    return stay({
      ...state,
      overlay: { kind: 'result', title: state.lastAction.label, lines: actionRecordLines(state.lastAction) },
    });
  if (state.result)
    return stay({ ...state, overlay: { kind: 'result', title: 'last result', lines: [state.result.text] } });
  return stay({ ...state, result: { text: 'no action has run yet: nothing to open', tone: 'muted' } });
}

/** Pure: the next state, and what to start, after one key. */
export function handleKey(state: ConsoleState, key: Key, facts: KeyFacts): Step {
  const { fleet } = facts;
  if (key.name === 'C-c') return stay(state, state.actions.length ? { kind: 'stop-and-quit' } : { kind: 'quit' });
  if (state.overlay) return overlayKey(state, state.overlay, key);
  if (state.editingFilter) return filterKey(state, fleet, key);
  const onLog = state.screen === 'repo' && state.tab === 'log';
  if (onLog && state.search.editing) return searchKey(state, key, facts.logLines ?? []);
  if (key.name === '?') return stay({ ...state, overlay: { kind: 'help' } });
  if (key.name === 'o') return openResult(state);
  const logStep = onLog ? logKey(state, key, facts.logLines ?? []) : undefined;
  if (logStep) return logStep;
  if (key.name === 'q') {
    if (!state.actions.length) return stay(state, { kind: 'quit' });
    const labels = state.actions.map((action) => action.label);
    return stay({
      ...state,
      overlay: {
        kind: 'confirm',
        title: 'quit',
        lines: [`still running: ${labels.join(', ')}`, 'quit and stop them (SIGTERM, as Ctrl-C would)?'],
        onYes: { kind: 'stop-and-quit' },
      },
    });
  }
  if (key.name === 'r')
    return stay(
      state,
      { kind: 'refresh' },
      ...(state.screen === 'repo' && state.selectedRepo
        ? tabEffects(state.selectedRepo, state.tab, state.followTask).filter((effect) => effect.kind === 'load-tab')
        : []),
    );
  if (key.name === 'pageup') return stay(state, { kind: 'scroll', by: 'page-up' });
  if (key.name === 'pagedown') return stay(state, { kind: 'scroll', by: 'page-down' });
  if (key.name === 'home') return stay(state, { kind: 'scroll', by: 'top' });
  if (key.name === 'end') return stay(state, { kind: 'scroll', by: 'end' });
  const repo = currentRepo(state, fleet);
  const selected = repo ? { ...state, selectedRepo: repo.name } : state;

  if (state.screen === 'fleet') {
    if (key.name === 'up' || key.name === 'k') return stay(moveRepo(selected, fleet, -1));
    if (key.name === 'down' || key.name === 'j') return stay(moveRepo(selected, fleet, 1));
    if (key.name === '/') return stay({ ...state, editingFilter: true });
    if (key.name === 'escape' && state.filter) return stay({ ...state, filter: '' });
    if (!repo) return stay(state);
    if (key.name === 'enter' || key.name === 'return')
      return stay({ ...selected, screen: 'repo', tab: 'summary', selectedTask: 0 });
    return repoAction(selected, repo, key.name) ?? stay(state);
  }

  // The repo screen.
  if (!repo) return stay({ ...state, screen: 'fleet' }, { kind: 'unfollow' });
  if (key.name === 'escape')
    return stay({ ...selected, screen: 'fleet', tab: 'summary', search: NO_SEARCH }, { kind: 'unfollow' });
  const tabIndex = ['1', '2', '3', '4'].indexOf(key.name);
  if (tabIndex >= 0 || key.name === 'tab' || key.name === 'S-tab') {
    const current = TABS.indexOf(state.tab);
    const tab =
      tabIndex >= 0 ? TABS[tabIndex]! : TABS[(current + (key.name === 'S-tab' ? TABS.length - 1 : 1)) % TABS.length]!;
    return stay(
      { ...selected, tab, search: NO_SEARCH },
      ...tabEffects(repo.name, tab, state.followTask ?? repo.run?.runningTasks[0]),
    );
  }
  if (state.tab === 'tasks') {
    const count = facts.tasks.length;
    if (key.name === 'up' || key.name === 'k')
      return stay({ ...selected, selectedTask: Math.max(0, Math.min(count - 1, state.selectedTask - 1)) });
    if (key.name === 'down' || key.name === 'j')
      return stay({ ...selected, selectedTask: Math.max(0, Math.min(count - 1, state.selectedTask + 1)) });
    const task = facts.tasks[Math.min(state.selectedTask, count - 1)];
    if (task && (key.name === 'enter' || key.name === 'return'))
      return stay(
        { ...selected, overlay: { kind: 'task', repo: repo.name, taskId: task.id } },
        { kind: 'task-detail', repo: repo.name, taskId: task.id },
      );
    if (task && key.name === 'l')
      return stay(
        { ...selected, tab: 'log', followTask: task.id, search: NO_SEARCH },
        { kind: 'follow', repo: repo.name, task: task.id },
      );
    if (key.name === 'u') {
      if (!task || task.kind !== 'parked')
        return stay({
          ...selected,
          result: {
            text: task ? `${task.id} is ${task.kind}, not parked: nothing to un-park` : 'no task selected',
            tone: 'warn',
          },
        });
      return stay(selected, {
        kind: 'run',
        label: `unpark ${task.id} on ${repo.name}`,
        args: ['unpark', task.id, '--repo', repo.name, '--json'],
      });
    }
  } else if (key.name === 'up' || key.name === 'k') return stay(state, { kind: 'scroll', by: 'line-up' });
  else if (key.name === 'down' || key.name === 'j') return stay(state, { kind: 'scroll', by: 'line-down' });
  return repoAction(selected, repo, key.name) ?? stay(state);
}

/** Pure: an action started (the layer calls this when it runs a `run` effect). */
export function actionStarted(state: ConsoleState, label: string, now: number): { state: ConsoleState; id: number } {
  const id = state.nextActionId;
  return { state: { ...state, nextActionId: id + 1, actions: [...state.actions, { id, label, startedAt: now }] }, id };
}

/** Pure: an action ended; its result goes to the footer, and the whole of it to `o`. */
export function actionEnded(
  state: ConsoleState,
  id: number,
  result: { text: string; tone: Tone },
  whole?: ActionRecord,
): ConsoleState {
  return {
    ...state,
    actions: state.actions.filter((action) => action.id !== id),
    result,
    ...(whole ? { lastAction: whole } : {}),
  };
}

const SPINNER = ['|', '/', '-', '\\'];

/** Pure: the spinner's frame at `elapsedMs`. */
export function spinnerFrame(elapsedMs: number): string {
  return SPINNER[Math.floor(Math.max(0, elapsedMs) / 125) % SPINNER.length]!;
}
