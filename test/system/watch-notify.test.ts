// Webhook notifications from a real watcher, as root with a real repo user:
// the drain lands its task, and a loopback receiver that fails the first
// POST (500) gets the drain's end and staging ready exactly once each, after
// the retry; the run's agent never sees the webhook's URL; `notify status`
// and `notify test` say what happened without the URL's token.
import t from 'tap';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { appendFileSync, readFileSync, readdirSync } from 'node:fs';
import * as path from 'node:path';
import { systemTestMayRun } from '../helpers/system.js';
import { controlFixture, landed, runBin, startBin } from '../helpers/control-fixture.js';
import { waitFor } from '../helpers/drain-fixture.js';

const TOKEN = 'T9xq-notify-token-4471';

t.test('a watcher tells a webhook of its drain once per event, through a failed first try', async (t) => {
  if (!systemTestMayRun(t, ['setpriv', 'useradd', 'git'])) return;
  const fixture = controlFixture(t, [{ id: 'TASK-1', title: 'One', status: 'To Do' }], {
    schedule: '*/2 * * * * *',
  });
  const bodies: { event: string; key: string; [field: string]: unknown }[] = [];
  let requests = 0;
  const server = http.createServer((request, response) => {
    let text = '';
    request.on('data', (chunk: Buffer) => (text += chunk.toString()));
    request.on('end', () => {
      requests++;
      if (requests === 1) return void response.writeHead(500).end();
      bodies.push(JSON.parse(text) as (typeof bodies)[number]);
      response.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    server.closeAllConnections();
    server.close();
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook/${TOKEN}`;
  appendFileSync(fixture.registry, `\n[[repos.${fixture.name}.notify]]\nurl = "${url}"\nformat = "json"\n`);

  const watch = startBin(fixture, 'watch', ['--no-isolation', fixture.name]);
  t.teardown(() => {
    if (watch.child.exitCode === null) watch.child.kill('SIGKILL');
  });
  const landedNow = () => {
    try {
      return landed(fixture.origin, 'auto/work');
    } catch {
      return [];
    }
  };
  await waitFor(() => landedNow().includes('TASK-1'), 60_000, 'the drain to land TASK-1');
  // The first try fails (500); the retry comes SEND_POLICY.firstRetryMs (5 s) later.
  await waitFor(
    () => ['drain-ended', 'staging-ready'].every((kind) => bodies.some((body) => body.event === kind)),
    30_000,
    'the drain-ended and staging-ready events',
  );
  // Ticks go on every 2 s: long enough for anything sent twice to show.
  await new Promise((resolve) => setTimeout(resolve, 5000));
  watch.child.kill('SIGTERM');
  const stopped = await watch.done;
  t.equal(stopped.code, 0, stopped.stderr.slice(-2000));

  t.same(bodies.map((body) => body.event).sort(), ['drain-ended', 'staging-ready'], 'each event once');
  t.equal(requests, 3, 'one failed try and two deliveries');
  const ended = bodies.find((body) => body.event === 'drain-ended')!;
  t.match(ended, {
    source: 'agent-runner',
    version: 1,
    repo: fixture.name,
    outcome: 'drained',
    landed: 1,
    parked: 0,
    blocked: 0,
    pushed: true,
    staging: { ahead: Number },
  });
  const ready = bodies.find((body) => body.event === 'staging-ready')!;
  t.match(ready.key, /^staging-ready:[0-9a-f]{40}$/);
  t.equal(ready.promote, `agent-runner promote --repo ${fixture.name}`);

  const log = stopped.stderr
    .split('\n')
    .filter((line) => line.startsWith('{"time"'))
    .map((line) => JSON.parse(line) as { event: string; webhook?: string; error?: string });
  const retry = log.find((entry) => entry.event === 'notify-retry');
  t.match(retry, { webhook: `${new URL(url).origin}/…`, error: 'the webhook answered 500' });
  t.equal(log.filter((entry) => entry.event === 'notify-delivered').length, 2);
  t.notOk(stopped.stderr.includes(TOKEN), "the watcher's log never carries the URL's token");

  const probeEnv = readdirSync(fixture.probeOut).filter((name) => name.startsWith('env-'));
  t.ok(probeEnv.length >= 1, "the agent's environment was recorded");
  for (const name of probeEnv)
    t.notOk(readFileSync(path.join(fixture.probeOut, name), 'utf8').includes(TOKEN), `${name}: no webhook URL`);

  const status = await runBin(fixture, 'agent-runner', ['notify', 'status', fixture.name, '--json']);
  t.equal(status.code, 0, status.stderr);
  t.notOk(status.stdout.includes(TOKEN));
  t.match(JSON.parse(status.stdout), {
    repos: [
      {
        repo: fixture.name,
        pending: [],
        failed: [],
        delivered: 2,
        webhooks: [{ webhook: `${new URL(url).origin}/…` }],
      },
    ],
  });
  const test = await runBin(fixture, 'agent-runner', ['notify', 'test', '--repo', fixture.name, '--json']);
  t.equal(test.code, 0, test.stderr);
  t.notOk(test.stdout.includes(TOKEN));
  t.match(JSON.parse(test.stdout), { repo: fixture.name, webhooks: [{ ok: true, status: 204 }] });
  t.equal(bodies.at(-1)?.event, 'test');
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  const down = await runBin(fixture, 'agent-runner', ['notify', 'test', fixture.name]);
  t.equal(down.code, 1, 'a webhook that cannot be reached fails the test');
  t.match(down.stdout, new RegExp(`^http://127\\.0\\.0\\.1:\\d+/… \\(json\\): failed: fetch failed: ECONNREFUSED`));
  t.notOk(down.stdout.includes(TOKEN));
});
