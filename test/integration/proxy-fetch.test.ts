// The GitHub client's fetch through the repo's proxy: https over a CONNECT
// tunnel (Node 20's fetch ignores https_proxy), with a real TLS server and a
// CONNECT proxy on 127.0.0.1; a refused CONNECT says which host to allow.
import t, { type Test } from 'tap';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import * as http from 'node:http';
import * as https from 'node:https';
import * as net from 'node:net';
import * as path from 'node:path';
import type { AddressInfo } from 'node:net';
import { proxyFetch } from '../../src/io/proxy-fetch.js';
import { tempDir } from '../helpers/temp.js';

const HOST = 'api.proxytest.invalid';

const sockets = new Set<net.Socket>();

async function listen(t: Test, server: http.Server | https.Server): Promise<number> {
  server.on('connection', (socket: net.Socket) => sockets.add(socket));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    for (const socket of sockets) socket.destroy();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return (server.address() as AddressInfo).port;
}

t.test('https through a CONNECT proxy, and a refused CONNECT', async (t) => {
  const dir = tempDir(t);
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      path.join(dir, 'key.pem'),
      '-out',
      path.join(dir, 'cert.pem'),
      '-subj',
      `/CN=${HOST}`,
      '-days',
      '1',
      '-addext',
      `subjectAltName=DNS:${HOST}`,
    ],
    { stdio: 'ignore' },
  );
  const cert = readFileSync(path.join(dir, 'cert.pem'), 'utf8');
  const api = https.createServer({ key: readFileSync(path.join(dir, 'key.pem')), cert }, (request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      response.writeHead(201, { 'content-type': 'application/json', 'x-ratelimit-remaining': '4999' });
      response.end(
        JSON.stringify({
          method: request.method,
          url: request.url,
          body: Buffer.concat(chunks).toString('utf8'),
          auth: request.headers.authorization,
        }),
      );
    });
  });
  const apiPort = await listen(t, api);
  const tunnels: string[] = [];
  let refuse = false;
  const proxy = http.createServer((_request, response) => response.writeHead(405).end());
  proxy.on('connect', (request: http.IncomingMessage, client: net.Socket) => {
    tunnels.push(request.url ?? '');
    if (refuse) return void client.end('HTTP/1.1 403 Forbidden\r\n\r\n');
    sockets.add(client);
    const upstream = net.connect(apiPort, '127.0.0.1', () => {
      client.write('HTTP/1.1 200 Connection established\r\n\r\n');
      upstream.pipe(client);
      client.pipe(upstream);
    });
    sockets.add(upstream);
  });
  const proxyPort = await listen(t, proxy);
  const fetchVia = proxyFetch(`http://127.0.0.1:${proxyPort}`, undefined, cert);
  const response = await fetchVia(`https://${HOST}:${apiPort}/repos/acme/widgets/pulls?state=open`, {
    method: 'POST',
    headers: { authorization: 'token abc', 'content-type': 'application/json' },
    body: '{"title":"x"}',
  });
  t.equal(response.status, 201);
  t.equal(response.headers.get('x-ratelimit-remaining'), '4999');
  t.same(await response.json(), {
    method: 'POST',
    url: '/repos/acme/widgets/pulls?state=open',
    body: '{"title":"x"}',
    auth: 'token abc',
  });
  t.same(tunnels, [`${HOST}:${apiPort}`], 'one CONNECT to the API host, through the proxy');

  refuse = true;
  await t.rejects(
    fetchVia(`https://${HOST}:${apiPort}/x`),
    /refused CONNECT api\.proxytest\.invalid:\d+ \(403\); is api\.proxytest\.invalid on the repo's allowlist\?/,
  );
  t.equal(proxyFetch(undefined, undefined), fetch, 'no proxy: plain fetch');
});
