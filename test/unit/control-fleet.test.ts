// Fleet entries and their rendering, from fixed inputs.
import t from 'tap';
import { fleetEntry, renderFleetHuman, type FleetInputs } from '../../src/control/fleet/fleet.js';
import type { RegistryRepo } from '../../src/types.js';
import { RUN_LIMIT_DEFAULTS } from '../../src/control/registry/limits.js';

const repo: RegistryRepo = {
  name: 'web',
  path: '/srv/web',
  user: 'agent-web',
  baseBranch: 'main',
  proxyPort: 700,
  schedule: '* * * * *',
  remotePollSec: 15,
  maxParallel: 3,
  allow: [],
  loopbackPorts: [],
  toolchainPath: '/usr/bin:/bin',
  env: {},
  enabled: true,
  url: undefined,
  authorName: undefined,
  authorEmail: undefined,
  limits: RUN_LIMIT_DEFAULTS,
};
const now = Date.parse('2026-01-01T01:00:00.000Z');

const inputs: FleetInputs = {
  repo,
  now,
  status: {
    repo: 'web',
    state: 'running',
    pid: 77,
    runId: 'R2',
    heartbeat: '2026-01-01T00:59:50.000Z',
    lastTick: '2026-01-01T00:59:00.000Z',
  },
  watcherAlive: true,
  runs: [
    {
      id: 'R2',
      repo: 'web',
      trigger: 'job',
      jobId: 'J1',
      user: 'agent-web',
      args: ['--drain'],
      status: 'running',
      startedAt: '2026-01-01T00:55:00.000Z',
    },
    {
      id: 'R1',
      repo: 'web',
      trigger: 'watch',
      user: 'agent-web',
      args: ['--drain'],
      status: 'finished',
      startedAt: '2026-01-01T00:00:00.000Z',
      endedAt: '2026-01-01T00:10:00.000Z',
      exitCode: 0,
      outcome: 'drained',
      tasks: [
        { id: 'TASK-1', title: 'A', outcome: 'landed', durationMs: 1 },
        { id: 'TASK-2', title: 'B', outcome: 'landed', durationMs: 1 },
        { id: 'TASK-3', title: 'C', outcome: 'parked', durationMs: 1, reason: 'red gate' },
      ],
    },
  ],
  runningTasks: ['TASK-4', 'TASK-5'],
  queued: 2,
  runningJobs: 1,
  staging: { exists: true, ahead: 3, behind: 1 },
  board: { refs: ['auto/work'], ready: ['TASK-6'], parked: 1, unreadable: 0, total: 6 },
  errors: [],
};

t.test('a busy repo', async (t) => {
  t.same(fleetEntry(inputs), {
    name: 'web',
    enabled: true,
    paused: null,
    user: 'agent-web',
    path: '/srv/web',
    baseBranch: 'main',
    schedule: '* * * * *',
    maxParallel: 3,
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
      cost: null,
      tokens: null,
      outcome: 'drained',
      exitCode: 0,
      endedAt: '2026-01-01T00:10:00.000Z',
      landed: 2,
      parked: 1,
      failed: 0,
    },
    spend: null,
    errors: [],
  });
});

t.test('a dead watcher, a never-watched repo, a broken one', async (t) => {
  t.equal(
    fleetEntry({ ...inputs, watcherAlive: false }).watcher.state,
    'dead',
    'status says running but nobody holds the watch lock',
  );
  t.equal(
    fleetEntry({ ...inputs, watcherAlive: false, status: { ...inputs.status!, state: 'stopped' } }).watcher.state,
    'stopped',
  );
  const never = fleetEntry({
    ...inputs,
    status: undefined,
    watcherAlive: false,
    runs: [],
    runningTasks: [],
    queued: 0,
    runningJobs: 0,
    staging: null,
    board: undefined,
    errors: ['board: cannot read the git objects of /srv/web: not a git repository'],
  });
  t.same(never.watcher, { state: 'absent', pid: null, heartbeatAgeSec: null, lastTick: null, lastError: null });
  t.equal(never.run, null);
  t.equal(never.lastRun, null);
  t.equal(never.board, null);
  const fleet = {
    generatedAt: 'G',
    registry: '/etc/agent-runner/registry.toml',
    problems: [],
    repos: [fleetEntry(inputs), { ...never, name: 'api', enabled: false }],
  };
  t.equal(
    renderFleetHuman(fleet),
    [
      'REPO  ON   WATCHER  BEAT  RUN               QUEUE  STAGING  READY  PARKED  LAST RUN          TODAY',
      'web   yes  running  10s   5m TASK-4,TASK-5  2+1    +3/-1    1      1       drained 2 landed  ?',
      'api   no   absent   -     -                 0      ?        ?      ?       -                 ?',
      'api: board: cannot read the git objects of /srv/web: not a git repository',
      '',
    ].join('\n'),
  );
  t.equal(
    renderFleetHuman({
      generatedAt: 'G',
      registry: '/r.toml',
      problems: [{ file: '/r.toml:3', key: 'repos.x.path', problem: 'path is missing', fix: 'add it' }],
      repos: [],
    }),
    'REPO  ON  WATCHER  BEAT  RUN  QUEUE  STAGING  READY  PARKED  LAST RUN  TODAY\nregistry: /r.toml:3: repos.x.path: path is missing; add it\nno repos registered in /r.toml\n',
  );
});
