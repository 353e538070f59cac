// The broker of one dispatched run: its config from the registry (pure), started as root and dropped by itself to the
// broker account, with every metered response handed to root's ledger the moment it arrives (a run killed mid-way
// keeps what it spent) and every provider 429 kept by grant, so the session it stopped exits with the broker's word
// on when the limit lifts. A repo without registry broker settings gets none: its agents use their own logins.
import type { Ports } from '../../ports.js';
import type { RegistryRepo, RepoBroker } from '../../types.js';
import type { UserAccount, Install } from '../repo-user/index.js';
import type { BrokerServeConfig } from '../../broker/serve/config.js';
import type { SpendPolicy } from '../../spend/policy.js';
import type { RateLimitRecord, UsageRecord } from '../../broker/types.js';
import { brokerServeCommand, startRunBroker, type RunBroker } from './run-broker.js';

/** The host account every repo's broker runs as; it owns the key files, and nothing else runs as it. */
export const BROKER_ACCOUNT = 'agent-runner-broker';

/** Pure: what root tells the broker process of a run. */
export function brokerServeConfig(
  repo: Pick<RegistryRepo, 'name'>,
  broker: RepoBroker,
  run: string,
  account: Pick<UserAccount, 'uid' | 'gid'>,
  spend: SpendPolicy,
): BrokerServeConfig {
  return {
    repo: { repo: repo.name, providers: broker.providers, maxBodyBytes: broker.maxBodyBytes, brokerUid: account.uid },
    run,
    host: '127.0.0.1',
    port: broker.port,
    dropTo: { uid: account.uid, gid: account.gid },
    ...(broker.proxy === undefined ? {} : { proxy: broker.proxy }),
    spend,
    // Each agent uid reaches only its own repo's broker port; the peer check makes a token usable only from that uid.
    peerCheck: true,
  };
}

export interface RunBrokerHandle {
  readonly broker: RunBroker;
  /** When the provider said the limit lifts, for the latest 429 of a grant's requests. */
  rateLimitResetOf(grantId: number): string | undefined;
  /** Ends the broker (and every token of the run) and waits until every usage record is in the ledger. */
  stop(): Promise<void>;
}

export interface StartBrokerForRunInput {
  readonly repo: RegistryRepo;
  readonly broker: RepoBroker;
  readonly runId: string;
  readonly install: Install;
  readonly account: UserAccount;
  readonly spend: SpendPolicy;
  /** Root's ledger: one metered response. Appends run one at a time, in the order they came. */
  readonly seal: (record: UsageRecord) => Promise<void>;
  readonly log: (line: string) => void;
  readonly readyTimeoutMs?: number;
}

export async function startBrokerForRun(
  deps: Pick<Ports, 'process' | 'clock'>,
  input: StartBrokerForRunInput,
): Promise<RunBrokerHandle> {
  const broker = await startRunBroker(deps, {
    command: brokerServeCommand(input.install),
    config: brokerServeConfig(input.repo, input.broker, input.runId, input.account, input.spend),
    log: input.log,
    ...(input.readyTimeoutMs === undefined ? {} : { readyTimeoutMs: input.readyTimeoutMs }),
  });
  let sealed: Promise<void> = Promise.resolve();
  broker.onUsage((record) => {
    sealed = sealed
      .then(() => input.seal(record))
      .catch((error: unknown) =>
        input.log(
          `broker: could not write a metered response of ${record.task} to the ledger: ${(error as Error).message}`,
        ),
      );
  });
  const resets = new Map<number, string>();
  broker.onRateLimit((record: RateLimitRecord) => {
    if (record.grant !== null && record.resetAt !== null) resets.set(record.grant, record.resetAt);
  });
  return {
    broker,
    rateLimitResetOf: (grantId) => resets.get(grantId),
    async stop() {
      await broker.stop();
      await sealed;
    },
  };
}
