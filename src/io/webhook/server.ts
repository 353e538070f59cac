// The push webhook receiver's socket: node:http on 127.0.0.1 only (the
// operator's reverse proxy terminates TLS in front of it). Everything is
// decided in src/control/pickup/; this moves bytes. The body is capped
// before it is read: a Content-Length over the cap is answered 413 at once,
// and a body without one is read only up to the cap, then answered 413
// and the connection closed, so nobody can make root buffer more.
import * as http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { DeliveryAnswer, DeliveryHead, WebhookListen } from '../../control/pickup/index.js';
import { contentLengthOf, readBody, singleHeader } from '../http/index.js';

function headOf(request: http.IncomingMessage): DeliveryHead {
  return {
    method: request.method ?? '',
    event: singleHeader(request, 'x-github-event'),
    delivery: singleHeader(request, 'x-github-delivery'),
    signature: singleHeader(request, 'x-hub-signature-256'),
    contentLength: contentLengthOf(request),
  };
}

function send(response: http.ServerResponse, answer: DeliveryAnswer, close = false): void {
  const body = `${JSON.stringify({ message: answer.message, woke: answer.wake })}\n`;
  response.writeHead(answer.status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(body),
    ...(close ? { connection: 'close' } : {}),
  });
  response.end(body);
}

export const listenWebhook: WebhookListen = async (handler, options) => {
  const host = options.host ?? '127.0.0.1';
  const server = http.createServer({ requireHostHeader: false, headersTimeout: 15_000, requestTimeout: 60_000 });
  server.maxHeadersCount = 100;
  server.on('request', (request: http.IncomingMessage, response: http.ServerResponse) => {
    const head = headOf(request);
    const refused = handler.admit(head);
    if (refused) {
      // The body is not read: the connection goes with the answer.
      send(response, refused, true);
      response.once('finish', () => request.socket.destroySoon());
      return;
    }
    void readBody(request, handler.maxBodyBytes).then(async (body) => {
      if (body === 'aborted') return;
      if (body === 'too-large') {
        const answer = handler.tooLarge(head);
        send(response, answer, true);
        response.once('finish', () => request.socket.destroySoon());
        return;
      }
      send(response, await handler.receive(head, body));
    });
  });
  server.on('clientError', (_error: Error, socket: Socket) => {
    if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
    socket.destroySoon();
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host, port: options.port, exclusive: true }, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    host,
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
};
