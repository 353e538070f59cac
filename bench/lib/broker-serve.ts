// A process of the broker benchmark (bench/broker-latency.ts): the fake
// provider, a broker in front of one, or a bare hop (node:http in, undici
// out, nothing checked or metered: what any proxy in between would cost),
// each in its own process as they would be (the agent's CLI, the broker and
// the provider do not share an event loop). Prints one JSON line when
// listening; exits when its stdin closes.
//   node dist/bench/lib/broker-serve.js fake DELTAS DELTA_CHARS [BYTES_PER_SECOND]
//   node dist/bench/lib/broker-serve.js broker ORIGIN KEY_FILE
//   node dist/bench/lib/broker-serve.js hop ORIGIN
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent } from 'undici';
import { createBroker } from '../../src/broker/broker.js';
import { createCapabilityStore } from '../../src/broker/capabilities.js';
import { DEFAULT_MAX_BODY_BYTES } from '../../src/broker/config.js';
import {
  listenBroker,
  randomTokenBytes,
  realKeySource,
  startFakeProvider,
  undiciUpstream,
} from '../../src/io/broker/index.js';

const [role, first, second, third] = process.argv.slice(2);
let line: Record<string, unknown>;
if (role === 'fake') {
  const fake = await startFakeProvider({
    deltas: Number(first),
    deltaText: 'x'.repeat(Number(second)),
    ...(third ? { bytesPerSecond: Number(third) } : {}),
  });
  line = { port: fake.port };
} else if (role === 'broker') {
  const store = createCapabilityStore(randomTokenBytes);
  const broker = createBroker(
    {
      repo: 'bench',
      providers: { anthropic: { origin: first!, keyFile: second!, keyKind: 'api-key' } },
      maxBodyBytes: DEFAULT_MAX_BODY_BYTES,
      brokerUid: process.getuid!(),
    },
    {
      tokens: store,
      clock: { now: () => Date.now() },
      budget: () => ({ allow: true }),
      usage: { seal: () => undefined },
      rateLimits: { rateLimited: () => undefined },
      upstream: undiciUpstream({ proxy: undefined }),
      keys: realKeySource,
      log: (event) => process.stderr.write(`${JSON.stringify(event)}\n`),
    },
  );
  const listener = await listenBroker(broker, { port: 0 });
  const token = store.issue({
    repo: 'bench',
    run: 'bench',
    task: 'TASK-1',
    uid: process.getuid!(),
    expiresAt: Date.now() + 86_400_000,
  });
  line = { port: listener.port, token };
} else if (role === 'hop') {
  const upstream = new Agent({ keepAliveTimeout: 30_000 });
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      void (async () => {
        const answer = await upstream.request({
          origin: first!,
          path: request.url ?? '/',
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: Buffer.concat(chunks),
        });
        response.writeHead(answer.statusCode, { 'content-type': String(answer.headers['content-type']) });
        for await (const chunk of answer.body as AsyncIterable<Buffer>)
          if (!response.write(chunk)) await new Promise((resolve) => response.once('drain', resolve));
        response.end();
      })().catch(() => response.destroy());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  line = { port: (server.address() as AddressInfo).port };
} else {
  throw new Error(`usage: broker-serve.js fake DELTAS DELTA_CHARS | broker ORIGIN KEY_FILE | hop ORIGIN (got ${role})`);
}
process.stdout.write(`${JSON.stringify(line)}\n`);
process.stdin.resume();
process.stdin.on('end', () => process.exit(0));
