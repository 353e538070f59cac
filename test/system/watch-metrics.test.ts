// A real watcher with a metrics_port: it listens on 127.0.0.1 from its start,
// drains a ready task as the repo's users, and a scrape over loopback after
// the drain counts the landing, the gate run and the drain's duration; the
// body passes the real promtool. After SIGTERM nothing listens; a watcher
// started again counts the same landing from the records on disk.
import t from 'tap';
import { systemTestMayRun } from '../helpers/system.js';
import { controlFixture, startBin } from '../helpers/control-fixture.js';
import { waitFor } from '../helpers/drain-fixture.js';
import { PROMTOOL, promtoolCheck, samples, scrape } from '../helpers/promtool.js';
import { freePort } from '../helpers/free-port.js';

/** Polls an async condition every 200 ms until it holds. */
async function eventually(condition: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

t.test('a watcher serves its repo metrics on loopback; a scrape after a drain counts it', async (t) => {
  if (!systemTestMayRun(t, ['setpriv', 'useradd', 'git', PROMTOOL])) return;
  const port = await freePort();
  const fixture = controlFixture(t, [{ id: 'TASK-1', title: 'One', status: 'To Do' }], {
    schedule: '*/2 * * * * *',
    registryExtra: `metrics_port = ${port}\n`,
  });
  const watcher = startBin(fixture, 'watch', ['--no-isolation', fixture.name]);
  t.teardown(() => {
    if (watcher.child.exitCode === null) watcher.child.kill('SIGKILL');
  });
  let stderr = '';
  watcher.child.stderr!.on('data', (chunk) => (stderr += chunk));
  await waitFor(() => stderr.includes('"event":"metrics-listening"'), 30_000, 'the metrics endpoint to listen');
  t.match(stderr, `"address":"127.0.0.1:${port}"`, 'on loopback, at the registry port');

  await waitFor(() => stderr.includes('"event":"run-finished"'), 120_000, 'the drain to finish');
  const label = `repo="${fixture.name}"`;
  let body = '';
  await eventually(
    async () => {
      body = (await scrape(port)).body;
      return samples(body).get(`agent_runner_tasks_total{${label},outcome="landed"}`) === 1;
    },
    30_000,
    'a scrape to count the landing',
  );
  t.same(promtoolCheck(body), { code: 0, said: '' }, 'promtool check metrics: clean');
  const values = samples(body);
  t.equal(values.get(`agent_runner_runs_total{${label},outcome="drained"}`), 1, 'one drain');
  t.equal(values.get(`agent_runner_gate_runs_total{${label},result="green"}`), 1, 'one green gate run');
  t.equal(values.get(`agent_runner_gate_runs_per_landing{${label}}`), 1);
  t.equal(values.get(`agent_runner_drain_duration_seconds_count{${label}}`), 1);
  t.ok(values.get(`agent_runner_drain_duration_seconds_sum{${label}}`)! > 0, 'the drain took time');
  t.equal(values.get(`agent_runner_gate_duration_seconds_count{${label},result="green"}`), 1);
  t.equal(values.get(`agent_runner_queue_depth{${label}}`), 0);
  t.equal(values.get(`agent_runner_run_in_progress{${label}}`), 0);
  t.equal(values.get(`agent_runner_agent_sessions_total{${label}}`), 1, "the agent's session, from the ledger");
  for (const source of ['runs', 'ledger', 'queue', 'agents'])
    t.equal(values.get(`agent_runner_metrics_source_up{${label},source="${source}"}`), 1, `${source} read`);
  await eventually(
    async () => samples((await scrape(port)).body).has(`agent_runner_last_successful_tick_timestamp_seconds{${label}}`),
    30_000,
    'a tick after the drain',
  );

  watcher.child.kill('SIGTERM');
  t.equal((await watcher.done).code, 0, 'SIGTERM stops the watcher cleanly');
  await t.rejects(scrape(port), 'a stopped watcher serves nothing');

  const again = startBin(fixture, 'watch', ['--no-isolation', fixture.name]);
  t.teardown(() => {
    if (again.child.exitCode === null) again.child.kill('SIGKILL');
  });
  let stderrAgain = '';
  again.child.stderr!.on('data', (chunk) => (stderrAgain += chunk));
  await waitFor(() => stderrAgain.includes('"event":"metrics-listening"'), 30_000, 'the new watcher to listen');
  const restarted = samples((await scrape(port)).body);
  t.equal(restarted.get(`agent_runner_tasks_total{${label},outcome="landed"}`), 1, 'counted again from the records');
  again.child.kill('SIGTERM');
  t.equal((await again.done).code, 0);
});
