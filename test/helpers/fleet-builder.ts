// Builder fakes for the dashboard's tests: an idle, healthy repo and a fleet
// read at a fixed time; override only what a test is about.
import type { Fleet, FleetRepo } from '../../src/control/fleet/fleet.js';

export const READ_AT = Date.parse('2026-01-01T01:00:00.000Z');

export function aRepo(name: string, change: Partial<FleetRepo> = {}): FleetRepo {
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

export function aFleet(repos: FleetRepo[], change: Partial<Fleet> = {}): Fleet {
  return {
    generatedAt: new Date(READ_AT).toISOString(),
    registry: '/etc/agent-runner/registry.toml',
    problems: [],
    repos,
    ...change,
  };
}

/** A repo with a run in progress on `tasks`. */
export function aBusyRepo(name: string, tasks: readonly string[] = ['TASK-4']): FleetRepo {
  return aRepo(name, {
    watcher: { state: 'running', pid: 77, heartbeatAgeSec: 10, lastTick: '2026-01-01T00:59:00.000Z', lastError: null },
    run: {
      id: 'R2',
      trigger: 'watch',
      jobId: null,
      startedAt: '2026-01-01T00:55:00.000Z',
      elapsedSec: 300,
      runningTasks: tasks,
    },
  });
}
