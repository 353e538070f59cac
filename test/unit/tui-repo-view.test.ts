// The repo screen's tabs, the task detail, the confirmations, the overlays,
// the footer and the action results, from built inputs; and the fleet table
// with a filter and a paused repo.
import t from 'tap';
import {
  buildOverlay,
  buildRepoScreen,
  confirmedArgs,
  discardConfirmation,
  emptyDetails,
  footerKeys,
  footerRows,
  footerStatus,
  statusRows,
  promoteConfirmation,
  renderRepoText,
  taskDetailLines,
  taskRows,
  type RepoDetails,
  type StagingFacts,
} from '../../tui/repo-view.js';
import { buildView, FLEET_COLUMNS, renderFrameText, type Column } from '../../tui/view-model.js';
import { describeActionResult } from '../../tui/action-result.js';
import { INITIAL_STATE } from '../../tui/console-state.js';
import { KEY_HELP } from '../../tui/keys.js';
import type { RunHistory } from '../../src/control/runs/history.js';
import { aBusyRepo, aFleet, aRepo, READ_AT } from '../helpers/fleet-builder.js';

const facts: StagingFacts = {
  baseBranch: 'main',
  staging: 'c0ffee0000000000000000000000000000000000',
  ahead: 3,
  behind: 0,
  landed: [
    {
      taskId: 'TASK-1',
      commit: 'aaaaaaaaaa11111111111111111111111111111111',
      subject: 'Land TASK-1: Add login',
      gate: 'ok',
    },
    {
      taskId: 'TASK-3',
      commit: 'bbbbbbbbbb22222222222222222222222222222222',
      subject: 'Land TASK-3: Fix \u001b[31mred\u001b[0m',
      gate: 'ok',
    },
  ],
  parked: [{ id: 'TASK-7', title: 'Flaky', reason: 'gate failed: red (branch auto/TASK-7)' }],
  blocked: [{ id: 'TASK-9', title: 'Needs a key', reason: 'no API key' }],
};
const history: RunHistory = {
  target: 'web',
  errors: [],
  runs: [
    {
      id: '20260101T005500Z-aa',
      trigger: 'watch',
      jobId: null,
      status: 'finished',
      outcome: 'drained',
      startedAt: '2026-01-01T00:55:00.000Z',
      endedAt: '2026-01-01T00:58:00.000Z',
      exitCode: 0,
      detail: null,
      counts: { landed: 1, parked: 1, blocked: 0, failed: 0 },
      tokens: null,
      cost: null,
      source: null,
      agentReported: null,
      budgetStop: null,
      tasks: [
        { id: 'TASK-1', title: 'Add login', outcome: 'landed', durationMs: 1000 },
        { id: 'TASK-7', title: 'Flaky', outcome: 'parked', reason: 'gate failed', durationMs: 900 },
      ],
    },
  ],
};
const web = aBusyRepo('web', ['TASK-4']);
const withStaging: RepoDetails = {
  ...emptyDetails('web'),
  staging: { state: 'ok', value: facts },
  runs: { state: 'ok', value: history },
};
const texts = (lines: readonly { text: string }[]) => lines.map((line) => line.text);

t.test('the tabs', async (t) => {
  const summary = buildRepoScreen(web, { ...INITIAL_STATE, tab: 'summary' }, emptyDetails('web'), 0);
  t.equal(summary.tabs, '[1 summary]  2 runs   3 tasks   4 log ');
  t.match(texts(summary.lines).join('\n'), /^run +R2 by watch, running for 5m/m, 'the summary is the fleet details');

  t.same(texts(buildRepoScreen(web, { ...INITIAL_STATE, tab: 'runs' }, emptyDetails('web'), 0).lines), [
    'reading the run history...',
  ]);
  t.same(
    texts(
      buildRepoScreen(
        web,
        { ...INITIAL_STATE, tab: 'runs' },
        { ...emptyDetails('web'), runs: { state: 'error', message: 'EACCES' } },
        0,
      ).lines,
    ),
    ['cannot read the run history: EACCES'],
  );
  const runs = texts(buildRepoScreen(web, { ...INITIAL_STATE, tab: 'runs' }, withStaging, 0).lines);
  t.match(runs[0], /^RUN +STARTED +TOOK OUTCOME +L\/P\/F$/);
  t.equal(runs[1], '20260101T005500Z-aa           01-01 00:55   3m drained       1/1/0');
  t.equal(runs[2], '    by watch', 'how it started, in the words runs and fleet use');
  const longId = texts(
    buildRepoScreen(
      web,
      { ...INITIAL_STATE, tab: 'runs' },
      {
        ...withStaging,
        runs: {
          state: 'ok',
          value: {
            ...history,
            runs: [
              {
                ...history.runs[0]!,
                id: '20261130T223438844347Z-e83b66',
                trigger: 'orchestrate',
                outcome: 'nothing-to-do',
              },
            ],
          },
        },
      },
      0,
    ).lines,
  );
  t.ok(
    longId.every((text) => text.length <= 76),
    'the longest run id, trigger and outcome fit too',
  );
  t.equal(longId[2], '    by orchestrate', 'a drain run in the checkout says so, as `runs` does');
  for (const text of runs) t.ok(text.length <= 76, `fits 80 columns with the box and its scrollbar: ${text}`);
  const tokens = texts(
    buildRepoScreen(
      web,
      { ...INITIAL_STATE, tab: 'runs' },
      { ...withStaging, runs: { state: 'ok', value: { ...history, runs: [{ ...history.runs[0]!, tokens: 1234 }] } } },
      0,
    ).lines,
  );
  const costed = texts(
    buildRepoScreen(
      web,
      { ...INITIAL_STATE, tab: 'runs' },
      {
        ...withStaging,
        runs: { state: 'ok', value: { ...history, runs: [{ ...history.runs[0]!, tokens: 1234, cost: '$0.42' }] } },
      },
      0,
    ).lines,
  );
  t.equal(tokens[2], '    by watch, 1234 tokens, cost unknown', 'tokens below the run once it has them');
  t.equal(costed[2], '    by watch, 1234 tokens, cost $0.42', 'and what they cost');
  t.same(runs.slice(3), ['    TASK-1 landed', '    TASK-7 parked: gate failed']);

  const tasks = buildRepoScreen(web, { ...INITIAL_STATE, tab: 'tasks', selectedTask: 1 }, withStaging, 0);
  t.same(texts(tasks.lines).slice(0, 3), [
    '  TASK-4  running  agent running in R2',
    '> TASK-7  parked   Flaky: gate failed: red (branch auto/TASK-7)',
    '  TASK-9  blocked  Needs a key: no API key',
  ]);
  t.equal(tasks.focus, 1, 'the selected task is the line kept in view');
  t.same(taskRows(aRepo('api'), { state: 'ok', value: { ...facts, parked: [], blocked: [] } }), []);
  t.same(
    texts(
      buildRepoScreen(
        aRepo('api'),
        { ...INITIAL_STATE, tab: 'tasks' },
        { ...emptyDetails('api'), staging: { state: 'ok', value: { ...facts, parked: [], blocked: [] } } },
        0,
      ).lines,
    ),
    ['no running, parked or blocked tasks on auto/work'],
  );
  const unreadable = { ...aRepo('api'), board: { ready: 0, parked: 2, unreadable: 0, total: 2 } };
  t.same(
    texts(
      buildRepoScreen(
        unreadable,
        { ...INITIAL_STATE, tab: 'tasks' },
        { ...emptyDetails('api'), staging: { state: 'error', message: 'EACCES: permission denied' } },
        0,
      ).lines,
    ),
    [
      'cannot read the board on auto/work: EACCES: permission denied',
      'the fleet row counts 2 parked tasks: they cannot be listed until the board reads',
    ],
    'what the fleet row counts and the tab cannot list is said, with why',
  );

  const log = buildRepoScreen(
    web,
    { ...INITIAL_STATE, tab: 'log' },
    {
      ...emptyDetails('web'),
      log: { name: 'R2-TASK-4.jsonl', lines: [{ kind: 'raw', text: '00:55:01    | hello \u001b]0;pwned\u0007world' }] },
    },
    0,
  );
  t.same(
    texts(log.lines),
    [
      'following R2-TASK-4.jsonl (the newest transcript); / searches, G follows again after scrolling',
      '00:55:01    | hello world',
    ],
    'control sequences are stripped',
  );
  t.same(
    texts(
      buildRepoScreen(
        web,
        { ...INITIAL_STATE, tab: 'log', followTask: 'TASK-4' },
        { ...emptyDetails('web'), log: { name: undefined, lines: [] } },
        0,
      ).lines,
    ),
    ['no transcript of TASK-4 yet'],
  );
  t.match(renderRepoText(summary, 'footer'), /^web: \/srv\/web\n\[1 summary\]/);
});

t.test('a task: reason, attempts, last transcript lines', async (t) => {
  const row = { id: 'TASK-7', title: 'Flaky', kind: 'parked' as const, reason: 'gate failed: red' };
  t.same(texts(taskDetailLines(row, 'TASK-7', { state: 'loading' })), [
    'TASK-7: Flaky',
    'state     parked',
    'reason    gate failed: red',
    'reading attempts and the transcript...',
  ]);
  const lines = texts(
    taskDetailLines(row, 'TASK-7', {
      state: 'ok',
      value: {
        attempts: { failures: 2, lastReason: 'gate red' },
        transcript: { name: 'R1-TASK-7.jsonl', lines: [{ kind: 'error', text: '00:00:01 run ended: failed' }] },
      },
    }),
  );
  t.same(lines.slice(3), [
    'attempts  2 failed, last: gate red',
    'log       R1-TASK-7.jsonl',
    '  00:00:01 run ended: failed',
  ]);
  t.same(texts(taskDetailLines(undefined, 'TASK-5', { state: 'error', message: 'no user' })).slice(1), [
    'state     unknown',
    'reason    -',
    'cannot read: no user',
  ]);
});

t.test('promote and discard confirmations list exactly what lands', async (t) => {
  const promote = promoteConfirmation('web', facts);
  t.same('lines' in promote && promote.lines, [
    'auto/work is 3 commit(s) ahead and 0 behind main.',
    'main fast-forwards to c0ffee000000; these tasks land:',
    '',
    '  TASK-1  aaaaaaaaaa  Land TASK-1: Add login',
    '  TASK-3  bbbbbbbbbb  Land TASK-3: Fix red',
    '',
    'promote web? y / n',
  ]);
  const behind = promoteConfirmation('web', { ...facts, behind: 2 });
  t.match('lines' in behind && behind.lines.join('\n'), /behind main: promote refuses unless main is contained/);
  t.same(promoteConfirmation('web', { ...facts, staging: undefined }), {
    nothing: 'promote web: there is no auto/work branch yet',
  });
  t.same(promoteConfirmation('web', { ...facts, ahead: 0, landed: [] }), {
    nothing: 'promote web: auto/work has nothing ahead of main',
  });
  const discard = discardConfirmation('web', facts);
  t.same('lines' in discard && discard.lines.at(-1), 'discard web? y / n');
  t.match('lines' in discard && discard.lines.join('\n'), /TASK-1 +aaaaaaaaaa/);
  t.same(discardConfirmation('web', { ...facts, staging: undefined }), {
    nothing: 'discard web: there is no auto/work branch',
  });
  t.same(
    confirmedArgs('promote', 'web', facts),
    ['promote', '--repo', 'web', '--expect-staging', facts.staging, '--json'],
    'a promote is pinned to the commit it showed',
  );
  t.same(confirmedArgs('discard', 'web', facts), ['discard', '--repo', 'web', '--yes', '--json']);
});

t.test('overlays', async (t) => {
  const help = buildOverlay({ kind: 'help' }, undefined, []);
  t.equal(help.lines.length, KEY_HELP.length, 'one line per key');
  for (const key of KEY_HELP)
    t.ok(
      help.lines.some((line) => line.text.startsWith(key.keys) && line.text.endsWith(key.does)),
      `help lists ${key.keys}`,
    );
  t.same(texts(buildOverlay({ kind: 'form', repo: 'web', value: 'Fix it' }, undefined, []).lines)[2], '> Fix it_');
  t.same(
    buildOverlay({ kind: 'confirm', title: 'promote web', lines: ['a', 'b'], onYes: { kind: 'quit' } }, undefined, [])
      .title,
    'promote web',
  );
  t.same(texts(buildOverlay({ kind: 'loading', title: 'promote web' }, undefined, []).lines), [
    'reading auto/work... (Esc cancels)',
  ]);
  t.same(
    buildOverlay({ kind: 'task', repo: 'web', taskId: 'TASK-7' }, withStaging, taskRows(web, withStaging.staging))
      .lines[2]!.text,
    'reason    gate failed: red (branch auto/TASK-7)',
  );
});

t.test('the footer', async (t) => {
  const refresh = { text: 'read 1s ago (every 2s)', tone: 'muted' as const };
  t.same(footerStatus({ actions: [], result: null }, 0, refresh), refresh);
  t.same(
    footerStatus(
      {
        actions: [
          { id: 1, label: 'dispatch web', startedAt: 0 },
          { id: 2, label: 'pause api', startedAt: 0 },
        ],
        result: null,
      },
      260,
      refresh,
    ),
    { text: '- dispatch web... (+1 more)', tone: 'busy' },
  );
  t.same(footerStatus({ actions: [], result: { text: 'promote web: main fast-forwarded', tone: 'ok' } }, 0, refresh), {
    text: 'promote web: main fast-forwarded',
    tone: 'ok',
  });
  const fleetKeys =
    '<enter> open  </> filter  <d> dispatch  <e> enqueue  <p> promote  <x> discard  <w> pause  <o> result  <?> help  <q> quit';
  t.equal(footerKeys({ screen: 'fleet', tab: 'summary', editingFilter: false, filter: '' }), fleetKeys);
  t.equal(
    footerKeys({ screen: 'repo', tab: 'tasks', editingFilter: false, filter: '' }),
    '<enter> why  <u> unpark  <l> log  <esc> back  <tab> next tab  <d> dispatch  <e> enqueue  <p> promote  <x> discard  <w> pause  <o> result  <?> help  <q> quit',
  );
  t.match(
    footerKeys({ screen: 'repo', tab: 'log', editingFilter: false, filter: '' }),
    /^<\/> search {2}<n\/N> next\/prev {2}<g\/G> top\/end {2}<esc> back/,
  );
  t.equal(
    footerKeys({ screen: 'repo', tab: 'runs', editingFilter: false, filter: '' }),
    '<esc> back  <tab> next tab  <d> dispatch  <e> enqueue  <p> promote  <x> discard  <w> pause  <o> result  <?> help  <q> quit',
  );
  t.equal(
    footerKeys({ screen: 'fleet', tab: 'summary', editingFilter: true, filter: 'we' }),
    '/we_  (Enter keep, Esc clear)',
  );
  t.equal(
    footerKeys({
      screen: 'repo',
      tab: 'log',
      editingFilter: false,
      filter: '',
      search: { query: 'npm', editing: true, current: null },
    }),
    '/npm_  (Enter finds, Esc cancels)',
  );

  const text = (rows: ReturnType<typeof footerRows>) => rows.map((row) => row.map((piece) => piece.text).join(''));
  t.same(
    text(footerRows('<?> help', refresh, false, 120)),
    ['<?> help  |  read 1s ago (every 2s)'],
    'one row when it fits',
  );
  t.same(
    text(footerRows('<?> help', { text: 'pause web: paused', tone: 'warn' }, true, 120)),
    ['pause web: paused  |  <?> help'],
    'a result comes before the keys',
  );
  t.same(footerRows('<?> help', { text: 'x: failed', tone: 'bad' }, true, 120)[0]![0], {
    text: 'x: failed',
    tone: 'bad',
  });
  const error =
    'dispatch web: failed (exit 2): the egress lock of web is not in place (table inet agent_runner is missing), and agents do not start without it; fix: agent-runner provision repo web';
  const rows = footerRows(fleetKeys, { text: error, tone: 'bad' }, true, 80);
  t.same(
    text(rows),
    [
      'dispatch web: failed (exit 2): the egress lock of web is not in place (table',
      'inet agent_runner is missing), and agents do not start without it; fix:',
      'agent-runner provision repo web',
      '<enter> open  </> filter  <d> dispatch  <e> enqueue  <p> promote  <x> discard',
      '<w> pause  <o> result  <?> help  <q> quit',
    ],
    'at 80 columns the error wraps, its fix shows, and the keys keep their labels',
  );
  t.ok(
    text(rows).every((row) => row.length <= 80),
    'no row is wider than the terminal',
  );
  const huge = `${'word '.repeat(200)}fix: run the fix`;
  const cut = statusRows(huge, 80);
  t.equal(cut.length, 3, 'at most three rows of status');
  t.match(cut.at(-1)!, /fix: run the fix$/, 'cut in the middle: the end, where the fix is, stays');
  t.match(cut.join(' '), / \.\.\. /, 'the cut is marked');
});

t.test('action results in one footer line', async (t) => {
  const rows: [string, { exitCode: number | null; stdout: string; stderr: string }, { text: string; tone: string }][] =
    [
      [
        'dispatch web',
        {
          exitCode: 0,
          stdout: JSON.stringify({ outcome: 'drained', tasks: [{ outcome: 'landed' }, { outcome: 'parked' }] }),
          stderr: '',
        },
        { text: 'dispatch web: drained, 1 landed, 1 parked, 0 blocked, 0 failed (exit 0)', tone: 'ok' },
      ],
      [
        'dispatch web',
        {
          exitCode: 1,
          stdout: JSON.stringify({ outcome: 'error', tasks: [], detail: 'orchestrate exited 2' }),
          stderr: '',
        },
        {
          text: 'dispatch web: error, 0 landed, 0 parked, 0 blocked, 0 failed (exit 1): orchestrate exited 2',
          tone: 'bad',
        },
      ],
      [
        'dispatch web',
        { exitCode: 75, stdout: '', stderr: 'agent-runner: repo "web" is held by pid 9\n' },
        { text: 'dispatch web: busy: repo "web" is held by pid 9', tone: 'warn' },
      ],
      [
        'enqueue on web',
        { exitCode: 0, stdout: 'J1\n', stderr: 'enqueue: queued prompt "Fix" on web\n' },
        { text: 'enqueue on web: queued prompt "Fix" on web', tone: 'ok' },
      ],
      [
        'enqueue on web',
        { exitCode: 2, stdout: '', stderr: 'agent-runner: --prompt is empty\n' },
        { text: 'enqueue on web: failed (exit 2): --prompt is empty', tone: 'bad' },
      ],
      [
        'promote web',
        {
          exitCode: 0,
          stdout: JSON.stringify({ promoted: true, detail: 'main fast-forwarded aaaa..bbbb', pushed: true }),
          stderr: '',
        },
        { text: 'promote web: main fast-forwarded aaaa..bbbb (pushed)', tone: 'ok' },
      ],
      [
        'discard web',
        {
          exitCode: 0,
          stdout: JSON.stringify({
            discarded: true,
            to: 'c0ffee00001234',
            removedBranches: ['auto/TASK-1'],
            pushed: false,
          }),
          stderr: '',
        },
        { text: 'discard web: auto/work reset at c0ffee0000; removed 1 task branch(es)', tone: 'ok' },
      ],
      [
        'pause web',
        { exitCode: 0, stdout: JSON.stringify({ repo: 'web', paused: true, changed: true }), stderr: '' },
        { text: 'pause web: paused', tone: 'warn' },
      ],
      [
        'resume web',
        { exitCode: 0, stdout: JSON.stringify({ repo: 'web', paused: false, changed: true }), stderr: '' },
        { text: 'resume web: resumed', tone: 'ok' },
      ],
      [
        'unpark TASK-7 on web',
        {
          exitCode: 0,
          stdout: JSON.stringify({ taskId: 'TASK-7', unparked: true, detail: 'TASK-7 un-parked on auto/work' }),
          stderr: '',
        },
        { text: 'unpark TASK-7 on web: TASK-7 un-parked on auto/work', tone: 'ok' },
      ],
      ['x', { exitCode: null, stdout: '', stderr: '' }, { text: 'x: failed (exit signal): no output', tone: 'bad' }],
      ['x', { exitCode: 0, stdout: 'done \u001b[2J\n', stderr: '' }, { text: 'x: done', tone: 'ok' }],
    ];
  for (const [label, outcome, expected] of rows)
    t.same(describeActionResult(label, outcome), expected, `${label} ${outcome.exitCode}`);
});

t.test('the fleet table: a filter, a paused repo, a column added', async (t) => {
  const fleet = aFleet([
    aRepo('api'),
    aRepo('web', { paused: { since: '2026-01-01T00:00:00.000Z', by: 'root' } }),
    aRepo('worker'),
  ]);
  const status = { lastReadAt: READ_AT, error: null, reading: false, intervalSec: 2 };
  const view = buildView(fleet, 'web', READ_AT, status, { filter: 'W' });
  t.same(
    view.rows.map((row) => row.name),
    ['web', 'worker'],
  );
  t.equal(view.selected, 0);
  t.match(view.title, /3 repos, 0 running, 0 with problems, 2 shown \(filter "w"\)/);
  t.same(view.rows[0]!.cells[1], { text: 'paused', tone: 'warn' }, 'ON says paused');
  t.match(renderFrameText(view), /^paused +since 2026-01-01T00:00:00.000Z by root: nothing new starts \(w resumes\)$/m);
  const none = buildView(fleet, null, READ_AT, status, { filter: 'zzz' });
  t.same(none.rows, []);
  t.same(
    none.details.lines.map((line) => line.text),
    ['no repo name contains "zzz" (Esc clears the filter)'],
  );
  const pr: Column = {
    title: 'PR',
    max: 6,
    cell: (repo) => ({ text: repo.name === 'api' ? '#12' : '-', tone: 'plain' }),
  };
  const wider = buildView(fleet, null, READ_AT, status, { columns: [...FLEET_COLUMNS, pr] });
  t.match(wider.header, / {2}ERR {2}PR$/, 'a column is one more entry');
  t.equal(wider.rows[0]!.cells.at(-1)!.text, '#12');
});
