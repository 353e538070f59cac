// Every key of the dashboard as a table row: the state before, the key, and
// the state and effects after (console-state.ts handleKey), plus the action
// bookkeeping behind the spinner.
import t from 'tap';
import {
  actionEnded,
  actionStarted,
  currentRepo,
  handleKey,
  INITIAL_STATE,
  spinnerFrame,
  visibleRepos,
  type ConsoleState,
  type Effect,
  type KeyFacts,
  type TaskRow,
} from '../../tui/console-state.js';
import { KEY_HELP } from '../../tui/keys.js';
import { aBusyRepo, aFleet, aRepo } from '../helpers/fleet-builder.js';

const fleet = aFleet([
  aRepo('api'),
  aBusyRepo('web', ['TASK-4']),
  aRepo('worker', { paused: { since: '2026-01-01T00:00:00.000Z', by: 'root' } }),
]);
const tasks: TaskRow[] = [
  { id: 'TASK-4', title: '', kind: 'running', reason: 'agent running in R2' },
  { id: 'TASK-7', title: 'Flaky', kind: 'parked', reason: 'gate failed: red' },
  { id: 'TASK-9', title: 'Needs a key', kind: 'blocked', reason: 'no API key' },
];
const logLines = [
  '10:00:00 run started: claude m1',
  '10:00:01 tool Bash: npm test',
  '10:00:02   Bash failed: 1 failing',
  '10:00:03 tool Bash: NPM test again',
];
const facts: KeyFacts = { fleet, tasks, logLines };
const onWeb: ConsoleState = { ...INITIAL_STATE, selectedRepo: 'web' };
const webScreen: ConsoleState = { ...onWeb, screen: 'repo' };
const onTasks: ConsoleState = { ...webScreen, tab: 'tasks', selectedTask: 1 };
const onLog: ConsoleState = { ...webScreen, tab: 'log' };
const typing = (query: string): ConsoleState => ({ ...onLog, search: { query, editing: true, current: null } });
const found = (query: string, current: number | null): ConsoleState => ({
  ...onLog,
  search: { query, editing: false, current },
});
const dispatched = {
  label: 'dispatch web',
  exitCode: 2,
  stdout: '',
  stderr:
    'agent-runner: the egress lock of web is not in place (table inet agent_runner is missing), and agents do not start without it; fix: agent-runner provision repo web\n',
};
const key = (name: string, ch?: string) => ({ name, ch: ch ?? (name.length === 1 ? name : undefined) });

interface Row {
  readonly name: string;
  readonly state: ConsoleState;
  readonly key: string;
  readonly expect: Partial<ConsoleState>;
  readonly effects: readonly Effect[];
}

const rows: Row[] = [
  // The fleet screen.
  { name: 'down selects the next repo', state: onWeb, key: 'down', expect: { selectedRepo: 'worker' }, effects: [] },
  { name: 'j is down', state: onWeb, key: 'j', expect: { selectedRepo: 'worker' }, effects: [] },
  { name: 'up selects the previous repo', state: onWeb, key: 'up', expect: { selectedRepo: 'api' }, effects: [] },
  { name: 'k is up', state: onWeb, key: 'k', expect: { selectedRepo: 'api' }, effects: [] },
  {
    name: 'up at the top stays',
    state: { ...INITIAL_STATE, selectedRepo: 'api' },
    key: 'up',
    expect: { selectedRepo: 'api' },
    effects: [],
  },
  {
    name: 'Enter opens the repo screen',
    state: onWeb,
    key: 'enter',
    expect: { screen: 'repo', tab: 'summary', selectedRepo: 'web' },
    effects: [],
  },
  { name: '/ starts the filter', state: onWeb, key: '/', expect: { editingFilter: true }, effects: [] },
  { name: '? opens the help', state: onWeb, key: '?', expect: { overlay: { kind: 'help' } }, effects: [] },
  { name: 'r reads the fleet now', state: onWeb, key: 'r', expect: {}, effects: [{ kind: 'refresh' }] },
  { name: 'q quits when nothing runs', state: onWeb, key: 'q', expect: {}, effects: [{ kind: 'quit' }] },
  { name: 'Ctrl-C quits when nothing runs', state: onWeb, key: 'C-c', expect: {}, effects: [{ kind: 'quit' }] },
  {
    name: 'd dispatches the repo',
    state: onWeb,
    key: 'd',
    expect: {},
    effects: [{ kind: 'run', label: 'dispatch web', args: ['dispatch', 'web', '--json'] }],
  },
  {
    name: 'e opens the enqueue form',
    state: onWeb,
    key: 'e',
    expect: { overlay: { kind: 'form', repo: 'web', value: '' } },
    effects: [],
  },
  {
    name: 'p reads staging for the promote confirmation',
    state: onWeb,
    key: 'p',
    expect: { overlay: { kind: 'loading', title: 'promote web' } },
    effects: [{ kind: 'preview', repo: 'web', action: 'promote' }],
  },
  {
    name: 'x reads staging for the discard confirmation',
    state: onWeb,
    key: 'x',
    expect: { overlay: { kind: 'loading', title: 'discard web' } },
    effects: [{ kind: 'preview', repo: 'web', action: 'discard' }],
  },
  {
    name: 'w pauses a running repo',
    state: onWeb,
    key: 'w',
    expect: {},
    effects: [{ kind: 'run', label: 'pause web', args: ['pause', 'web', '--json'] }],
  },
  {
    name: 'w resumes a paused repo',
    state: { ...INITIAL_STATE, selectedRepo: 'worker' },
    key: 'w',
    expect: {},
    effects: [{ kind: 'run', label: 'resume worker', args: ['resume', 'worker', '--json'] }],
  },
  {
    name: 'PgDn scrolls the details',
    state: onWeb,
    key: 'pagedown',
    expect: {},
    effects: [{ kind: 'scroll', by: 'page-down' }],
  },
  {
    name: 'PgUp scrolls the details',
    state: onWeb,
    key: 'pageup',
    expect: {},
    effects: [{ kind: 'scroll', by: 'page-up' }],
  },
  { name: 'Home scrolls to the top', state: onWeb, key: 'home', expect: {}, effects: [{ kind: 'scroll', by: 'top' }] },
  { name: 'End scrolls to the end', state: onWeb, key: 'end', expect: {}, effects: [{ kind: 'scroll', by: 'end' }] },
  { name: 'an unbound key does nothing', state: onWeb, key: 'z', expect: onWeb, effects: [] },
  {
    name: 'Esc clears a kept filter',
    state: { ...onWeb, filter: 'we' },
    key: 'escape',
    expect: { filter: '' },
    effects: [],
  },

  // Typing the filter.
  {
    name: 'a character narrows the filter and selects a match',
    state: { ...INITIAL_STATE, selectedRepo: 'api', editingFilter: true, filter: 'wor' },
    key: 'k',
    expect: { filter: 'work', selectedRepo: 'worker' },
    effects: [],
  },
  {
    name: 'backspace widens it',
    state: { ...onWeb, editingFilter: true, filter: 'we' },
    key: 'backspace',
    expect: { filter: 'w' },
    effects: [],
  },
  {
    name: 'Enter keeps the filter',
    state: { ...onWeb, editingFilter: true, filter: 'we' },
    key: 'enter',
    expect: { filter: 'we', editingFilter: false },
    effects: [],
  },
  {
    name: 'Esc drops the filter',
    state: { ...onWeb, editingFilter: true, filter: 'we' },
    key: 'escape',
    expect: { filter: '', editingFilter: false },
    effects: [],
  },
  {
    name: 'q is typed, not quit, while filtering',
    state: { ...onWeb, editingFilter: true, filter: '' },
    key: 'q',
    expect: { filter: 'q' },
    effects: [],
  },

  // The repo screen.
  {
    name: 'Esc goes back to the fleet',
    state: webScreen,
    key: 'escape',
    expect: { screen: 'fleet' },
    effects: [{ kind: 'unfollow' }],
  },
  {
    name: '2 opens the runs tab and reads them',
    state: webScreen,
    key: '2',
    expect: { tab: 'runs' },
    effects: [{ kind: 'unfollow' }, { kind: 'load-tab', repo: 'web', tab: 'runs' }],
  },
  {
    name: '3 opens the tasks tab and reads staging',
    state: webScreen,
    key: '3',
    expect: { tab: 'tasks' },
    effects: [{ kind: 'unfollow' }, { kind: 'load-tab', repo: 'web', tab: 'tasks' }],
  },
  {
    name: '4 follows the running task',
    state: webScreen,
    key: '4',
    expect: { tab: 'log' },
    effects: [{ kind: 'follow', repo: 'web', task: 'TASK-4' }],
  },
  {
    name: '1 is the summary',
    state: { ...webScreen, tab: 'runs' },
    key: '1',
    expect: { tab: 'summary' },
    effects: [{ kind: 'unfollow' }],
  },
  {
    name: 'Tab goes to the next tab',
    state: webScreen,
    key: 'tab',
    expect: { tab: 'runs' },
    effects: [{ kind: 'unfollow' }, { kind: 'load-tab', repo: 'web', tab: 'runs' }],
  },
  {
    name: 'Shift-Tab goes back, wrapping',
    state: webScreen,
    key: 'S-tab',
    expect: { tab: 'log' },
    effects: [{ kind: 'follow', repo: 'web', task: 'TASK-4' }],
  },
  {
    name: 'r re-reads the fleet and the tab',
    state: { ...webScreen, tab: 'runs' },
    key: 'r',
    expect: {},
    effects: [{ kind: 'refresh' }, { kind: 'load-tab', repo: 'web', tab: 'runs' }],
  },
  {
    name: 'down scrolls a tab by a line',
    state: { ...webScreen, tab: 'runs' },
    key: 'down',
    expect: {},
    effects: [{ kind: 'scroll', by: 'line-down' }],
  },
  {
    name: 'up scrolls a tab by a line',
    state: { ...webScreen, tab: 'log' },
    key: 'up',
    expect: {},
    effects: [{ kind: 'scroll', by: 'line-up' }],
  },
  {
    name: 'actions work on the repo screen too',
    state: webScreen,
    key: 'd',
    expect: {},
    effects: [{ kind: 'run', label: 'dispatch web', args: ['dispatch', 'web', '--json'] }],
  },

  // The tasks tab.
  { name: 'down selects the next task', state: onTasks, key: 'down', expect: { selectedTask: 2 }, effects: [] },
  {
    name: 'down at the last task stays',
    state: { ...onTasks, selectedTask: 2 },
    key: 'down',
    expect: { selectedTask: 2 },
    effects: [],
  },
  { name: 'up selects the previous task', state: onTasks, key: 'up', expect: { selectedTask: 0 }, effects: [] },
  {
    name: 'Enter shows the task',
    state: onTasks,
    key: 'enter',
    expect: { overlay: { kind: 'task', repo: 'web', taskId: 'TASK-7' } },
    effects: [{ kind: 'task-detail', repo: 'web', taskId: 'TASK-7' }],
  },
  {
    name: 'u un-parks a parked task',
    state: onTasks,
    key: 'u',
    expect: {},
    effects: [{ kind: 'run', label: 'unpark TASK-7 on web', args: ['unpark', 'TASK-7', '--repo', 'web', '--json'] }],
  },
  {
    name: 'u on a blocked task says why not',
    state: { ...onTasks, selectedTask: 2 },
    key: 'u',
    expect: { result: { text: 'TASK-9 is blocked, not parked: nothing to un-park', tone: 'warn' } },
    effects: [],
  },
  {
    name: 'l follows the task in the log tab',
    state: onTasks,
    key: 'l',
    expect: { tab: 'log', followTask: 'TASK-7' },
    effects: [{ kind: 'follow', repo: 'web', task: 'TASK-7' }],
  },

  // Overlays.
  {
    name: 'any key closes the help',
    state: { ...onWeb, overlay: { kind: 'help' } },
    key: 'd',
    expect: { overlay: null },
    effects: [],
  },
  {
    name: 'PgDn scrolls the help',
    state: { ...onWeb, overlay: { kind: 'help' } },
    key: 'pagedown',
    expect: { overlay: { kind: 'help' } },
    effects: [{ kind: 'scroll', by: 'page-down' }],
  },
  {
    name: 'a character goes into the form',
    state: { ...onWeb, overlay: { kind: 'form', repo: 'web', value: 'Fi' } },
    key: 'x',
    expect: { overlay: { kind: 'form', repo: 'web', value: 'Fix' } },
    effects: [],
  },
  {
    name: 'a space goes into the form',
    state: { ...onWeb, overlay: { kind: 'form', repo: 'web', value: 'Fix' } },
    key: 'space',
    expect: { overlay: { kind: 'form', repo: 'web', value: 'Fix ' } },
    effects: [],
  },
  {
    name: 'backspace in the form',
    state: { ...onWeb, overlay: { kind: 'form', repo: 'web', value: 'Fix' } },
    key: 'backspace',
    expect: { overlay: { kind: 'form', repo: 'web', value: 'Fi' } },
    effects: [],
  },
  {
    name: 'Enter queues a prompt',
    state: { ...onWeb, overlay: { kind: 'form', repo: 'web', value: ' Fix the login page ' } },
    key: 'enter',
    expect: { overlay: null },
    effects: [{ kind: 'run', label: 'enqueue on web', args: ['enqueue', 'web', '--prompt', 'Fix the login page'] }],
  },
  {
    name: 'Enter queues a task id as that task',
    state: { ...onWeb, overlay: { kind: 'form', repo: 'web', value: 'task-12' } },
    key: 'enter',
    expect: { overlay: null },
    effects: [{ kind: 'run', label: 'enqueue on web', args: ['enqueue', 'web', '--task', 'TASK-12'] }],
  },
  {
    name: 'Enter on an empty form queues nothing',
    state: { ...onWeb, overlay: { kind: 'form', repo: 'web', value: '  ' } },
    key: 'enter',
    expect: { overlay: null, result: { text: 'enqueue: nothing typed, nothing queued', tone: 'muted' } },
    effects: [],
  },
  {
    name: 'Esc cancels the form',
    state: { ...onWeb, overlay: { kind: 'form', repo: 'web', value: 'x' } },
    key: 'escape',
    expect: { overlay: null, result: { text: 'enqueue: cancelled', tone: 'muted' } },
    effects: [],
  },
  {
    name: 'y confirms',
    state: {
      ...onWeb,
      overlay: {
        kind: 'confirm',
        title: 'promote web',
        lines: [],
        onYes: { kind: 'run', label: 'promote web', args: ['promote', '--repo', 'web', '--json'] },
      },
    },
    key: 'y',
    expect: { overlay: null },
    effects: [{ kind: 'run', label: 'promote web', args: ['promote', '--repo', 'web', '--json'] }],
  },
  {
    name: 'n cancels',
    state: { ...onWeb, overlay: { kind: 'confirm', title: 'discard web', lines: [], onYes: { kind: 'quit' } } },
    key: 'n',
    expect: { overlay: null, result: { text: 'discard web: cancelled', tone: 'muted' } },
    effects: [],
  },
  {
    name: 'another key leaves the confirmation open',
    state: { ...onWeb, overlay: { kind: 'confirm', title: 'discard web', lines: [], onYes: { kind: 'quit' } } },
    key: 'd',
    expect: { overlay: { kind: 'confirm', title: 'discard web', lines: [], onYes: { kind: 'quit' } } },
    effects: [],
  },
  {
    name: 'Esc stops waiting for a preview',
    state: { ...onWeb, overlay: { kind: 'loading', title: 'promote web' } },
    key: 'escape',
    expect: { overlay: null },
    effects: [],
  },
  {
    name: 'any other key waits on',
    state: { ...onWeb, overlay: { kind: 'loading', title: 'promote web' } },
    key: 'd',
    expect: { overlay: { kind: 'loading', title: 'promote web' } },
    effects: [],
  },
  {
    name: 'any key closes the task detail',
    state: { ...onTasks, overlay: { kind: 'task', repo: 'web', taskId: 'TASK-7' } },
    key: 'escape',
    expect: { overlay: null },
    effects: [],
  },

  // The log tab's search, and jumps.
  {
    name: '/ on the log tab starts a search',
    state: onLog,
    key: '/',
    expect: { search: { query: '', editing: true, current: null } },
    effects: [],
  },
  { name: 'typing goes to the search', state: typing('np'), key: 'm', expect: typing('npm'), effects: [] },
  { name: 'Backspace takes a letter off', state: typing('npm'), key: 'backspace', expect: typing('np'), effects: [] },
  { name: 'keys are typed, not acted on', state: typing(''), key: 'd', expect: typing('d'), effects: [] },
  {
    name: 'Enter finds the first matching line, any case',
    state: typing('npm'),
    key: 'enter',
    expect: found('npm', 1),
    effects: [],
  },
  {
    name: 'Enter with no match says so',
    state: typing('zebra'),
    key: 'enter',
    expect: { ...found('zebra', null), result: { text: 'no line of the log contains "zebra"', tone: 'warn' } },
    effects: [],
  },
  {
    name: 'Esc drops the search being typed',
    state: typing('np'),
    key: 'escape',
    expect: found('', null),
    effects: [],
  },
  { name: 'n goes to the next match', state: found('npm', 1), key: 'n', expect: found('npm', 3), effects: [] },
  { name: 'n wraps round to the first', state: found('npm', 3), key: 'n', expect: found('npm', 1), effects: [] },
  {
    name: 'N (shift-n) goes to the previous',
    state: found('npm', 1),
    key: 'S-n',
    expect: found('npm', 3),
    effects: [],
  },
  {
    name: 'n with no search says how to search',
    state: onLog,
    key: 'n',
    expect: { result: { text: 'no search yet: / and the text to find', tone: 'muted' } },
    effects: [],
  },
  {
    name: 'g goes to the top',
    state: found('npm', 3),
    key: 'g',
    expect: found('npm', null),
    effects: [{ kind: 'scroll', by: 'top' }],
  },
  {
    name: 'G (shift-g) goes to the end and follows again',
    state: found('npm', 3),
    key: 'S-g',
    expect: found('npm', null),
    effects: [{ kind: 'scroll', by: 'end' }],
  },
  {
    name: 'Esc clears a search before it leaves the repo',
    state: found('npm', 1),
    key: 'escape',
    expect: { screen: 'repo', search: { query: '', editing: false, current: null } },
    effects: [],
  },
  {
    name: 'a new tab drops the search',
    state: found('npm', 1),
    key: '1',
    expect: { tab: 'summary', search: { query: '', editing: false, current: null } },
    effects: [{ kind: 'unfollow' }],
  },

  // The last action's whole result.
  {
    name: "o opens the last action's whole result",
    state: { ...onWeb, lastAction: dispatched },
    key: 'o',
    expect: {
      overlay: {
        kind: 'result',
        title: 'dispatch web',
        lines: [
          'agent-runner dispatch web: exit 2',
          '',
          'stderr',
          `  ${dispatched.stderr.trim()}`,
          '',
          'stdout (empty)',
          '',
        ],
      },
    },
    effects: [],
  },
  {
    name: 'o with no action yet says so',
    state: onWeb,
    key: 'o',
    expect: { overlay: null, result: { text: 'no action has run yet: nothing to open', tone: 'muted' } },
    effects: [],
  },
  {
    name: 'any key closes the whole result',
    state: { ...onWeb, overlay: { kind: 'result', title: 'dispatch web', lines: ['x'] } },
    key: 'q',
    expect: { overlay: null },
    effects: [],
  },

  // Quitting while an action runs.
  {
    name: 'q asks first while an action runs',
    state: { ...onWeb, actions: [{ id: 1, label: 'dispatch web', startedAt: 0 }] },
    key: 'q',
    expect: {
      overlay: {
        kind: 'confirm',
        title: 'quit',
        lines: ['still running: dispatch web', 'quit and stop them (SIGTERM, as Ctrl-C would)?'],
        onYes: { kind: 'stop-and-quit' },
      },
    },
    effects: [],
  },
  {
    name: 'Ctrl-C stops the actions and quits',
    state: { ...onWeb, actions: [{ id: 1, label: 'dispatch web', startedAt: 0 }] },
    key: 'C-c',
    expect: {},
    effects: [{ kind: 'stop-and-quit' }],
  },
];

t.test('every key, as a table', async (t) => {
  for (const row of rows) {
    const step = handleKey(row.state, key(row.key, row.key === 'space' ? ' ' : undefined), facts);
    t.match(step.state, row.expect, `${row.name}: state`);
    t.same(step.effects, row.effects, `${row.name}: effects`);
  }
});

t.test('every key the help lists is answered by a row above', async (t) => {
  const tested = new Set(rows.map((row) => row.key));
  const spelled: Record<string, string[]> = {
    '?': ['?'],
    'q, Ctrl-C': ['q', 'C-c'],
    'up/down, k/j': ['up', 'down', 'k', 'j'],
    Enter: ['enter'],
    '/': ['/'],
    o: ['o'],
    'n / N': ['n', 'S-n'],
    'g / G': ['g', 'S-g'],
    r: ['r'],
    d: ['d'],
    e: ['e'],
    p: ['p'],
    x: ['x'],
    w: ['w'],
    'Tab, 1-4': ['tab', '1', '2', '3', '4'],
    Esc: ['escape'],
    u: ['u'],
    l: ['l'],
    'PgUp/PgDn': ['pageup', 'pagedown'],
    'Home/End': ['home', 'end'],
    'y / n, Esc': ['y', 'n', 'escape'],
  };
  for (const help of KEY_HELP) {
    const names = spelled[help.keys];
    t.ok(names, `"${help.keys}" is spelled out for this test`);
    for (const name of names ?? []) t.ok(tested.has(name), `${help.keys}: a row presses ${name}`);
  }
});

t.test('the filter decides which repos show and which is current', async (t) => {
  t.same(
    visibleRepos(fleet, '').map((r) => r.name),
    ['api', 'web', 'worker'],
  );
  t.same(
    visibleRepos(fleet, ' W ').map((r) => r.name),
    ['web', 'worker'],
    'case-insensitive, trimmed',
  );
  t.same(visibleRepos(fleet, 'zzz'), []);
  t.equal(
    currentRepo({ ...INITIAL_STATE, selectedRepo: 'api', filter: 'wor' }, fleet)?.name,
    'worker',
    'a filtered-out selection falls to the first match',
  );
  t.equal(currentRepo({ ...INITIAL_STATE, filter: 'zzz' }, fleet), undefined);
  t.same(handleKey({ ...INITIAL_STATE, filter: 'zzz' }, key('d'), facts).effects, [], 'no repo, no action');
});

t.test('actions: started, ended, the spinner turns', async (t) => {
  const one = actionStarted(INITIAL_STATE, 'dispatch web', 1000);
  const two = actionStarted(one.state, 'enqueue on api', 1200);
  t.same(
    two.state.actions.map((a) => a.label),
    ['dispatch web', 'enqueue on api'],
  );
  t.not(one.id, two.id, 'ids differ');
  const ended = actionEnded(two.state, one.id, { text: 'dispatch web: drained', tone: 'ok' });
  t.same(
    ended.actions.map((a) => a.label),
    ['enqueue on api'],
  );
  t.same(ended.result, { text: 'dispatch web: drained', tone: 'ok' });
  t.equal(ended.lastAction, null, 'no whole result given: none kept');
  const whole = { label: 'dispatch web', exitCode: 0, stdout: '{"outcome":"drained"}\n', stderr: '' };
  t.same(actionEnded(two.state, one.id, { text: 'dispatch web: drained', tone: 'ok' }, whole).lastAction, whole);
  t.same([0, 125, 250, 375, 500].map(spinnerFrame), ['|', '/', '-', '\\', '|']);
});
