// Benchmark (not a test): what one Prometheus scrape of a repo's watcher costs
// over a long history, against a scrape of an empty state measured in the
// same run (the fixed cost: HTTP, prom-client, the text). A cold scrape (a
// watcher just started) reads every run record and ledger day; a warm one
// re-reads only the records that can still change (a running run, a ledger
// day whose size moved). Goal: a warm scrape over RUNS records and DAYS
// ledger days costs at most 4x an empty one.
import * as net from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { realControlPorts } from '../src/io/wire.js';
import { MetricsEndpoint } from '../src/control/metrics/index.js';
import { writeRun } from '../src/control/runs/record.js';
import { appendLedger, type SessionLedgerRecord } from '../src/control/ledger/ledger.js';
import type { RegistryRepo } from '../src/types.js';
import type { BenchResult } from './lib/types.js';
import { isQuick, sized } from './lib/quick.js';
import { median, round, runsWanted } from './lib/stats.js';

const RUNS = sized(5000, 50);
const DAYS = sized(365, 3);
const SESSIONS_PER_DAY = sized(200, 5);
const REPO = 'bench';

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

async function fill(state: string): Promise<void> {
  const { fs } = realControlPorts();
  const start = Date.parse('2025-12-01T00:00:00.000Z');
  for (let i = 0; i < RUNS; i++) {
    const at = start + i * 60_000;
    await writeRun(fs, state, {
      id: `run-${String(i).padStart(6, '0')}`,
      repo: REPO,
      trigger: 'watch',
      user: 'agent-bench',
      args: ['--drain'],
      status: 'finished',
      startedAt: new Date(at).toISOString(),
      endedAt: new Date(at + 300_000).toISOString(),
      outcome: 'drained',
      tasks: [{ id: 'TASK-1', title: 'One', outcome: i % 5 ? 'landed' : 'parked', durationMs: 1000 }],
      gates: [{ tasks: ['TASK-1'], ok: i % 5 !== 0, durationMs: 20_000 }],
    });
  }
  for (let day = 0; day < DAYS; day++) {
    const at = new Date(start + day * 86_400_000).toISOString();
    const records: SessionLedgerRecord[] = Array.from({ length: SESSIONS_PER_DAY }, (_, i) => ({
      v: 1,
      repo: REPO,
      run: `run-${day}-${i % 20}`,
      task: 'TASK-1',
      assistant: 'claude',
      role: 'implement',
      model: 'claude-sonnet-4-5',
      effort: null,
      startedAt: at,
      endedAt: at,
      wallMs: 60_000,
      inputTokens: 1000,
      outputTokens: 200,
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
      costUsd: 0.01,
      outcome: 'ok',
      rateLimited: i % 50 === 0,
      sealedAt: at,
    }));
    await appendLedger(fs, state, REPO, records);
  }
}

/** Milliseconds of `count` scrapes of a fresh endpoint over `state`: the first (cold), then the rest (warm). */
async function scrapes(state: string, count: number): Promise<{ cold: number; warm: number[] }> {
  const endpoint = new MetricsEndpoint(
    { ...realControlPorts(), state, runningAgents: async () => 0 },
    { name: REPO, status: () => ({ state: 'idle' }), log: () => undefined },
  );
  const port = await freePort();
  await endpoint.follow({ name: REPO, user: 'agent-bench', path: '/nonexistent', metricsPort: port } as RegistryRepo);
  const once = async () => {
    const started = performance.now();
    const response = await fetch(`http://127.0.0.1:${port}/metrics`);
    const body = await response.text();
    if (response.status !== 200 || !body.includes('agent_runner_tasks_total')) throw new Error(`scrape: ${body}`);
    return performance.now() - started;
  };
  try {
    const cold = await once();
    const warm: number[] = [];
    for (let i = 1; i < count; i++) warm.push(await once());
    return { cold, warm };
  } finally {
    await endpoint.close();
  }
}

export async function main(): Promise<BenchResult> {
  const root = mkdtempSync(path.join(tmpdir(), 'agent-runner-bench-metrics-'));
  try {
    const empty = path.join(root, 'empty');
    const full = path.join(root, 'full');
    await fill(full);
    const count = Math.max(5, runsWanted(3) * 5);
    const baseline = await scrapes(empty, count);
    const history = await scrapes(full, count);
    const emptyMs = median(baseline.warm);
    const warmMs = median(history.warm);
    const ratio = warmMs / emptyMs;
    return {
      benchmark: 'metrics-scrape',
      figures: [
        {
          name: 'scrape, empty state (baseline)',
          value: round(emptyMs),
          unit: 'ms',
          runs: baseline.warm.map((ms) => round(ms)),
        },
        { name: `scrape, cold, ${RUNS} runs and ${DAYS} ledger days`, value: round(history.cold), unit: 'ms' },
        {
          name: 'scrape, warm, same history',
          value: round(warmMs),
          unit: 'ms',
          runs: history.warm.map((ms) => round(ms)),
        },
        { name: 'warm / baseline', value: round(ratio), unit: 'x' },
      ],
      goals: isQuick()
        ? []
        : [{ what: 'warm scrape / empty scrape', target: '<= 4', measured: round(ratio), met: ratio <= 4 }],
      notes: [`${SESSIONS_PER_DAY} ledger records a day; ${count - 1} warm scrapes each, medians`],
    };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}
