// Benchmark (not a test): the dashboard over a 50-repo fleet. Goal: building
// and rendering one frame takes at most 20 ms, printed as a ratio against
// the 50 ms first bar. Two figures:
//  - build: the pure view (tui/view-model.ts buildView and the repo screen)
//    from a fleet snapshot, median of many;
//  - key to frame: the real blessed dashboard (tui/dashboard.ts) drawing into
//    an 80x24 in-memory terminal: the time from a key (j/k) to the frame
//    written, which is handleKey + the view + blessed's diff and write.
import { PassThrough } from 'node:stream';
import type { BenchResult } from './lib/types.js';
import { median, round } from './lib/stats.js';
import { printResult } from './lib/print.js';
import { buildView } from '../tui/view-model.js';
import { buildRepoScreen, emptyDetails } from '../tui/repo-view.js';
import { INITIAL_STATE } from '../tui/console-state.js';
import { runDashboard } from '../tui/dashboard.js';
import type { ConsoleServices } from '../tui/services.js';
import type { Fleet, FleetRepo } from '../src/control/fleet/fleet.js';
import { sized } from './lib/quick.js';

const REPOS = 50;
const BAR_MS = 50;
const GOAL_MS = 20;
const NOW = Date.parse('2026-01-01T01:00:00.000Z');

function repo(i: number): FleetRepo {
  const busy = i % 4 === 0;
  return {
    name: `repo-${String(i).padStart(2, '0')}`,
    enabled: i % 9 !== 0,
    paused: i % 11 === 0 ? { since: '2026-01-01T00:00:00.000Z', by: 'root' } : null,
    user: `agent-repo-${i}`,
    path: `/srv/repos/repo-${i}`,
    baseBranch: 'main',
    schedule: '*/5 * * * *',
    maxParallel: 4,
    watcher: {
      state: busy ? 'running' : 'idle',
      pid: 1000 + i,
      heartbeatAgeSec: i % 70,
      lastTick: '2026-01-01T00:59:00.000Z',
      lastError: i % 13 === 0 ? { at: '2026-01-01T00:58:00.000Z', message: 'board: cannot read' } : null,
    },
    run: busy
      ? {
          id: `R${i}`,
          trigger: 'watch',
          jobId: null,
          startedAt: '2026-01-01T00:50:00.000Z',
          elapsedSec: 600,
          runningTasks: ['TASK-1', 'TASK-2', 'TASK-3'],
        }
      : null,
    queue: { queued: i % 3, running: busy ? 1 : 0 },
    staging: i % 10 === 0 ? null : { exists: true, ahead: i % 5, behind: i % 2 },
    board: { ready: i % 6, parked: i % 4, unreadable: 0, total: 120 },
    lastRun: {
      id: `L${i}`,
      trigger: 'watch',
      cost: '$0.42',
      tokens: 1200,
      outcome: i % 7 === 0 ? 'failed' : 'drained',
      exitCode: 0,
      endedAt: '2026-01-01T00:40:00.000Z',
      landed: i % 5,
      parked: i % 3,
      failed: 0,
    },
    errors: i % 13 === 0 ? ['staging: cannot read refs'] : [],
  };
}

const fleet: Fleet = {
  generatedAt: new Date(NOW).toISOString(),
  registry: '/etc/agent-runner/registry.toml',
  problems: [],
  repos: Array.from({ length: REPOS }, (_, i) => repo(i)),
};
const status = { lastReadAt: NOW, error: null, reading: false, intervalSec: 2 };

function buildTimes(count: number): number[] {
  const times: number[] = [];
  for (let i = 0; i < count; i++) {
    const started = performance.now();
    const view = buildView(fleet, fleet.repos[i % REPOS]!.name, NOW + i, status);
    buildRepoScreen(fleet.repos[i % REPOS]!, { ...INITIAL_STATE, tab: 'summary' }, emptyDetails(view.details.title), 0);
    times.push(performance.now() - started);
  }
  return times;
}

const idle = new Promise<never>(() => undefined);
const services: ConsoleServices = {
  start: () => ({ done: idle, stop: () => undefined }),
  runHistory: () => idle,
  staging: () => idle,
  follow: () => idle,
  taskDetail: () => idle,
};

async function keyToFrameTimes(count: number): Promise<number[]> {
  const input = new PassThrough() as PassThrough & { isTTY: boolean; setRawMode(mode: boolean): void };
  const output = new PassThrough() as PassThrough & { isTTY: boolean; columns: number; rows: number };
  Object.assign(input, { isTTY: true, setRawMode: () => undefined });
  Object.assign(output, { isTTY: true, columns: 80, rows: 24 });
  output.resume();
  const terminate = new AbortController();
  let frames = 0;
  output.on('data', () => frames++);
  const clock = { now: () => NOW, sleep: () => Promise.resolve(), setTimer: () => ({ cancel: () => undefined }) };
  const done = runDashboard({
    loadFleet: async () => fleet,
    services,
    clock,
    intervalSec: 3600,
    terminate: terminate.signal,
    terminal: { input, output, name: 'xterm-256color' },
  });
  await new Promise((resolve) => setTimeout(resolve, 200));
  const times: number[] = [];
  for (let i = 0; i < count; i++) {
    const before = frames;
    const started = performance.now();
    input.write(i % 40 < 20 ? 'j' : 'k');
    // A key that changes nothing writes no frame: fail loudly rather than wait forever.
    const deadline = performance.now() + 5000;
    while (frames === before) {
      if (performance.now() > deadline) throw new Error(`key ${i + 1} of ${count} wrote no frame within 5 s`);
      await new Promise((resolve) => setImmediate(resolve));
    }
    times.push(performance.now() - started);
  }
  terminate.abort();
  await done;
  return times;
}

export async function main(): Promise<BenchResult> {
  buildTimes(50); // warm-up
  const build = buildTimes(sized(500, 50));
  const frame = await keyToFrameTimes(sized(200, 40));
  const buildMedian = round(median(build), 3);
  const frameMedian = round(median(frame), 2);
  const frameP95 = round([...frame].sort((a, b) => a - b)[Math.floor(frame.length * 0.95)]!, 2);
  return {
    benchmark: 'dashboard-view',
    figures: [
      { name: `build the view, ${REPOS} repos (median of ${build.length})`, value: buildMedian, unit: 'ms' },
      {
        name: `key to frame written, ${REPOS} repos, 80x24 (median of ${frame.length})`,
        value: frameMedian,
        unit: 'ms',
      },
      { name: 'key to frame written, 95th percentile', value: frameP95, unit: 'ms' },
      {
        name: `key to frame, ratio against the ${BAR_MS} ms first bar`,
        value: round(frameMedian / BAR_MS, 3),
        unit: 'x',
      },
    ],
    goals: [
      {
        what: `build and render for ${REPOS} repos, as a ratio of the ${BAR_MS} ms bar (${GOAL_MS} ms)`,
        target: `<= ${GOAL_MS / BAR_MS}`,
        measured: round(frameMedian / BAR_MS, 3),
        met: frameMedian <= GOAL_MS,
      },
    ],
    notes: [
      'The build figure is the pure view alone; key to frame is what an operator waits for after a key (no git: reads run off the render path).',
    ],
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  printResult(await main());
  process.exit(0);
}
