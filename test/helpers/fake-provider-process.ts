// The local fake provider as a process of its own, for tests that run the broker where the test process is not (a
// network namespace): `node fake-provider-process.js OUT` listens on 127.0.0.1 (an ephemeral port), prints its
// origin as one line, and on SIGTERM writes what it received (each request's path and credential headers) and its
// token totals to OUT as JSON, then exits.
import { writeFileSync } from 'node:fs';
import { startFakeProvider } from '../../src/io/broker/fake-provider.js';

export interface FakeProviderReport {
  readonly requests: readonly {
    readonly url: string;
    readonly authorization: string | null;
    readonly apiKey: string | null;
  }[];
  readonly totals: { input: number; output: number; cacheRead: number; cacheWrite: number };
}

const out = process.argv[2];
if (out) {
  const fake = await startFakeProvider();
  process.stdout.write(`${fake.origin}\n`);
  process.on('SIGTERM', () => {
    const report: FakeProviderReport = {
      requests: fake.requests.map((request) => ({
        url: request.url,
        authorization: request.headers.authorization ?? null,
        apiKey: (request.headers['x-api-key'] as string | undefined) ?? null,
      })),
      totals: { ...fake.totals },
    };
    writeFileSync(out, JSON.stringify(report));
    void fake.close().finally(() => process.exit(0));
  });
}
