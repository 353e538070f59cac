// The README's demo command: the whole loop on the embedded example, every
// path, no root, no credentials, no network.
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { AGENT_RUNNER } from '../helpers/drain-fixture.js';

t.test('agent-runner demo walks every path and promotes', async (t) => {
  const started = Date.now();
  const result = spawnSync(process.execPath, [AGENT_RUNNER, 'demo', '--json'], {
    // No credentials and a minimal environment: the demo needs neither.
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: '/nonexistent' },
    encoding: 'utf8',
  });
  const seconds = (Date.now() - started) / 1000;
  t.equal(result.status, 0, result.stderr.slice(-1000));
  const demo = JSON.parse(result.stdout) as {
    root: string;
    summary: { outcome: string; tasks: { id: string; outcome: string; reason?: string }[] };
    mismatches: string[];
    status: { landed: { taskId: string }[]; parked: { id: string }[]; blocked: { id: string }[] };
    promotion: { promoted: boolean; pushed: boolean };
  };
  t.equal(demo.summary.outcome, 'drained');
  t.same(demo.mismatches, []);
  t.same(
    Object.fromEntries(demo.summary.tasks.map((task) => [task.id, task.outcome])),
    { 'TASK-1': 'landed', 'TASK-2': 'landed', 'TASK-3': 'landed', 'TASK-4': 'landed', 'TASK-5': 'landed', 'TASK-6': 'landed', 'TASK-7': 'parked', 'TASK-8': 'blocked' },
    'every task has the outcome the demo promises; TASK-9 (needs a human) never started',
  );
  t.match(result.stderr, /retrying: merge conflict in VERSION/, 'the conflicting pair is retried');
  t.same(demo.status.parked.map((task) => task.id), ['TASK-7']);
  t.same(demo.status.blocked.map((task) => task.id), ['TASK-8']);
  t.equal(demo.status.landed.length, 6);
  t.same([demo.promotion.promoted, demo.promotion.pushed], [true, true]);
  t.notOk(existsSync(demo.root), 'the temp dir is removed without --keep');
  t.ok(seconds < 30, `finishes in under 30 s (${seconds.toFixed(1)} s)`);
});
