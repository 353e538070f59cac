// The loopback HTTP server behind the LoopbackHttp port: 127.0.0.1 only, GET
// and HEAD only, no request body read, short timeouts, so a slow or idle
// client holds nothing for long. Every user on the host can connect to a
// loopback port (the egress lock keeps repo users off it, docs/security.md):
// what is served here must be fit for any local reader.
import * as http from 'node:http';
import type { LoopbackAnswer, LoopbackHttp, LoopbackListener, LoopbackRequest } from '../../ports.js';

const HOST = '127.0.0.1';
/** A request must arrive whole within this; a scrape is one small GET. */
const REQUEST_TIMEOUT_MS = 10_000;

function why(error: NodeJS.ErrnoException, port: number): string {
  if (error.code === 'EADDRINUSE')
    return `${HOST}:${port} is already in use by another process (find it with: ss -ltnp 'sport = :${port}')`;
  if (error.code === 'EACCES') return `${HOST}:${port} may not be bound by this process (a port below 1024 needs root)`;
  return `${HOST}:${port} could not be bound: ${error.message}`;
}

async function answerTo(
  request: http.IncomingMessage,
  answer: (request: LoopbackRequest) => Promise<LoopbackAnswer>,
): Promise<LoopbackAnswer> {
  if (request.method !== 'GET' && request.method !== 'HEAD')
    return { status: 405, contentType: 'text/plain; charset=utf-8', body: 'only GET and HEAD\n' };
  const path = (request.url ?? '/').split('?')[0]!;
  try {
    return await answer({ method: request.method, path });
  } catch (error) {
    return { status: 500, contentType: 'text/plain; charset=utf-8', body: `${(error as Error).message}\n` };
  }
}

export const loopbackHttp: LoopbackHttp = {
  listen(port, answer) {
    const server = http.createServer((request, response) => {
      // Nothing is read from a body; a client that sends one has it discarded.
      request.resume();
      void answerTo(request, answer).then((reply) => {
        response.writeHead(reply.status, {
          'content-type': reply.contentType,
          'content-length': Buffer.byteLength(reply.body),
        });
        response.end(request.method === 'HEAD' ? undefined : reply.body);
      });
    });
    server.requestTimeout = REQUEST_TIMEOUT_MS;
    server.headersTimeout = REQUEST_TIMEOUT_MS;
    server.keepAliveTimeout = 5_000;
    return new Promise<LoopbackListener>((resolve, reject) => {
      server.once('error', (error: NodeJS.ErrnoException) => reject(new Error(why(error, port))));
      server.listen({ host: HOST, port, exclusive: true }, () => {
        let closed: Promise<void> | undefined;
        resolve({
          close: () =>
            (closed ??= new Promise<void>((done) => {
              server.close(() => done());
              server.closeAllConnections();
            })),
        });
      });
    });
  },
};
