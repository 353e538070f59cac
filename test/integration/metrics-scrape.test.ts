// A metrics endpoint over real ports: records written to a real state dir,
// scraped over loopback, the body judged by the real promtool. Counters rise
// with new records and do not fall when retention removes one; a new
// endpoint (a restarted watcher) starts from the records on disk. A port in
// use is said in the journal and tried again.
import t from 'tap';
import * as net from 'node:net';
import { rmSync } from 'node:fs';
import { realControlPorts } from '../../src/io/wire.js';
import { MetricsEndpoint, type WatcherView } from '../../src/control/metrics/index.js';
import { runFile } from '../../src/paths.js';
import { writeRun, type RunRecord } from '../../src/control/runs/record.js';
import { appendLedger, type SessionLedgerRecord } from '../../src/control/ledger/ledger.js';
import { Spool } from '../../src/control/jobs/spool.js';
import type { RegistryRepo } from '../../src/types.js';
import { tempDir } from '../helpers/temp.js';
import { promtoolCheck, samples, scrape } from '../helpers/promtool.js';
import { freePort } from '../helpers/free-port.js';

const REPO = 'web';

const run = (id: string, fields: Partial<RunRecord> = {}): RunRecord => ({
  id,
  repo: REPO,
  trigger: 'watch',
  user: 'agent-web',
  args: ['--drain'],
  status: 'finished',
  startedAt: '2026-12-02T10:00:00.000Z',
  endedAt: '2026-12-02T10:05:00.000Z',
  outcome: 'drained',
  tasks: [{ id: 'TASK-1', title: 'One', outcome: 'landed', durationMs: 1000 }],
  gates: [{ tasks: ['TASK-1'], ok: true, durationMs: 3000 }],
  ...fields,
});

const session = (runId: string): SessionLedgerRecord => ({
  v: 1,
  repo: REPO,
  run: runId,
  task: 'TASK-1',
  assistant: 'claude',
  role: 'implement',
  model: 'claude-sonnet-4-5',
  effort: null,
  startedAt: '2026-12-02T10:00:00.000Z',
  endedAt: '2026-12-02T10:01:00.000Z',
  wallMs: 60_000,
  inputTokens: 1000,
  outputTokens: 200,
  cacheReadTokens: 0,
  cacheWriteTokens: 0,
  costUsd: 0.5,
  outcome: 'ok',
  rateLimited: true,
  sealedAt: '2026-12-02T10:06:00.000Z',
});

function endpointFor(
  state: string,
  events: Record<string, unknown>[],
  status: WatcherView = { state: 'idle' },
  runningAgents = async () => 0,
) {
  return new MetricsEndpoint(
    { ...realControlPorts(), state, runningAgents },
    { name: REPO, status: () => status, log: (event, fields) => events.push({ event, ...fields }) },
  );
}

const repoWith = (port: number | undefined) =>
  ({
    name: REPO,
    user: 'agent-web',
    path: '/nonexistent',
    ...(port === undefined ? {} : { metricsPort: port }),
  }) as RegistryRepo;

t.test('a scrape over loopback passes promtool and counts the records', async (t) => {
  const state = tempDir(t, 'agent-runner-metrics-');
  const ports = realControlPorts();
  await writeRun(ports.fs, state, run('20261202T100000000000Z-aaaaaa'));
  await appendLedger(ports.fs, state, REPO, [session('20261202T100000000000Z-aaaaaa')]);
  const spool = new Spool(ports.fs, state, REPO);
  await spool.ensure();
  await spool.enqueue(ports.ids, new Date().toISOString(), { kind: 'drain' }, undefined);
  const events: Record<string, unknown>[] = [];
  const endpoint = endpointFor(state, events);
  t.teardown(() => endpoint.close());
  const port = await freePort();
  await endpoint.follow(repoWith(port));
  t.match(events, [{ event: 'metrics-listening', address: `127.0.0.1:${port}` }]);
  endpoint.tickSucceeded();

  const first = await scrape(port);
  t.equal(first.status, 200);
  t.match(first.type, /^text\/plain; version=0\.0\.4/);
  const check = promtoolCheck(first.body);
  t.same(check, { code: 0, said: '' }, 'promtool check metrics finds nothing to say');
  const values = samples(first.body);
  t.equal(values.get('agent_runner_tasks_total{repo="web",outcome="landed"}'), 1);
  t.equal(values.get('agent_runner_runs_total{repo="web",outcome="drained"}'), 1);
  t.equal(values.get('agent_runner_gate_runs_total{repo="web",result="green"}'), 1);
  t.equal(values.get('agent_runner_gate_runs_per_landing{repo="web"}'), 1);
  t.equal(values.get('agent_runner_drain_duration_seconds_bucket{le="300",repo="web"}'), 1);
  t.equal(values.get('agent_runner_drain_duration_seconds_bucket{le="120",repo="web"}'), 0);
  t.equal(values.get('agent_runner_drain_duration_seconds_sum{repo="web"}'), 300);
  t.equal(values.get('agent_runner_gate_duration_seconds_count{repo="web",result="green"}'), 1);
  t.equal(values.get('agent_runner_tokens_total{repo="web",kind="input"}'), 1000);
  t.equal(values.get('agent_runner_cost_usd_total{repo="web"}'), 0.5);
  t.equal(values.get('agent_runner_rate_limit_waits_total{repo="web"}'), 1);
  t.equal(values.get('agent_runner_queue_depth{repo="web"}'), 1);
  t.equal(values.get('agent_runner_running_agents{repo="web"}'), 0);
  const tick = values.get('agent_runner_last_successful_tick_timestamp_seconds{repo="web"}')!;
  t.ok(Math.abs(tick - Date.now() / 1000) < 60, `the tick just now (${tick})`);

  // A second run lands two more; then retention removes the first record: no counter falls.
  await writeRun(
    ports.fs,
    state,
    run('20261202T110000000000Z-bbbbbb', {
      tasks: [
        { id: 'TASK-2', title: 'Two', outcome: 'landed', durationMs: 1 },
        { id: 'TASK-3', title: 'Three', outcome: 'landed', durationMs: 1 },
        { id: 'TASK-4', title: 'Four', outcome: 'parked', durationMs: 1 },
      ],
      gates: [
        { tasks: ['TASK-2', 'TASK-3', 'TASK-4'], ok: false, durationMs: 5000 },
        { tasks: ['TASK-2', 'TASK-3'], ok: true, durationMs: 4000 },
      ],
    }),
  );
  await appendLedger(ports.fs, state, REPO, [session('20261202T110000000000Z-bbbbbb')]);
  const second = samples((await scrape(port)).body);
  t.equal(second.get('agent_runner_tasks_total{repo="web",outcome="landed"}'), 3, 'a new record counts');
  t.equal(second.get('agent_runner_tasks_total{repo="web",outcome="parked"}'), 1);
  t.equal(second.get('agent_runner_gate_runs_total{repo="web",result="red"}'), 1);
  t.equal(second.get('agent_runner_gate_runs_per_landing{repo="web"}'), 1);
  t.equal(second.get('agent_runner_tokens_total{repo="web",kind="input"}'), 2000, 'a ledger day read again');
  rmSync(runFile(state, REPO, '20261202T100000000000Z-aaaaaa'));
  const pruned = samples((await scrape(port)).body);
  t.equal(pruned.get('agent_runner_tasks_total{repo="web",outcome="landed"}'), 3, 'a pruned record still counts');

  // A restarted watcher reads what is on disk.
  await endpoint.close();
  await t.rejects(scrape(port), 'closed: nothing listens');
  const again = endpointFor(state, []);
  t.teardown(() => again.close());
  await again.follow(repoWith(port));
  const restarted = samples((await scrape(port)).body);
  t.equal(restarted.get('agent_runner_tasks_total{repo="web",outcome="landed"}'), 2, 'the records left on disk');
  t.equal(restarted.get('agent_runner_tokens_total{repo="web",kind="input"}'), 2000, 'the ledger is never pruned');
  t.notOk(
    restarted.has('agent_runner_last_successful_tick_timestamp_seconds{repo="web"}'),
    'no tick yet in this watcher',
  );

  t.equal((await scrape(port, '/other')).status, 404);
  const posted = await fetch(`http://127.0.0.1:${port}/metrics`, { method: 'POST', body: 'x' });
  t.equal(posted.status, 405, 'only GET and HEAD');
  await posted.text();
});

t.test('a port in use is said once and tried again; no metrics_port closes it', async (t) => {
  const state = tempDir(t, 'agent-runner-metrics-');
  const squatter = net.createServer();
  await new Promise<void>((resolve) => squatter.listen(0, '127.0.0.1', resolve));
  const { port } = squatter.address() as net.AddressInfo;
  const events: Record<string, unknown>[] = [];
  const endpoint = endpointFor(state, events);
  t.teardown(() => endpoint.close());
  await endpoint.follow(repoWith(port));
  await endpoint.follow(repoWith(port));
  t.match(events, [
    {
      event: 'metrics-not-served',
      error: `metrics_port ${port}: 127.0.0.1:${port} is already in use by another process (find it with: ss -ltnp 'sport = :${port}')`,
      fix: 'free the port or set another metrics_port for repos.web; the watcher tries again every tick',
    },
  ]);
  t.equal(events.length, 1, 'said once, not every tick');
  await new Promise<void>((resolve) => squatter.close(() => resolve()));
  await endpoint.follow(repoWith(port));
  t.match(events[1], { event: 'metrics-listening' }, 'listening once the port is free');
  t.equal((await scrape(port)).status, 200);
  await endpoint.follow(repoWith(undefined));
  await t.rejects(scrape(port), 'metrics_port removed: no longer listening');
});

t.test('scrapes that arrive together share one reading', async (t) => {
  const state = tempDir(t, 'agent-runner-metrics-');
  await writeRun(
    realControlPorts().fs,
    state,
    run('20261202T120000000000Z-cccccc', { status: 'running', endedAt: undefined, outcome: undefined, tasks: [] }),
  );
  const endpoint = endpointFor(state, [], { state: 'running' }, async () => 3);
  t.teardown(() => endpoint.close());
  const port = await freePort();
  await endpoint.follow(repoWith(port));
  const bodies = await Promise.all(Array.from({ length: 8 }, () => scrape(port)));
  t.same(
    bodies.map((body) => body.status),
    Array.from({ length: 8 }, () => 200),
  );
  t.equal(new Set(bodies.map((body) => body.body)).size, 1, 'the same figures');
  t.equal(
    samples(bodies[0]!.body).get('agent_runner_metrics_source_up{repo="web",source="runs"}'),
    1,
    'the records could be read',
  );
  t.equal(samples(bodies[0]!.body).get('agent_runner_runs_total{repo="web",outcome="drained"}'), 0, 'none ended yet');
  t.equal(samples(bodies[0]!.body).get('agent_runner_run_in_progress{repo="web"}'), 1);
  t.equal(
    samples(bodies[0]!.body).get('agent_runner_running_agents{repo="web"}'),
    3,
    'while a run is in progress, the running agents are counted',
  );
});
