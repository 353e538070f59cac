// The broker's listening socket for one repo: node:http on 127.0.0.1, one
// port per repo (a privileged one in production, so no agent can squat it;
// the egress ruleset lets each agent uid reach only its own). Everything is
// decided in src/broker/broker.ts; this moves bytes. Platform limits it lives
// with: Node's parser refuses malformed framing before any handler runs, so
// its clientError is answered here with a 400 and the socket closed; CONNECT
// and Upgrade never reach the request handler either and get the same; a
// loopback TCP peer has no SO_PEERCRED, so the peer's uid, when asked for,
// comes from /proc/net/tcp (peer-uid.ts).
import * as http from 'node:http';
import type { Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import type { Broker, BrokerAnswer, PeerUid } from '../../broker/broker.js';
import { errorBody } from '../../broker/providers.js';
import type { PeerUidLookup } from './peer-uid.js';
import { readBody } from '../http/index.js';

export interface BrokerListenOptions {
  /** 127.0.0.1 unless a test says otherwise. */
  readonly host?: string;
  /** 0 for an ephemeral port (tests, the bench). */
  readonly port: number;
  /** Looks up the peer's uid per connection; undefined: the port alone binds the repo. */
  readonly peerUid?: PeerUidLookup;
  /** Receiving a request's head, and all of it (a body of the cap on a slow link). */
  readonly headersTimeoutMs?: number;
  readonly requestTimeoutMs?: number;
}

export interface BrokerListener {
  readonly host: string;
  readonly port: number;
  /** Stops listening and ends every connection (answers in flight are cut, and sealed as cut). */
  close(): Promise<void>;
}

const rawAnswer = (status: number, message: string) => {
  const body = errorBody(undefined, status, `agent-runner broker: ${message}`);
  return (
    `HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\nConnection: close\r\nContent-Type: application/json\r\n` +
    `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`
  );
};

function refuseSocket(socket: Socket, status: number, message: string): void {
  if (socket.writable) socket.end(rawAnswer(status, message));
  socket.destroySoon();
}

/** Resolves when the response can take more, or has closed. */
function writable(response: http.ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      response.off('drain', done);
      response.off('close', done);
      resolve();
    };
    response.on('drain', done);
    response.on('close', done);
  });
}

async function send(response: http.ServerResponse, answer: BrokerAnswer): Promise<void> {
  const headers = answer.headers.flatMap(([name, value]) => [name, value]);
  if (answer.close) headers.push('connection', 'close');
  if (answer.body instanceof Uint8Array) {
    headers.push('content-length', String(answer.body.byteLength));
    response.writeHead(answer.status, headers);
    response.end(answer.body);
    return;
  }
  response.writeHead(answer.status, headers);
  // for-await ends the body's iterator however the loop is left: the meter seals once, complete or cut.
  for await (const chunk of answer.body) {
    if (response.destroyed) break;
    if (!response.write(chunk)) await writable(response);
  }
  response.end();
}

async function serve(
  broker: Broker,
  request: http.IncomingMessage,
  response: http.ServerResponse,
  peerUid: PeerUid,
): Promise<void> {
  const admission = broker.admit(
    {
      method: request.method ?? '',
      target: request.url ?? '',
      httpVersion: request.httpVersion,
      rawHeaders: request.rawHeaders,
    },
    peerUid,
  );
  if (!admission.admitted) return send(response, admission.answer);
  const ticket = admission.ticket;
  if (ticket.contentLength !== undefined && ticket.contentLength > broker.maxBodyBytes)
    return send(response, broker.tooLarge(ticket));
  const body = await readBody(request, broker.maxBodyBytes);
  if (body === 'aborted') return;
  if (body === 'too-large') return send(response, broker.tooLarge(ticket));
  const controller = new AbortController();
  response.once('close', () => {
    if (!response.writableFinished) controller.abort();
  });
  await send(response, await broker.forward(ticket, body, controller.signal));
}

export async function listenBroker(broker: Broker, options: BrokerListenOptions): Promise<BrokerListener> {
  const host = options.host ?? '127.0.0.1';
  const peers = new WeakMap<Socket, Promise<number | null>>();
  const server = http.createServer({
    requireHostHeader: true,
    joinDuplicateHeaders: false,
    insecureHTTPParser: false,
    headersTimeout: options.headersTimeoutMs ?? 30_000,
    requestTimeout: options.requestTimeoutMs ?? 10 * 60_000,
    keepAliveTimeout: 65_000,
  });
  server.maxHeadersCount = 200;
  const lookup = options.peerUid;
  if (lookup)
    server.on('connection', (socket: Socket) => {
      peers.set(
        socket,
        lookup({
          remoteAddress: socket.remoteAddress ?? '',
          remotePort: socket.remotePort ?? 0,
          localAddress: socket.localAddress ?? '',
          localPort: socket.localPort ?? 0,
        }),
      );
    });
  server.on('request', (request: http.IncomingMessage, response: http.ServerResponse) => {
    const peer = lookup ? (peers.get(request.socket) ?? Promise.resolve(null)) : undefined;
    const run = async () => serve(broker, request, response, peer === undefined ? undefined : await peer);
    run().catch(() => {
      if (!response.headersSent) {
        const body = errorBody(undefined, 502, 'agent-runner broker: the request failed inside the broker');
        response.writeHead(502, { 'content-type': 'application/json', connection: 'close' }).end(body);
      } else response.destroy();
    });
  });
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Socket) => {
    if (error.code === 'ECONNRESET' || !socket.writable) return void socket.destroy();
    const status = error.code === 'HPE_HEADER_OVERFLOW' ? 431 : error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
    refuseSocket(socket, status, `the request is malformed (${error.code ?? 'parse error'}); nothing was forwarded`);
  });
  server.on('connect', (_request: http.IncomingMessage, socket: Socket) =>
    refuseSocket(socket, 400, 'CONNECT is refused: this is no proxy'),
  );
  server.on('upgrade', (_request: http.IncomingMessage, socket: Socket) =>
    refuseSocket(socket, 400, 'protocol upgrades are refused'),
  );
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host, port: options.port, exclusive: true }, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  return {
    host,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
