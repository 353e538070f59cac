// A local fake of both providers' model APIs, on 127.0.0.1 (an ephemeral
// port, never another interface): what the broker's tests and benchmark talk
// to instead of Anthropic and OpenAI, and what the demo will. It records every
// request it receives, answers in each API's own shapes (Anthropic Messages,
// streamed as server-sent events or as one JSON message; OpenAI Responses, the
// same two ways), and keeps the sum of the tokens its answers reported, so a
// test can hold the broker's metering to it. Answers can be queued: a 429
// with retry-after, a stream cut midway; and a request can ask for its 429
// itself (x-fake-provider-answer: rate-limit, what the scripted agent sends
// for a session its task rate-limits).
import * as http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { DEFAULT_MODELS, FAKE_ANSWER_HEADER } from '../../scripted-agent/model-call.js';

/** The retry-after of a 429 a request asked for (FAKE_ANSWER_HEADER). */
const ASKED_RETRY_AFTER_SEC = 60;

export interface FakeRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: http.IncomingHttpHeaders;
  readonly rawHeaders: readonly string[];
  readonly body: string;
}

export interface FakeTokens {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
}

export type FakeAnswer =
  | { readonly kind: 'rate-limit'; readonly retryAfterSec: number }
  | { readonly kind: 'error'; readonly status: number }
  /** The stream stops after its first text delta and the connection is cut. */
  | { readonly kind: 'cut' };

export interface FakeProviderOptions {
  /** Text deltas in a streamed answer (a long stream for the benchmark). */
  readonly deltas?: number;
  /** The text of each delta. */
  readonly deltaText?: string;
  /** Stream no faster than this (a model writes kilobytes a second); unpaced when absent. */
  readonly bytesPerSecond?: number;
}

export interface FakeProvider {
  readonly origin: string;
  readonly port: number;
  readonly requests: FakeRequest[];
  /** The tokens its answers reported, summed (OpenAI's cached tokens as cacheRead, apart from input). */
  readonly totals: Readonly<FakeTokens>;
  /** The answers to give instead of a normal one, first in first out. */
  queue(answer: FakeAnswer): void;
  close(): Promise<void>;
}

/** The usage of the n-th answer (from 0): different each time, so a sum tells a missed or doubled one. */
export function fakeUsage(n: number): FakeTokens {
  return { input: 11 + n, output: 40 + 3 * n, cacheRead: 1000 + 7 * n, cacheWrite: 5 + n };
}

const sse = (name: string, data: unknown) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;

function anthropicMessage(id: string, model: string, usage: FakeTokens, text: string) {
  return {
    id,
    type: 'message',
    role: 'assistant',
    model,
    content: [{ type: 'text', text }],
    stop_reason: 'end_turn',
    stop_sequence: null,
    usage: {
      input_tokens: usage.input,
      cache_creation_input_tokens: usage.cacheWrite,
      cache_read_input_tokens: usage.cacheRead,
      output_tokens: usage.output,
    },
  };
}

function* anthropicStream(id: string, model: string, usage: FakeTokens, deltas: number, text: string, cut: boolean) {
  const start = anthropicMessage(id, model, { ...usage, output: 1 }, '');
  yield sse('message_start', { type: 'message_start', message: { ...start, content: [], stop_reason: null } });
  yield sse('content_block_start', {
    type: 'content_block_start',
    index: 0,
    content_block: { type: 'text', text: '' },
  });
  yield sse('ping', { type: 'ping' });
  // The same event each time: rendered once, so a long stream costs the fake its writes, not JSON.
  const delta = sse('content_block_delta', {
    type: 'content_block_delta',
    index: 0,
    delta: { type: 'text_delta', text },
  });
  for (let i = 0; i < deltas; i++) {
    yield delta;
    if (cut) return;
  }
  yield sse('content_block_stop', { type: 'content_block_stop', index: 0 });
  // Cumulative: the output so far, which at the end is all of it.
  yield sse('message_delta', {
    type: 'message_delta',
    delta: { stop_reason: 'end_turn', stop_sequence: null },
    usage: { output_tokens: usage.output },
  });
  yield sse('message_stop', { type: 'message_stop' });
}

function openaiResponse(id: string, model: string, usage: FakeTokens | undefined, text: string) {
  return {
    id,
    object: 'response',
    created_at: 1764680000,
    status: usage ? 'completed' : 'in_progress',
    model,
    output: usage
      ? [
          {
            id: `msg_${id}`,
            type: 'message',
            status: 'completed',
            role: 'assistant',
            content: [{ type: 'output_text', text, annotations: [] }],
          },
        ]
      : [],
    usage: usage
      ? {
          input_tokens: usage.input + usage.cacheRead,
          input_tokens_details: { cached_tokens: usage.cacheRead },
          output_tokens: usage.output,
          output_tokens_details: { reasoning_tokens: Math.floor(usage.output / 2) },
          total_tokens: usage.input + usage.cacheRead + usage.output,
        }
      : null,
  };
}

function* openaiStream(id: string, model: string, usage: FakeTokens, deltas: number, text: string, cut: boolean) {
  let sequence = 0;
  const event = (type: string, fields: Record<string, unknown>) =>
    sse(type, { type, sequence_number: sequence++, ...fields });
  yield event('response.created', { response: openaiResponse(id, model, undefined, '') });
  yield event('response.in_progress', { response: openaiResponse(id, model, undefined, '') });
  const item = { id: `msg_${id}`, type: 'message', status: 'in_progress', role: 'assistant', content: [] };
  yield event('response.output_item.added', { output_index: 0, item });
  for (let i = 0; i < deltas; i++) {
    yield event('response.output_text.delta', { item_id: item.id, output_index: 0, content_index: 0, delta: text });
    if (cut) return;
  }
  const full = text.repeat(deltas);
  yield event('response.output_text.done', { item_id: item.id, output_index: 0, content_index: 0, text: full });
  const content = [{ type: 'output_text', text: full, annotations: [] }];
  yield event('response.output_item.done', { output_index: 0, item: { ...item, status: 'completed', content } });
  yield event('response.completed', { response: openaiResponse(id, model, usage, full) });
}

export async function startFakeProvider(options: FakeProviderOptions = {}): Promise<FakeProvider> {
  const requests: FakeRequest[] = [];
  const queued: FakeAnswer[] = [];
  const totals: FakeTokens = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 };
  const sockets = new Set<Socket>();
  const deltas = options.deltas ?? 3;
  const deltaText = options.deltaText ?? 'Hello';
  const pace = options.bytesPerSecond;
  let answered = 0;

  const report = (usage: FakeTokens, openai: boolean) => {
    totals.input += usage.input;
    totals.output += usage.output;
    totals.cacheRead += usage.cacheRead;
    if (!openai) totals.cacheWrite += usage.cacheWrite;
  };

  const stream = async (response: http.ServerResponse, events: Iterable<string>, cut: boolean) => {
    response.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
    // Events go out in writes of up to 16 KiB (a TLS record): what a client reading a remote provider gets.
    let pending = '';
    let sent = 0;
    const began = performance.now();
    const flush = async () => {
      if (pending && !response.write(pending)) await new Promise((resolve) => response.once('drain', resolve));
      sent += pending.length;
      pending = '';
      const due = pace ? began + (sent / pace) * 1000 - performance.now() : 0;
      if (due > 0) await new Promise((resolve) => setTimeout(resolve, due));
    };
    for (const text of events) {
      pending += text;
      if (pending.length >= 16 * 1024) await flush();
    }
    await flush();
    // Cut: once what was written has gone out, the connection drops with the chunked body unfinished.
    if (cut) response.write('', () => response.socket?.destroy());
    else response.end();
  };

  const answer = async (request: FakeRequest, response: http.ServerResponse) => {
    const json = (status: number, value: unknown, headers: Record<string, string> = {}) =>
      response.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(value));
    // The scripted agent's sessions that its task rate-limits ask for the 429 themselves.
    const next: FakeAnswer | undefined =
      request.headers[FAKE_ANSWER_HEADER] === 'rate-limit'
        ? { kind: 'rate-limit', retryAfterSec: ASKED_RETRY_AFTER_SEC }
        : queued.shift();
    if (next?.kind === 'rate-limit')
      return json(
        429,
        {
          type: 'error',
          error: {
            type: 'rate_limit_error',
            message: 'Number of request tokens has exceeded your per-minute rate limit',
          },
        },
        { 'retry-after': String(next.retryAfterSec) },
      );
    if (next?.kind === 'error')
      return json(next.status, { type: 'error', error: { type: 'api_error', message: 'fake' } });
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(request.body) as Record<string, unknown>;
    } catch {
      return json(400, { type: 'error', error: { type: 'invalid_request_error', message: 'body is not JSON' } });
    }
    const path = request.url.split('?')[0];
    // A request that names no model is answered by one the price table knows, as a provider's default would be.
    const model =
      typeof body.model === 'string'
        ? body.model
        : path === '/v1/responses'
          ? DEFAULT_MODELS.openai
          : DEFAULT_MODELS.anthropic;
    const cut = next?.kind === 'cut';
    if (path === '/v1/messages/count_tokens') return json(200, { input_tokens: 42 });
    if (path !== '/v1/messages' && path !== '/v1/responses')
      return json(404, { type: 'error', error: { type: 'not_found_error', message: 'Not Found' } });
    const usage = fakeUsage(answered++);
    const id = `fake_${answered}`;
    const openai = path === '/v1/responses';
    if (body.stream === true) {
      // A cut stream reports what its provider would have billed had it ended: nothing here counts it.
      if (!cut) report(usage, openai);
      const events = openai
        ? openaiStream(id, model, usage, deltas, deltaText, cut)
        : anthropicStream(id, model, usage, deltas, deltaText, cut);
      return stream(response, events, cut);
    }
    report(usage, openai);
    const text = deltaText.repeat(deltas);
    return json(200, openai ? openaiResponse(id, model, usage, text) : anthropicMessage(id, model, usage, text));
  };

  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const recorded: FakeRequest = {
        method: request.method ?? '',
        url: request.url ?? '',
        headers: request.headers,
        rawHeaders: request.rawHeaders,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      requests.push(recorded);
      answer(recorded, response).catch(() => response.destroy());
    });
  });
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    origin: `http://127.0.0.1:${port}`,
    port,
    requests,
    totals,
    queue: (next) => void queued.push(next),
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
