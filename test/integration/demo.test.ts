// The README's demo command: the whole loop on the embedded example, every
// path, no root, no credentials, no network.
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { AGENT_RUNNER } from '../helpers/drain-fixture.js';

const meteredTotals = (
  records: readonly {
    inputTokens: number | null;
    outputTokens: number | null;
    cacheReadTokens: number | null;
    cacheWriteTokens: number | null;
  }[],
) => ({
  input: records.reduce((sum, record) => sum + (record.inputTokens ?? 0), 0),
  output: records.reduce((sum, record) => sum + (record.outputTokens ?? 0), 0),
  cacheRead: records.reduce((sum, record) => sum + (record.cacheReadTokens ?? 0), 0),
  cacheWrite: records.reduce((sum, record) => sum + (record.cacheWriteTokens ?? 0), 0),
});

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
    status: { landed: { taskId: string; review?: string }[]; parked: { id: string }[]; blocked: { id: string }[] };
    promotion: { promoted: boolean; pushed: boolean };
    ledger: {
      source?: 'broker';
      task: string | null;
      costUsd: number | null;
      rateLimited: boolean;
      assistant: string;
      role: string;
      provider?: string;
    }[];
    metered: {
      task: string;
      status: number;
      inputTokens: number | null;
      outputTokens: number | null;
      cacheReadTokens: number | null;
      cacheWriteTokens: number | null;
    }[];
    rateLimits: { task: string }[];
    providerTotals: { input: number; output: number; cacheRead: number; cacheWrite: number };
    brokerUrl: string;
  };
  const sessions = demo.ledger.filter((record) => record.source !== 'broker');
  const brokered = demo.ledger.filter((record) => record.source === 'broker');
  t.equal(demo.summary.outcome, 'drained');
  t.same(demo.mismatches, []);
  t.same(
    Object.fromEntries(demo.summary.tasks.map((task) => [task.id, task.outcome])),
    {
      'TASK-1': 'landed',
      'TASK-2': 'landed',
      'TASK-3': 'landed',
      'TASK-4': 'landed',
      'TASK-5': 'landed',
      'TASK-6': 'parked',
      'TASK-7': 'parked',
      'TASK-8': 'blocked',
    },
    'every task has the outcome the demo promises; TASK-9 (needs a human) never started',
  );
  t.match(result.stderr, /retrying: merge conflict in VERSION/, 'the conflicting pair is retried');
  t.same(demo.status.parked.map((task) => task.id).sort(), ['TASK-6', 'TASK-7']);
  t.match(
    demo.summary.tasks.find((task) => task.id === 'TASK-6')?.reason,
    /^review: the same finding survived a fix round/,
    'TASK-6 is parked by its review',
  );
  t.match(
    demo.status.landed.find((landing) => landing.taskId === 'TASK-4')?.review,
    /^approved \(codex\/default, round 2\/3, [0-9a-f]{12}\)$/,
    'TASK-4 is approved after one fix round',
  );
  t.ok(
    demo.status.landed.every((landing) => /^approved \(codex\//.test(landing.review ?? '')),
    'every landing was approved by codex',
  );
  t.same(
    demo.status.blocked.map((task) => task.id),
    ['TASK-8'],
  );
  t.equal(demo.status.landed.length, 5);
  t.same([demo.promotion.promoted, demo.promotion.pushed], [true, true]);
  t.match(result.stderr, /TASK-3 rate limited; no new claude session until/, 'TASK-3 waits out a rate limit');
  t.same(
    sessions.filter((record) => record.rateLimited).map((record) => record.task),
    ['TASK-3'],
    'the ledger has the rate-limited session, uncharged',
  );
  t.ok(
    sessions
      .filter((record) => record.role !== 'review')
      .every((record) => record.assistant === 'claude' && typeof record.costUsd === 'number'),
    'the scripted agent reports usage and cost as claude, for its work and its fixes',
  );
  t.ok(
    sessions
      .filter((record) => record.role === 'review')
      .every((record) => record.assistant === 'codex' && record.costUsd === null),
    'the reviews are codex sessions, whose cost codex does not report',
  );
  t.same(
    sessions
      .filter((record) => record.role === 'fix')
      .map((record) => record.task)
      .sort(),
    ['TASK-4', 'TASK-6'],
    'one fix round each for TASK-4 and TASK-6',
  );
  t.same([...new Set(sessions.map((record) => record.task))].sort(), [
    'TASK-1',
    'TASK-2',
    'TASK-3',
    'TASK-4',
    'TASK-5',
    'TASK-6',
    'TASK-7',
    'TASK-8',
  ]);
  t.match(
    result.stderr,
    new RegExp(`the agents reach their model through the broker at ${demo.brokerUrl}; the provider key never leaves`),
  );
  t.match(demo.brokerUrl, /^http:\/\/127\.0\.0\.1:\d+$/);
  t.same(
    meteredTotals(demo.metered),
    demo.providerTotals,
    "the broker's metered records add up to the fake provider's totals",
  );
  t.equal(demo.metered.length, sessions.length, 'every session made its one model call through the broker');
  t.equal(brokered.length, demo.metered.length, 'every metered response is in the ledger');
  t.ok(
    brokered.filter((record) => record.provider === 'openai').length > 0 &&
      brokered.every((record) => typeof record.costUsd === 'number'),
    "the broker prices every response, the reviews' too (codex reports no cost of its own), a 429 at nothing",
  );
  t.same(
    demo.rateLimits.map((record) => record.task),
    ['TASK-3'],
    "TASK-3's rate limit is the provider's 429, seen by the broker",
  );
  t.notOk(existsSync(demo.root), 'the temp dir is removed without --keep');
  t.ok(seconds < 30, `finishes in under 30 s (${seconds.toFixed(1)} s)`);
});

t.test('the demo ends with the ledger table', async (t) => {
  const result = spawnSync(process.execPath, [AGENT_RUNNER, 'demo'], {
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: '/nonexistent' },
    encoding: 'utf8',
  });
  t.equal(result.status, 0, result.stderr.slice(-1000));
  t.match(
    result.stdout,
    /ledger \(agent-runner ledger --by task\):\nTASK +SESSIONS +INPUT +OUTPUT +CACHE READ +CACHE WRITE +COST +AGENT REPORTED +WALL +RATE LIMITED\n/,
  );
  t.match(
    result.stdout,
    /\ndemo TASK-3 +3 +.* 1\n/,
    'TASK-3: two sessions of its own, one rate limited, and its review',
  );
  t.match(result.stdout, /\ntotal +\d+ +\d+ +\d+ +\d+ +\d+ +\$\d/);
  t.match(result.stdout, /runs with broker records count the broker's metering/, "the figures are the broker's");
});
