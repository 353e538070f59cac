// The dashboard's view model from built fleets: table text, tones, the
// details of the selected repo, selection moves and the footer.
import t from 'tap';
import type { Fleet, FleetRepo } from '../../src/control/fleet/fleet.js';
import {
  buildView,
  moveSelection,
  renderFrameText,
  rowText,
  selectedIndex,
  formatAge,
  FOOTER_KEYS,
  type RefreshStatus,
} from '../../tui/view-model.js';

const READ_AT = Date.parse('2026-01-01T01:00:00.000Z');

/** An idle, healthy repo; override what a test is about. */
function aRepo(name: string, change: Partial<FleetRepo> = {}): FleetRepo {
  return {
    name,
    enabled: true,
    paused: null,
    user: `agent-${name}`,
    path: `/srv/${name}`,
    baseBranch: 'main',
    schedule: '* * * * *',
    maxParallel: 2,
    watcher: { state: 'idle', pid: 40, heartbeatAgeSec: 5, lastTick: '2026-01-01T00:59:55.000Z', lastError: null },
    run: null,
    queue: { queued: 0, running: 0 },
    staging: { exists: true, ahead: 0, behind: 0 },
    board: { ready: 0, parked: 0, unreadable: 0, total: 4 },
    lastRun: null,
    errors: [],
    ...change,
  };
}

function aFleet(repos: FleetRepo[], change: Partial<Fleet> = {}): Fleet {
  return {
    generatedAt: new Date(READ_AT).toISOString(),
    registry: '/etc/agent-runner/registry.toml',
    problems: [],
    repos,
    ...change,
  };
}

const fresh: RefreshStatus = { lastReadAt: READ_AT, error: null, reading: false, intervalSec: 2 };

const busy = aRepo('web', {
  watcher: { state: 'running', pid: 77, heartbeatAgeSec: 10, lastTick: '2026-01-01T00:59:00.000Z', lastError: null },
  run: {
    id: 'R2',
    trigger: 'job',
    jobId: 'J1',
    startedAt: '2026-01-01T00:55:00.000Z',
    elapsedSec: 300,
    runningTasks: ['TASK-4', 'TASK-5'],
  },
  queue: { queued: 2, running: 1 },
  staging: { exists: true, ahead: 3, behind: 1 },
  board: { ready: 1, parked: 1, unreadable: 0, total: 6 },
  lastRun: {
    id: 'R1',
    trigger: 'watch',
    cost: '$0.42',
    tokens: 1200,
    outcome: 'drained',
    exitCode: 0,
    endedAt: '2026-01-01T00:10:00.000Z',
    landed: 2,
    parked: 1,
    failed: 0,
  },
  spend: {
    today: { usd: 1.25, unknownCost: 0, tokens: 5000, sessions: 3, text: '$1.25' },
    dailyUsd: 10,
    dailyTokens: null,
    taskUsd: 2,
    hold: 'waiting for rate limit until 01:30 UTC',
  },
});
const broken = aRepo('api', {
  enabled: false,
  watcher: { state: 'absent', pid: null, heartbeatAgeSec: null, lastTick: null, lastError: null },
  staging: null,
  board: null,
  errors: ['board: cannot read the git objects of /srv/api: not a git repository'],
});

t.test('the table: one row a repo, columns padded, tones by meaning', async (t) => {
  const view = buildView(aFleet([busy, broken]), null, READ_AT, fresh);
  t.equal(
    view.header,
    'REPO  ON   WATCHER  BEAT  RUN               QUEUE  STAGING  READY  PARKED  LAST RUN          TODAY  ERR',
  );
  t.same(view.rows.map(rowText), [
    'web   yes  running  10s   5m TASK-4,TASK-5  2+1    +3/-1    1      1       drained 2 landed  $1.25  0',
    'api   no   absent   -     -                 0      ?        ?      ?       -                 ?      1',
  ]);
  t.same(
    view.rows[0]!.cells.map((cell) => cell.tone),
    ['plain', 'plain', 'busy', 'plain', 'busy', 'busy', 'ok', 'plain', 'warn', 'ok', 'warn', 'muted'],
    "today's spend is a warning while something holds new runs",
  );
  t.same(
    view.rows[1]!.cells.map((cell) => cell.tone),
    ['bad', 'muted', 'muted', 'plain', 'muted', 'plain', 'warn', 'warn', 'warn', 'muted', 'muted', 'bad'],
  );
  t.equal(view.title, 'agent-runner fleet: 2 repos, 1 running, 1 with problems  (/etc/agent-runner/registry.toml)');
});

t.test('long values are cut so one repo cannot break the layout', async (t) => {
  const many = aRepo('web', {
    run: {
      id: 'R',
      trigger: 'watch',
      jobId: null,
      startedAt: 'S',
      elapsedSec: 5,
      runningTasks: ['TASK-100', 'TASK-101', 'TASK-102', 'TASK-103'],
    },
  });
  const view = buildView(aFleet([many]), null, READ_AT, fresh);
  t.equal(view.rows[0]!.cells[4]!.text, '5s TASK-100,TASK-101,TASK-1~');
  t.equal(view.rows[0]!.cells[4]!.text.length, 28);
});

t.test('details of the selected repo: watcher, run, queue, staging, board, last run, errors', async (t) => {
  const view = buildView(aFleet([busy, broken]), 'web', READ_AT, fresh);
  t.equal(view.selected, 0);
  t.equal(view.details.title, 'web');
  t.same(view.details.lines, [
    { label: 'repo', text: '/srv/web  user agent-web  base main  schedule "* * * * *"  max parallel 2', tone: 'plain' },
    { label: 'watcher', text: 'running, pid 77, heartbeat 10s ago, last tick 2026-01-01T00:59:00.000Z', tone: 'busy' },
    { label: 'run', text: 'R2 by job J1, running for 5m since 2026-01-01T00:55:00.000Z', tone: 'busy' },
    { label: 'tasks', text: 'TASK-4, TASK-5', tone: 'busy' },
    { label: 'queue', text: '2 queued, 1 running', tone: 'busy' },
    { label: 'staging', text: 'auto/work 3 ahead, 1 behind main', tone: 'ok' },
    { label: 'board', text: '1 ready, 1 parked, 6 tasks', tone: 'warn' },
    {
      label: 'last run',
      text: 'R1 drained by watch, exit 0, ended 2026-01-01T00:10:00.000Z: 2 landed, 1 parked, 0 failed, cost $0.42',
      tone: 'ok',
    },
    { label: 'spend', text: 'today $1.25, 5000 tokens, 3 sessions; budgets: daily $10, task $2', tone: 'plain' },
    { label: 'held', text: 'waiting for rate limit until 01:30 UTC', tone: 'warn' },
  ]);
  const other = buildView(aFleet([busy, broken]), 'api', READ_AT, fresh);
  t.equal(other.selected, 1);
  t.equal(other.details.title, 'api');
  t.same(other.details.lines, [
    {
      label: 'repo',
      text: '/srv/api  user agent-api  base main  schedule "* * * * *"  max parallel 2  (disabled)',
      tone: 'muted',
    },
    { label: 'watcher', text: 'absent, no heartbeat', tone: 'muted' },
    { label: 'run', text: 'none', tone: 'muted' },
    { label: 'queue', text: '0 queued, 0 running', tone: 'plain' },
    { label: 'staging', text: 'unknown (could not read git)', tone: 'warn' },
    { label: 'board', text: 'unknown (could not read the board)', tone: 'warn' },
    { label: 'last run', text: 'none', tone: 'muted' },
    { label: 'error', text: 'board: cannot read the git objects of /srv/api: not a git repository', tone: 'bad' },
  ]);
});

t.test('a dead watcher, a stale heartbeat, a skipped tick, a failed last run', async (t) => {
  const dead = aRepo('web', {
    watcher: {
      state: 'dead',
      pid: 9,
      heartbeatAgeSec: 400,
      lastTick: null,
      lastError: { at: 'T', message: 'user agent-web does not exist' },
    },
  });
  let view = buildView(aFleet([dead]), null, READ_AT, fresh);
  t.same(view.details.lines.slice(1, 3), [
    { label: 'watcher', text: 'dead, pid 9, heartbeat 7m ago', tone: 'bad' },
    { label: 'skipped', text: 'T: user agent-web does not exist', tone: 'warn' },
  ]);
  t.equal(view.title, 'agent-runner fleet: 1 repo, 0 running, 1 with problems  (/etc/agent-runner/registry.toml)');
  const stale = aRepo('web', { watcher: { ...busy.watcher, heartbeatAgeSec: 61 } });
  view = buildView(aFleet([stale]), null, READ_AT, fresh);
  t.same(
    [view.rows[0]!.cells[2]!.tone, view.rows[0]!.cells[3]!.tone],
    ['warn', 'warn'],
    'a running watcher silent for over a minute',
  );
  const failed = aRepo('web', {
    lastRun: {
      id: 'R9',
      trigger: 'dispatch',
      cost: null,
      tokens: null,
      outcome: 'failed',
      exitCode: 1,
      endedAt: null,
      landed: 0,
      parked: 0,
      failed: 2,
    },
  });
  view = buildView(aFleet([failed]), null, READ_AT, fresh);
  t.same(
    view.details.lines.find((line) => line.label === 'last run'),
    { label: 'last run', text: 'R9 failed by dispatch, exit 1: 0 landed, 0 parked, 2 failed', tone: 'bad' },
  );
  t.equal(view.rows[0]!.cells[9]!.tone, 'bad');
});

t.test('ages grow while an old snapshot stays on screen', async (t) => {
  const view = buildView(aFleet([busy]), null, READ_AT + 70_000, { ...fresh, error: 'EIO' });
  t.equal(view.rows[0]!.cells[3]!.text.trim(), '80s', 'heartbeat 10s when read, 70s ago');
  t.equal(view.rows[0]!.cells[3]!.tone, 'warn');
  t.match(view.details.lines[2]!.text, /^R2 by job J1, running for 6m since /);
});

t.test('selection keeps its repo across refreshes and clamps at the ends', async (t) => {
  const fleet = aFleet([aRepo('a'), aRepo('b'), aRepo('c')]);
  t.equal(selectedIndex(fleet, null), 0);
  t.equal(selectedIndex(fleet, 'c'), 2);
  t.equal(selectedIndex(aFleet([aRepo('c'), aRepo('a')]), 'a'), 1, 'the repo, not the row number');
  t.equal(selectedIndex(fleet, 'gone'), 0, 'a repo removed from the registry falls back to the first');
  t.equal(selectedIndex(aFleet([]), 'a'), -1);
  t.equal(selectedIndex(null, null), -1);
  t.equal(moveSelection(fleet, 'a', 1), 'b');
  t.equal(moveSelection(fleet, 'c', 1), 'c');
  t.equal(moveSelection(fleet, 'a', -1), 'a');
  t.equal(moveSelection(fleet, null, 1), 'b');
  t.equal(moveSelection(aFleet([]), null, 1), null);
  t.equal(moveSelection(null, 'a', 1), null);
});

t.test('registry problems and an empty registry', async (t) => {
  const problem = { file: '/r.toml:3', key: 'repos.x.path', problem: 'path is missing', fix: 'add it' };
  const view = buildView(aFleet([], { registry: '/r.toml', problems: [problem] }), null, READ_AT, fresh);
  t.equal(view.selected, -1);
  t.same(view.rows, []);
  t.equal(view.title, 'agent-runner fleet: 0 repos, 0 running, 0 with problems, 1 registry problem  (/r.toml)');
  t.same(view.details, {
    title: 'no repos',
    lines: [
      { label: 'registry', text: 'no repos registered in /r.toml', tone: 'muted' },
      { label: 'registry', text: '/r.toml:3: repos.x.path: path is missing; add it', tone: 'bad' },
    ],
  });
  const withRepo = buildView(aFleet([aRepo('web')], { problems: [problem] }), null, READ_AT, fresh);
  t.same(
    withRepo.details.lines.at(-1),
    { label: 'registry', text: '/r.toml:3: repos.x.path: path is missing; add it', tone: 'bad' },
    'shown under every repo',
  );
});

t.test('the footer: keys, freshness, a read in progress, a read error', async (t) => {
  const fleet = aFleet([aRepo('web')]);
  t.same(buildView(null, null, READ_AT, { lastReadAt: null, error: null, reading: true, intervalSec: 2 }).footer, {
    keys: FOOTER_KEYS,
    status: 'reading the fleet... (every 2s)',
    tone: 'muted',
  });
  t.same(
    buildView(fleet, null, READ_AT + 3_000, { ...fresh, reading: true }).footer.status,
    'read 3s ago, reading... (every 2s)',
  );
  t.same(
    buildView(fleet, null, READ_AT, {
      ...fresh,
      intervalSec: 0.5,
      error: "EACCES: permission denied, open '/etc/agent-runner/registry.toml'",
    }).footer,
    {
      keys: FOOTER_KEYS,
      status: "cannot read the fleet: EACCES: permission denied, open '/etc/agent-runner/registry.toml' (every 0.5s)",
      tone: 'bad',
    },
  );
  const before = buildView(null, null, READ_AT, fresh);
  t.same([before.title, before.selected, before.details], ['agent-runner fleet', -1, { title: 'fleet', lines: [] }]);
});

t.test('ages read like the fleet table', async (t) => {
  t.same([null, 0, 119, 120, 7199, 7200, 172799, 172800].map(formatAge), [
    '-',
    '0s',
    '119s',
    '2m',
    '120m',
    '2h',
    '48h',
    '2d',
  ]);
});

t.test('one frame as text (tui --once)', async (t) => {
  t.equal(
    renderFrameText(buildView(aFleet([busy, broken]), null, READ_AT, fresh)),
    [
      'agent-runner fleet: 2 repos, 1 running, 1 with problems  (/etc/agent-runner/registry.toml)',
      '',
      'REPO  ON   WATCHER  BEAT  RUN               QUEUE  STAGING  READY  PARKED  LAST RUN          TODAY  ERR',
      'web   yes  running  10s   5m TASK-4,TASK-5  2+1    +3/-1    1      1       drained 2 landed  $1.25  0',
      'api   no   absent   -     -                 0      ?        ?      ?       -                 ?      1',
      '',
      '[web]',
      'repo      /srv/web  user agent-web  base main  schedule "* * * * *"  max parallel 2',
      'watcher   running, pid 77, heartbeat 10s ago, last tick 2026-01-01T00:59:00.000Z',
      'run       R2 by job J1, running for 5m since 2026-01-01T00:55:00.000Z',
      'tasks     TASK-4, TASK-5',
      'queue     2 queued, 1 running',
      'staging   auto/work 3 ahead, 1 behind main',
      'board     1 ready, 1 parked, 6 tasks',
      'last run  R1 drained by watch, exit 0, ended 2026-01-01T00:10:00.000Z: 2 landed, 1 parked, 0 failed, cost $0.42',
      'spend     today $1.25, 5000 tokens, 3 sessions; budgets: daily $10, task $2',
      'held      waiting for rate limit until 01:30 UTC',
      '',
    ].join('\n'),
  );
});
