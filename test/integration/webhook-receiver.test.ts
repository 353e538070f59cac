// The push webhook receiver over a real socket on 127.0.0.1 (src/io/webhook/server.ts) with the real signature check
// (@octokit/webhooks), real files and the real wake watch (inotify): a bad signature is 401, a replayed delivery id
// 409, a body over the cap 413 before it is read (a Content-Length over it is answered with no body sent; a chunked
// body is cut at the cap while the client is still sending); a signed push to a registered repo's base writes that
// repo's wake file, which the watch notices, and nothing else does.
import t from 'tap';
import * as net from 'node:net';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { sign } from '@octokit/webhooks-methods';
import { WebhookReceiver, type WebhookListener } from '../../src/control/pickup/index.js';
import { listenWebhook } from '../../src/io/webhook/server.js';
import { realWake } from '../../src/io/webhook/index.js';
import { realPorts } from '../../src/io/real-ports.js';
import { cronScheduler } from '../../src/io/cron.js';
import { repoStateDir, wakeFile } from '../../src/paths.js';

const SECRET = 'a-webhook-secret-of-some-length';
const CAP = 64 * 1024;

interface Reply {
  readonly status: number;
  readonly body: string;
  /** The server closed the connection. */
  readonly closed: boolean;
}

/** One raw HTTP/1.1 exchange: the head, then `body` (all at once), then the answer up to its end or the close. */
function exchange(port: number, head: string, body: string | undefined, untilClose = false): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    let data = '';
    socket.on('data', (chunk) => {
      data += chunk.toString('utf8');
      const end = data.indexOf('\r\n\r\n');
      const length = /content-length: (\d+)/i.exec(data.slice(0, end));
      if (!untilClose && end >= 0 && length && data.length >= end + 4 + Number(length[1])) finish(false);
    });
    socket.on('close', () => finish(true));
    socket.on('error', (error) => (data ? finish(true) : reject(error)));
    let done = false;
    const finish = (closed: boolean) => {
      if (done) return;
      done = true;
      socket.destroy();
      resolve({
        status: Number(/^HTTP\/1\.1 (\d+)/.exec(data)?.[1] ?? 0),
        body: data.slice(data.indexOf('\r\n\r\n') + 4),
        closed,
      });
    };
    socket.write(head);
    if (body !== undefined) socket.write(body);
  });
}

function headFor(headers: Record<string, string>): string {
  const lines = Object.entries({ host: '127.0.0.1', ...headers }).map(([name, value]) => `${name}: ${value}`);
  return `POST /webhook HTTP/1.1\r\n${lines.join('\r\n')}\r\n\r\n`;
}

let deliveries = 0;
async function deliver(
  port: number,
  event: string,
  payload: unknown,
  options: { delivery?: string; secret?: string } = {},
): Promise<Reply> {
  const body = JSON.stringify(payload);
  const delivery = options.delivery ?? `00000000-0000-0000-0000-${String(++deliveries).padStart(12, '0')}`;
  return exchange(
    port,
    headFor({
      'content-type': 'application/json',
      'content-length': String(Buffer.byteLength(body)),
      'x-github-event': event,
      'x-github-delivery': delivery,
      'x-hub-signature-256': await sign(options.secret ?? SECRET, body),
    }),
    body,
  );
}

const push = (fullName: string, ref: string) => ({
  ref,
  before: '0'.repeat(40),
  after: 'a'.repeat(40),
  repository: {
    full_name: fullName,
    html_url: `https://github.com/${fullName}`,
    clone_url: `https://github.com/${fullName}.git`,
  },
});

t.test('the receiver on a real socket', async (t) => {
  const root = mkdtempSync(path.join(tmpdir(), 'agent-runner-webhook-'));
  const state = path.join(root, 'state');
  const registryFile = path.join(root, 'registry.toml');
  // "web" is named by the registry's url; "local" by its clone's .git/config, read as data.
  mkdirSync(path.join(root, 'local/.git'), { recursive: true });
  writeFileSync(
    path.join(root, 'local/.git/config'),
    '[remote "origin"]\n\turl = git@github.com:acme/local.git\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n',
  );
  writeFileSync(
    registryFile,
    [
      '[repos.web]',
      `path = "${root}/web"`,
      'url = "https://github.com/acme/web.git"',
      'proxy_port = 700',
      '[repos.local]',
      `path = "${root}/local"`,
      'base = "trunk"',
      'proxy_port = 701',
      '',
    ].join('\n'),
  );
  const logged: Record<string, unknown>[] = [];
  const ports = { ...realPorts(), scheduler: cronScheduler };
  const receiver = new WebhookReceiver(ports, {
    registryFile,
    state,
    secret: SECRET,
    maxBodyBytes: CAP,
    log: (event, fields) => logged.push({ event, ...fields }),
  });
  const listener: WebhookListener = await listenWebhook(receiver, { port: 0 });
  const wakes = { web: 0, local: 0 };
  const watches = (['web', 'local'] as const).map((name) => {
    mkdirSync(repoStateDir(state, name), { recursive: true, mode: 0o700 });
    return realWake.watch(
      wakeFile(state, name),
      () => wakes[name]++,
      (error) => t.fail(`the watch of ${name} failed: ${error.message}`),
    );
  });
  t.teardown(async () => {
    for (const watch of watches) watch.close();
    await listener.close();
    rmSync(root, { recursive: true, force: true });
  });
  t.equal(listener.host, '127.0.0.1', 'loopback only');
  const until = async (condition: () => boolean, what: string) => {
    for (let i = 0; i < 500 && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 10));
    t.ok(condition(), what);
  };

  t.test('a bad signature is 401 and wakes nothing', async (t) => {
    const reply = await deliver(listener.port, 'push', push('acme/web', 'refs/heads/main'), {
      secret: 'not-the-secret-at-all',
    });
    t.equal(reply.status, 401);
    t.match(JSON.parse(reply.body).message, /the signature does not match/);
    const unsigned = await exchange(
      listener.port,
      headFor({ 'content-length': '2', 'x-github-event': 'push', 'x-github-delivery': 'abc' }),
      '{}',
    );
    t.equal(unsigned.status, 401, 'no signature at all');
    t.notOk(existsSync(wakeFile(state, 'web')), 'no wake file');
  });

  t.test('a signed push to the base wakes that repo only; the same delivery again is 409', async (t) => {
    const delivery = '11111111-2222-3333-4444-555555555555';
    const first = await deliver(listener.port, 'push', push('acme/web', 'refs/heads/main'), { delivery });
    t.equal(first.status, 200, first.body);
    t.same(JSON.parse(first.body).woke, ['web']);
    await until(() => wakes.web === 1, 'the wake watch noticed the wake file');
    t.match(JSON.parse(readFileSync(wakeFile(state, 'web'), 'utf8')), { delivery });
    const again = await deliver(listener.port, 'push', push('acme/web', 'refs/heads/main'), { delivery });
    t.equal(again.status, 409, 'a replay');
    t.match(JSON.parse(again.body).message, /was received already/);
    const other = await deliver(listener.port, 'push', push('acme/local', 'refs/heads/trunk'));
    t.equal(other.status, 200, 'the repo named by its clone’s origin');
    await until(() => wakes.local === 1, 'its own wake file');
    await new Promise((resolve) => setTimeout(resolve, 100));
    t.equal(wakes.web, 1, 'the replay woke nothing');
  });

  t.test('ping, other events, other branches', async (t) => {
    t.equal((await deliver(listener.port, 'ping', { zen: 'Keep it logically awesome.' })).status, 200);
    t.equal((await deliver(listener.port, 'issues', { action: 'opened' })).status, 202);
    t.equal((await deliver(listener.port, 'push', push('acme/web', 'refs/heads/feature'))).status, 202);
    t.equal((await deliver(listener.port, 'push', push('acme/unknown', 'refs/heads/main'))).status, 202);
    const get = await exchange(listener.port, 'GET / HTTP/1.1\r\nhost: x\r\n\r\n', undefined);
    t.equal(get.status, 405);
  });

  t.test('a Content-Length over the cap is 413 before any of the body is sent', async (t) => {
    const reply = await exchange(
      listener.port,
      headFor({
        'content-length': String(100 * 1024 * 1024),
        'x-github-event': 'push',
        'x-github-delivery': 'big-1',
        'x-hub-signature-256': `sha256=${'0'.repeat(64)}`,
      }),
      undefined,
      true,
    );
    t.equal(reply.status, 413);
    t.ok(reply.closed, 'and the connection is closed: the body is never read');
  });

  t.test('a chunked body is cut at the cap while the client still sends', async (t) => {
    const socket = net.connect(listener.port, '127.0.0.1');
    let answer = '';
    let sent = 0;
    const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
    socket.on('data', (chunk) => (answer += chunk.toString('utf8')));
    socket.on('error', () => undefined);
    socket.write(
      headFor({
        'transfer-encoding': 'chunked',
        'x-github-event': 'push',
        'x-github-delivery': 'big-2',
        'x-hub-signature-256': `sha256=${'0'.repeat(64)}`,
      }),
    );
    const piece = 'x'.repeat(4096);
    // Never the last chunk: the request is never complete, so an answer can only come from the cap.
    for (let i = 0; i < 4 * (CAP / piece.length) && answer === '' && !socket.destroyed; i++) {
      socket.write(`${piece.length.toString(16)}\r\n${piece}\r\n`);
      sent += piece.length;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    await closed;
    t.match(answer, /^HTTP\/1\.1 413 /, `413 after ${sent} bytes sent, the request unfinished`);
    t.match(answer, /ran past the 65536 bytes this receiver reads/);
  });

  t.test('every delivery is logged with its answer', async (t) => {
    t.ok(logged.some((line) => line.status === 401 && line.githubEvent === 'push'));
    t.ok(logged.some((line) => line.status === 409 && line.delivery === '11111111-2222-3333-4444-555555555555'));
    t.ok(logged.some((line) => line.status === 413 && line.delivery === 'big-1'));
    t.ok(logged.some((line) => Array.isArray(line.woke) && (line.woke as string[])[0] === 'web'));
  });
});
