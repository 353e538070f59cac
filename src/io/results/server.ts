// The results endpoint's socket and its CGI: node:http on the given address,
// each admitted request run through `git http-backend` (real git) with the
// environment the endpoint built, the CGI's headers turned into the HTTP
// answer and its body streamed back. What a request may do is decided in
// backends/kubernetes/results/; this moves bytes, and counts them: a body
// past the cap stops the backend and is answered 413, and the ref updates at
// the head of a push are read (at most MAX_COMMAND_BYTES) and shown to the
// endpoint before git sees a byte. Refusals are text/plain, which git prints
// as "remote: ..." when it comes with the first request of a push.
import * as http from 'node:http';
import { spawn } from 'node:child_process';
import type { AddressInfo, Socket } from 'node:net';
import type {
  ResultsAdmission,
  ResultsHandler,
  ResultsListen,
  ResultsRequestHead,
} from '../../../backends/kubernetes/results/endpoint.js';
import { MAX_COMMAND_BYTES, readPushCommands } from '../../../backends/kubernetes/results/protocol.js';
import { contentLengthOf, singleHeader } from '../http/index.js';

function headOf(request: http.IncomingMessage): ResultsRequestHead {
  return {
    method: request.method ?? '',
    url: request.url ?? '/',
    authorization: singleHeader(request, 'authorization'),
    contentLength: contentLengthOf(request),
    contentEncoding: singleHeader(request, 'content-encoding'),
    remoteAddress: request.socket.remoteAddress ?? '',
  };
}

/** A refusal: the status and one line git can print; the connection goes with it when the body was not all read. */
function refuse(response: http.ServerResponse, status: number, message: string, close: boolean): void {
  if (response.headersSent) {
    response.destroy();
    return;
  }
  const body = `agent-runner results: ${message}\n`;
  response.writeHead(status, {
    'content-type': 'text/plain; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    ...(close ? { connection: 'close' } : {}),
  });
  response.end(body);
  if (close) response.once('finish', () => response.socket?.destroySoon());
}

/** The CGI's header block, read: its status and headers, or undefined while the blank line has not come. */
function cgiHead(bytes: Buffer): { status: number; headers: Record<string, string>; rest: Buffer } | undefined {
  const text = bytes.toString('latin1');
  const end = /\r?\n\r?\n/.exec(text);
  if (!end) return undefined;
  const headers: Record<string, string> = {};
  let status = 200;
  for (const line of text.slice(0, end.index).split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    if (name === 'status') status = Number(value.split(' ')[0]) || 500;
    else headers[name] = value;
  }
  return { status, headers, rest: bytes.subarray(end.index + end[0].length) };
}

/** Reads the rest of a refused body (up to the cap) so the client sees the answer, not a reset. */
async function drain(body: AsyncIterator<Buffer>, max: number): Promise<void> {
  let size = 0;
  for (let next = await body.next(); !next.done; next = await body.next()) {
    size += next.value.length;
    if (size > max) return;
  }
}

async function runBackend(
  handler: ResultsHandler,
  admission: Exclude<ResultsAdmission, { kind: 'refuse' }>,
  request: http.IncomingMessage,
  response: http.ServerResponse,
  body: AsyncIterator<Buffer> | undefined,
  start: Buffer,
): Promise<void> {
  const { backend } = admission;
  const child = spawn(backend.program, [...backend.args], {
    cwd: backend.cwd,
    env: {
      ...backend.env,
      CONTENT_TYPE: singleHeader(request, 'content-type') ?? '',
      REMOTE_ADDR: request.socket.remoteAddress ?? '',
    },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    if (stderr.length < 8192) stderr += chunk.toString('utf8');
  });
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  child.once('error', (error) => handler.log('results-backend-error', { message: error.message }));
  let headBytes = Buffer.alloc(0);
  let answered = false;
  child.stdout.on('data', (chunk: Buffer) => {
    if (answered) {
      response.write(chunk);
      return;
    }
    headBytes = Buffer.concat([headBytes, chunk]);
    const head = cgiHead(headBytes);
    if (!head) return;
    answered = true;
    response.writeHead(head.status, head.headers);
    if (head.rest.length) response.write(head.rest);
  });
  child.stdin.on('error', () => undefined);
  let tooLarge = false;
  if (body) {
    let size = start.length;
    if (start.length) child.stdin.write(start);
    for (let next = await body.next(); !next.done; next = await body.next()) {
      size += next.value.length;
      if (size > handler.maxBodyBytes) {
        tooLarge = true;
        child.kill('SIGKILL');
        break;
      }
      if (!child.stdin.write(next.value))
        await new Promise<void>((resolve) => {
          child.stdin.once('drain', resolve);
          child.once('close', resolve);
        });
    }
  }
  child.stdin.end();
  const code = await exited;
  if (tooLarge) {
    handler.log('results-refused', { status: 413, ...admission.attempt, message: 'the push passed the cap' });
    refuse(response, 413, `the push passed ${handler.maxBodyBytes} bytes, the results endpoint's cap`, true);
    return;
  }
  if (!answered) {
    handler.log('results-backend-failed', { ...admission.attempt, exitCode: code, stderr: stderr.trim() });
    refuse(response, 500, `git http-backend answered nothing (exit ${code})`, true);
    return;
  }
  if (stderr.trim()) handler.log('results-backend-said', { ...admission.attempt, stderr: stderr.trim() });
  response.end();
}

async function answer(handler: ResultsHandler, request: http.IncomingMessage, response: http.ServerResponse) {
  const head = headOf(request);
  const admission = await handler.admit(head).catch((error: unknown): ResultsAdmission => ({
    kind: 'refuse',
    status: 500,
    message: error instanceof Error ? error.message : String(error),
  }));
  if (admission.kind === 'refuse') {
    handler.log('results-refused', { status: admission.status, message: admission.message, url: head.url });
    refuse(response, admission.status, admission.message, true);
    return;
  }
  if (admission.kind === 'advertise') {
    request.resume();
    await runBackend(handler, admission, request, response, undefined, Buffer.alloc(0));
    return;
  }
  const body = request[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  let start = Buffer.alloc(0);
  for (;;) {
    const next = await body.next();
    if (next.done) break;
    start = Buffer.concat([start, next.value]);
    if (readPushCommands(start) !== 'incomplete' || start.length > MAX_COMMAND_BYTES) break;
  }
  const read = readPushCommands(start);
  const problem =
    read === 'incomplete'
      ? `the push's ref updates did not end within ${MAX_COMMAND_BYTES} bytes`
      : 'problem' in read
        ? read.problem
        : handler.refusePush(read.commands, admission.resultRef);
  if (problem !== undefined) {
    handler.log('results-refused', { status: 403, ...admission.attempt, message: problem });
    await drain(body, handler.maxBodyBytes);
    refuse(response, 403, problem, true);
    return;
  }
  await runBackend(handler, admission, request, response, body, start);
  handler.log('results-push-handled', { ...admission.attempt, ref: admission.resultRef });
}

export const listenResults: ResultsListen = async (handler, options) => {
  const server = http.createServer({ requireHostHeader: false, headersTimeout: 15_000, requestTimeout: 30 * 60_000 });
  server.maxHeadersCount = 100;
  server.on('request', (request: http.IncomingMessage, response: http.ServerResponse) => {
    void answer(handler, request, response).catch((error: unknown) => {
      handler.log('results-error', { message: error instanceof Error ? error.message : String(error) });
      refuse(response, 500, 'internal error', true);
    });
  });
  server.on('clientError', (_error: Error, socket: Socket) => {
    if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
    socket.destroySoon();
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host: options.host, port: options.port, exclusive: true }, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    host: options.host,
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
};
