// A broker on 127.0.0.1 in front of the local fake provider, with its real
// edges (node:http listener, undici egress, key files read from a temp dir
// at 0600) and recording sinks; torn down with the test.
import { chmodSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import type { Test } from 'tap';
import { createBroker } from '../../src/broker/broker.js';
import { createCapabilityStore, type CapabilityStore } from '../../src/broker/capabilities.js';
import { DEFAULT_MAX_BODY_BYTES, type BrokerRepo } from '../../src/broker/config.js';
import type {
  BrokerEvent,
  BudgetPolicy,
  Grant,
  RateLimitRecord,
  UsageRecord,
  UsageSink,
} from '../../src/broker/types.js';
import {
  listenBroker,
  randomTokenBytes,
  realKeySource,
  startFakeProvider,
  undiciUpstream,
  type FakeProvider,
  type PeerUidLookup,
} from '../../src/io/broker/index.js';
import { tempDir } from './temp.js';

export const ANTHROPIC_KEY = 'sk-ant-api03-TEST-ONLY-anthropic-key-0123456789';
export const OPENAI_KEY = 'sk-proj-TEST-ONLY-openai-key-0123456789';

export interface BrokerFixture {
  /** http://127.0.0.1:PORT */
  readonly url: string;
  readonly port: number;
  readonly fake: FakeProvider;
  readonly store: CapabilityStore;
  readonly sealed: UsageRecord[];
  readonly limited: RateLimitRecord[];
  readonly log: BrokerEvent[];
  readonly keyFiles: { readonly anthropic: string; readonly openai: string };
  /** A live token for run-1 / TASK-1 of repo "web", for this process's uid. */
  token(grant?: Partial<Grant>): string;
}

export interface BrokerFixtureOptions {
  readonly budget?: BudgetPolicy;
  /** Another sink fed the same records (a budget tally). */
  readonly alsoSeal?: UsageSink;
  readonly maxBodyBytes?: number;
  readonly proxy?: string;
  readonly peerUid?: PeerUidLookup;
  readonly deltas?: number;
}

export function writeKey(file: string, key: string): void {
  writeFileSync(file, `${key}\n`, { mode: 0o600 });
  chmodSync(file, 0o600);
}

export async function brokerFixture(t: Test, options: BrokerFixtureOptions = {}): Promise<BrokerFixture> {
  const dir = tempDir(t, 'broker-keys-');
  const keyFiles = { anthropic: path.join(dir, 'anthropic'), openai: path.join(dir, 'openai') };
  writeKey(keyFiles.anthropic, ANTHROPIC_KEY);
  writeKey(keyFiles.openai, OPENAI_KEY);
  const fake = await startFakeProvider(options.deltas === undefined ? {} : { deltas: options.deltas });
  t.teardown(() => fake.close());
  const upstream = undiciUpstream({ proxy: options.proxy });
  t.teardown(() => upstream.close());
  const store = createCapabilityStore(randomTokenBytes);
  const sealed: UsageRecord[] = [];
  const limited: RateLimitRecord[] = [];
  const log: BrokerEvent[] = [];
  const repo: BrokerRepo = {
    repo: 'web',
    providers: {
      anthropic: { origin: fake.origin, keyFile: keyFiles.anthropic, keyKind: 'api-key' },
      openai: { origin: fake.origin, keyFile: keyFiles.openai, keyKind: 'api-key' },
    },
    maxBodyBytes: options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES,
    brokerUid: process.getuid!(),
  };
  const broker = createBroker(repo, {
    tokens: store,
    clock: { now: () => Date.now() },
    budget: options.budget ?? (() => ({ allow: true })),
    usage: {
      seal: (record) => {
        sealed.push(record);
        options.alsoSeal?.seal(record);
      },
    },
    rateLimits: { rateLimited: (record) => limited.push(record) },
    upstream,
    keys: realKeySource,
    log: (event) => log.push(event),
  });
  const listener = await listenBroker(broker, { port: 0, ...(options.peerUid ? { peerUid: options.peerUid } : {}) });
  t.teardown(() => listener.close());
  return {
    url: `http://127.0.0.1:${listener.port}`,
    port: listener.port,
    fake,
    store,
    sealed,
    limited,
    log,
    keyFiles,
    token: (grant = {}) =>
      store.issue({
        repo: 'web',
        run: 'run-1',
        task: 'TASK-1',
        uid: process.getuid!(),
        expiresAt: Date.now() + 60 * 60_000,
        ...grant,
      }),
  };
}
