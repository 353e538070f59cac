// The broker of a dispatched run, as dispatch sees it: the account it runs as (a UsageError when the host has none),
// the URL orchestrate hands the adapters, and its start, with every metered response sealed into the ledger as it
// comes; a broker that cannot start fails the run, and the run record says why.
import type { Ports } from '../../ports.js';
import { UsageError } from '../../errors.js';
import type { SpendPolicy } from '../../spend/policy.js';
import { BROKER_ACCOUNT, startBrokerForRun, type RunBrokerHandle } from '../broker/index.js';
import { appendBrokerUsage } from '../ledger/index.js';
import { lookupUser, type UserAccount } from '../repo-user/index.js';
import { writeRun, type RunRecord } from '../runs/index.js';
import type { RegistryRepo } from '../../types.js';
import type { Install } from '../repo-user/index.js';

/** What of a dispatch the broker's start needs. */
export interface RunBrokerInput {
  readonly repo: RegistryRepo;
  readonly runId: string;
  readonly install: Install;
  /** The root state dir: the ledger is there. */
  readonly state: string;
}

/** The broker account, or a UsageError that says how to make it. */
export async function brokerAccount(ports: Pick<Ports, 'process'>, repo: string): Promise<UserAccount> {
  const account = await lookupUser(ports.process, BROKER_ACCOUNT);
  if (!account || account.uid === 0)
    throw new UsageError(
      `repo "${repo}": its registry entry names a broker, but the host has no ${BROKER_ACCOUNT} account to run it as; create it with: agent-runner provision host`,
    );
  return account;
}

/** The run's broker when the repo has one; one that cannot start fails the run, recorded with the broker's reasons. */
export async function startRunBrokerOrFail(
  deps: Pick<Ports, 'process' | 'clock' | 'fs'>,
  input: RunBrokerInput,
  started: RunRecord,
  spend: SpendPolicy,
  account: UserAccount | undefined,
  onStderrLine: (line: string) => void,
): Promise<RunBrokerHandle | undefined> {
  if (!input.repo.broker || !account) return undefined;
  const log = (line: string) => onStderrLine(`broker: ${line}`);
  try {
    return await startBrokerForRun(deps, {
      repo: input.repo,
      broker: input.repo.broker,
      runId: input.runId,
      install: input.install,
      account,
      spend,
      log,
      async seal(record) {
        const sealed = await appendBrokerUsage(
          deps.fs,
          input.state,
          input.repo.name,
          record,
          new Date(deps.clock.now()).toISOString(),
        );
        if (!sealed.ok) log(sealed.reason);
      },
    });
  } catch (error) {
    const reason = `${(error as Error).message}; see agent-runner doctor ${input.repo.name}`;
    await writeRun(deps.fs, input.state, {
      ...started,
      status: 'finished',
      outcome: 'error',
      tasks: [],
      exitCode: null,
      signal: null,
      endedAt: new Date(deps.clock.now()).toISOString(),
      detail: reason,
    });
    throw new UsageError(`repo "${input.repo.name}": ${reason}`);
  }
}
