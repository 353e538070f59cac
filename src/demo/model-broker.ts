// The demo's model side, as a host has it but on one user: a local fake of
// both providers' APIs (127.0.0.1; src/io/broker/fake-provider.ts, wired by
// the composition root) and in front of it the run's broker as a real
// broker-serve process, holding the provider key in a 0600 file of its own.
// The agents get capabilities, never the key. Every metered response and
// every provider 429 the broker reports is kept for the demo's result, and
// stop() ends the broker (waiting for its last records) and then the
// provider.
import * as path from 'node:path';
import type { Ports } from '../ports.js';
import type { Install } from '../control/repo-user/index.js';
import { brokerServeCommand, startRunBroker, type RunBroker } from '../control/broker/index.js';
import type { BrokerServeConfig } from '../broker/serve/config.js';
import type { RateLimitRecord, UsageRecord } from '../broker/types.js';
import { DEFAULT_MAX_BODY_BYTES } from '../broker/config.js';
import type { SpendPolicy } from '../spend/policy.js';

/** The tokens the provider's answers reported, summed (OpenAI's cached tokens as cacheRead, apart from input). */
export interface ProviderTotals {
  readonly input: number;
  readonly output: number;
  readonly cacheRead: number;
  readonly cacheWrite: number;
}

/** A local stand-in for Anthropic's and OpenAI's model APIs on 127.0.0.1. */
export interface DemoProvider {
  /** http://127.0.0.1:PORT, both APIs' origin. */
  readonly origin: string;
  readonly totals: Readonly<ProviderTotals>;
  close(): Promise<void>;
}

export type StartDemoProvider = () => Promise<DemoProvider>;

export interface DemoModelBroker {
  readonly broker: RunBroker;
  /** Whose capabilities the demo's model sessions get (demoGrantUid). */
  readonly grantUid: number;
  readonly provider: DemoProvider;
  /** Every response the broker metered, in the order it reported them. */
  readonly metered: readonly UsageRecord[];
  /** Every provider 429 the broker saw. */
  readonly rateLimits: readonly RateLimitRecord[];
  /** Ends the broker (after its last records are in) and the provider; once. */
  stop(): Promise<void>;
}

export interface DemoModelBrokerInput {
  readonly startProvider: StartDemoProvider;
  readonly install: Install;
  /** A directory of the demo's own: the key file goes in a 0700 folder inside it. */
  readonly dir: string;
  readonly runId: string;
  /** The demo's user: owner of the key file, as the broker identity owns a host's. */
  readonly uid: number;
  readonly spend: SpendPolicy;
  readonly log: (line: string) => void;
}

/** Linux's overflow uid: nobody. */
const NOBODY_UID = 65534;

/**
 * The uid the demo's capabilities are granted for: the demo user's. Root never holds a capability (the broker
 * refuses a grant for uid 0), so a demo run as root grants for nobody's uid, with the peer check off (it would see
 * root behind every connection); the key stays in the broker either way.
 */
export function demoGrantUid(uid: number): number {
  return uid === 0 ? NOBODY_UID : uid;
}

/** What the fake provider is given as a key: it checks none, and no agent ever sees it. */
const DEMO_PROVIDER_KEY = 'demo-provider-key-held-only-by-the-broker';

/** Pure: the broker config of the demo: an ephemeral port, no identity to drop to, no proxy, the fake as origin. */
export function demoBrokerConfig(
  input: Pick<DemoModelBrokerInput, 'runId' | 'uid' | 'spend'>,
  origin: string,
  keyFile: string,
): BrokerServeConfig {
  return {
    repo: {
      repo: 'demo',
      providers: {
        anthropic: { origin, keyFile, keyKind: 'api-key' },
        openai: { origin, keyFile, keyKind: 'api-key' },
      },
      maxBodyBytes: DEFAULT_MAX_BODY_BYTES,
      brokerUid: input.uid,
    },
    run: input.runId,
    host: '127.0.0.1',
    port: 0,
    spend: input.spend,
    // One user plays every part, so the peer is the grant's uid: the check holds here as it does on a host.
    peerCheck: demoGrantUid(input.uid) === input.uid,
  };
}

export async function startDemoModelBroker(
  ports: Pick<Ports, 'process' | 'clock' | 'fs'>,
  input: DemoModelBrokerInput,
): Promise<DemoModelBroker> {
  const keys = path.join(input.dir, 'broker');
  await ports.fs.mkdirp(keys, 0o700);
  const keyFile = path.join(keys, 'provider-key');
  await ports.fs.writeAtomic(keyFile, `${DEMO_PROVIDER_KEY}\n`, 0o600);
  const provider = await input.startProvider();
  let broker: RunBroker;
  try {
    broker = await startRunBroker(ports, {
      command: brokerServeCommand(input.install),
      config: demoBrokerConfig(input, provider.origin, keyFile),
      log: input.log,
    });
  } catch (error) {
    await provider.close();
    throw error;
  }
  const metered: UsageRecord[] = [];
  const rateLimits: RateLimitRecord[] = [];
  broker.onUsage((record) => metered.push(record));
  broker.onRateLimit((record) => rateLimits.push(record));
  let stopped: Promise<void> | undefined;
  return {
    broker,
    grantUid: demoGrantUid(input.uid),
    provider,
    metered,
    rateLimits,
    stop: () =>
      (stopped ??= (async () => {
        try {
          await broker.stop();
        } finally {
          await provider.close();
        }
      })()),
  };
}
