// Webhook delivery against real loopback receivers, with the real fetch, the
// real clock and a real outbox on disk: a receiver that fails once, one that
// is down and comes up, one too slow, one dead, one that says 404. Each event
// reaches a receiver that answers exactly once, a restart sends nothing
// again, and spooling never waits for a receiver.
import t, { type Test } from 'tap';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { realPorts } from '../../src/io/real-ports.js';
import { fetchNotifyPosts } from '../../src/io/wire.js';
import {
  NotifySender,
  Outbox,
  RepoNotifier,
  type NotifyEvent,
  type SendPolicy,
} from '../../src/control/notify/index.js';
import { writeRun, type RunRecord } from '../../src/control/runs/index.js';
import type { NotifyHook, RegistryRepo } from '../../src/types.js';
import { tempDir } from '../helpers/temp.js';
import { waitFor } from '../helpers/drain-fixture.js';
import { freePort } from '../helpers/free-port.js';

const TOKEN = 'hook-token-5f3a9c1e';
const FAST: SendPolicy = { timeoutMs: 1_000, firstRetryMs: 50, maxRetryMs: 200, maxAttempts: 4 };
const ports = realPorts();

type Answer = number | 'hang' | 'hold';

/** A receiver on 127.0.0.1 that answers each request as `answers` says, in turn (the last one repeats). */
async function receiver(t: Test, answers: Answer[], port = 0) {
  const bodies: Record<string, unknown>[] = [];
  const paths: string[] = [];
  let released: (() => void) | undefined;
  const held = new Promise<void>((resolve) => (released = resolve));
  let holding = 0;
  const server = http.createServer((request, response) => {
    let text = '';
    request.on('data', (chunk: Buffer) => (text += chunk.toString()));
    request.on('end', () => {
      const answer = answers[Math.min(paths.length, answers.length - 1)]!;
      paths.push(request.url ?? '');
      if (answer === 'hang') return; // never answers: the sender's timeout ends it
      const reply = () => {
        if (answer !== 'hold') bodies.push(JSON.parse(text) as Record<string, unknown>);
        response.writeHead(answer === 'hold' ? 200 : answer).end();
      };
      if (answer === 'hold') {
        holding++;
        void held.then(() => {
          bodies.push(JSON.parse(text) as Record<string, unknown>);
          reply();
        });
      } else reply();
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  t.teardown(() => {
    released?.();
    server.closeAllConnections();
    server.close();
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook/${TOKEN}`;
  return { url, bodies, paths, release: () => released?.(), holding: () => holding };
}

function anEvent(key: string): NotifyEvent {
  return {
    kind: 'drain-ended',
    repo: 'web',
    at: '2026-12-06T04:05:00.000Z',
    key,
    summary: 'web: drain drained: 1 landed, 0 parked, 0 blocked',
    details: { runId: 'R1' },
  };
}

const hookOf = (url: string): NotifyHook => ({ url, events: ['drain-ended', 'task-parked'], format: 'json' });

function setUp(t: Test) {
  const state = tempDir(t, 'agent-runner-notify-');
  const outbox = new Outbox(ports.fs, state, 'web');
  const logged: { event: string; fields: Record<string, unknown> }[] = [];
  const deps = {
    notifyPosts: fetchNotifyPosts,
    clock: ports.clock,
    log: (event: string, fields: Record<string, unknown>) => logged.push({ event, fields }),
  };
  const folder = (name: string) => {
    const dir = path.join(state, 'repos', 'web', 'notify', name);
    return existsSync(dir) ? readdirSync(dir) : [];
  };
  return { state, outbox, logged, deps, folder };
}

t.test('a receiver that fails once gets the event on the retry, once', async (t) => {
  const { outbox, logged, deps, folder } = setUp(t);
  const hook = await receiver(t, [500, 200]);
  await outbox.spool([anEvent('R1:drain-ended')], [hookOf(hook.url)], new Date().toISOString());
  const sender = new NotifySender(deps, outbox, FAST);
  sender.start();
  t.teardown(() => sender.stop());
  await waitFor(() => folder('delivered').length === 1, 10_000, 'the delivery');
  await sender.stop();
  t.equal(hook.paths.length, 2, 'two tries');
  t.same(
    hook.bodies.map((body) => body.key),
    ['R1:drain-ended', 'R1:drain-ended'],
  );
  t.same(folder('pending'), []);
  t.same(
    logged.map((entry) => entry.event),
    ['notify-retry', 'notify-delivered'],
  );
  t.same(logged[0]!.fields, {
    kind: 'drain-ended',
    key: 'R1:drain-ended',
    webhook: `${new URL(hook.url).origin}/…`,
    attempt: 1,
    error: 'the webhook answered 500',
    retryInMs: 50,
  });
  t.notOk(JSON.stringify(logged).includes(TOKEN), 'no log line carries the token');

  // A restart spools the same event again: it was delivered, so nothing is sent.
  const again = await outbox.spool([anEvent('R1:drain-ended')], [hookOf(hook.url)], new Date().toISOString());
  t.same(again, [], 'not spooled twice');
  const restarted = new NotifySender(deps, outbox, FAST);
  restarted.start();
  await restarted.pass();
  await restarted.stop();
  t.equal(hook.paths.length, 2, 'nothing more sent');
});

t.test('a receiver that is down, then comes up, gets the event once', async (t) => {
  const { outbox, logged, deps, folder } = setUp(t);
  const port = await freePort();
  const url = `http://127.0.0.1:${port}/hook/${TOKEN}`;
  await outbox.spool([anEvent('R2:drain-ended')], [hookOf(url)], new Date().toISOString());
  const sender = new NotifySender(deps, outbox, { ...FAST, firstRetryMs: 300, maxRetryMs: 300, maxAttempts: 20 });
  sender.start();
  t.teardown(() => sender.stop());
  await waitFor(() => logged.some((entry) => entry.event === 'notify-retry'), 10_000, 'a refused try');
  t.match(logged[0]!.fields.error, /ECONNREFUSED/);
  t.notOk(String(logged[0]!.fields.error).includes(TOKEN));
  const pending = JSON.parse(readFileSync(path.join(outbox.dir, 'pending', folder('pending')[0]!), 'utf8')) as {
    attempts: number;
    lastError: string;
  };
  t.ok(pending.attempts >= 1, 'the try is counted in the spooled file');
  const hook = await receiver(t, [204], port);
  await waitFor(() => folder('delivered').length === 1, 10_000, 'the delivery once the receiver is up');
  await sender.stop();
  t.equal(hook.bodies.length, 1, 'delivered once');
});

t.test('a receiver too slow to answer is given up on for that try, and retried', async (t) => {
  const { outbox, logged, deps, folder } = setUp(t);
  const hook = await receiver(t, ['hang', 200]);
  await outbox.spool([anEvent('R3:drain-ended')], [hookOf(hook.url)], new Date().toISOString());
  const sender = new NotifySender(deps, outbox, { ...FAST, timeoutMs: 300 });
  sender.start();
  t.teardown(() => sender.stop());
  await waitFor(() => folder('delivered').length === 1, 10_000, 'the delivery');
  await sender.stop();
  t.equal(logged[0]!.fields.error, 'no answer in time');
  t.equal(hook.bodies.length, 1, 'answered once');
});

t.test('a dead receiver is given up after maxAttempts, a 404 at once; neither is sent again', async (t) => {
  const { outbox, logged, deps, folder } = setUp(t);
  const dead = await receiver(t, [503]);
  const wrong = await receiver(t, [404]);
  await outbox.spool([anEvent('R4:drain-ended')], [hookOf(dead.url), hookOf(wrong.url)], new Date().toISOString());
  const sender = new NotifySender(deps, outbox, FAST);
  sender.start();
  t.teardown(() => sender.stop());
  await waitFor(() => folder('failed').length === 2, 10_000, 'both given up');
  await sender.stop();
  t.equal(dead.paths.length, FAST.maxAttempts, 'the dead one tried maxAttempts times');
  t.equal(wrong.paths.length, 1, 'the 404 once');
  const failed = await outbox.list('failed');
  t.same(failed.map((delivery) => delivery.attempts).sort(), [1, FAST.maxAttempts]);
  t.ok(failed.every((delivery) => delivery.gaveUpAt !== undefined));
  t.same(
    logged
      .filter((entry) => entry.event === 'notify-gave-up')
      .map((entry) => entry.fields.error)
      .sort(),
    [
      'the webhook answered 404: check its url in the registry (agent-runner notify test --repo NAME)',
      'the webhook answered 503',
    ],
  );
  const restarted = new NotifySender(deps, outbox, FAST);
  await restarted.pass();
  t.equal(dead.paths.length + wrong.paths.length, FAST.maxAttempts + 1, 'a restart sends nothing given up');
  t.same(await outbox.spool([anEvent('R4:drain-ended')], [hookOf(dead.url)], new Date().toISOString()), []);
});

t.test('spooling never waits for a receiver holding its answer', async (t) => {
  const { outbox, deps, folder } = setUp(t);
  const hook = await receiver(t, ['hold']);
  await outbox.spool([anEvent('R5:drain-ended')], [hookOf(hook.url)], new Date().toISOString());
  const sender = new NotifySender(deps, outbox, { ...FAST, timeoutMs: 30_000 });
  sender.start();
  t.teardown(() => sender.stop());
  await waitFor(() => hook.holding() === 1, 10_000, 'the receiver to hold the first POST');
  const spooled = await outbox.spool([anEvent('R6:drain-ended')], [hookOf(hook.url)], new Date().toISOString());
  t.equal(spooled.length, 1, 'spooled while the POST is held');
  t.equal(hook.bodies.length, 0, 'and the receiver had still not answered');
  sender.kick();
  hook.release();
  await waitFor(() => folder('delivered').length === 2, 10_000, 'both delivered once released');
  await sender.stop();
  t.same(hook.bodies.map((body) => body.key).sort(), ['R5:drain-ended', 'R6:drain-ended']);
});

t.test('the notifier: a new run record is told, redacted; a first start tells no past run', async (t) => {
  const { state, logged, folder } = setUp(t);
  const hook = await receiver(t, [200]);
  const run = (id: string, reason: string): RunRecord => ({
    id,
    repo: 'web',
    trigger: 'watch',
    user: 'agent-web',
    args: ['--drain'],
    status: 'finished',
    startedAt: '2026-12-06T04:00:00.000Z',
    endedAt: '2026-12-06T04:05:00.000Z',
    outcome: 'drained',
    exitCode: 0,
    tasks: [{ id: 'TASK-7', title: 'Seven', outcome: 'parked', reason, durationMs: 1 }],
  });
  await writeRun(ports.fs, state, run('20261206T040000000000Z-000001', 'old news'));
  const repo = { name: 'web', path: '/nonexistent', notify: [hookOf(hook.url)] } as unknown as RegistryRepo;
  const notifier = new RepoNotifier(
    {
      ...ports,
      notifyPosts: fetchNotifyPosts,
      state,
      log: (event, fields) => logged.push({ event, fields }),
      redact: async (_repo, text) => text.split('ghp_sekrit').join('[redacted]'),
    },
    'web',
    FAST,
  );
  await notifier.start(repo);
  t.teardown(() => notifier.stop());
  await writeRun(ports.fs, state, run('20261206T041000000000Z-000002', 'leaked ghp_sekrit in the gate log'));
  notifier.observe({ runEnded: true });
  await notifier.settled();
  await waitFor(() => folder('delivered').length === 2, 10_000, 'the two events');
  await notifier.stop();
  t.same(hook.bodies.map((body) => body.event).sort(), ['drain-ended', 'task-parked']);
  const parked = hook.bodies.find((body) => body.event === 'task-parked')!;
  t.equal(parked.reason, 'leaked [redacted] in the gate log');
  t.equal(parked.key, '20261206T041000000000Z-000002:TASK-7:parked');
  t.notOk(JSON.stringify(hook.bodies).includes('old news'), 'the run before the first start is not told');
  notifier.observe({ runEnded: true });
  await notifier.settled();
  t.equal(hook.bodies.length, 2, 'looking again tells nothing new');
});
