// doctor: how a repo's agents reach their model. With a broker: its port,
// each provider with its key kind, the broker's account, and each key file
// judged by the broker's own rule (src/broker/key.ts) as root reads it. Without
// one: the agents use the logins in the agent identity's home, as before the
// broker. Read (the account, the key files) -> decide (pure) -> Checks.
import type { RegistryRepo, RepoBrokerProvider } from '../../src/types.js';
import type { ProcessPort } from '../../src/ports.js';
import type { KeyFileRead, KeySource } from '../../src/broker/types.js';
import { keyFromFile } from '../../src/broker/key.js';
import { lookupUser } from '../../src/control/repo-user/privdrop.js';
import { BROKER_ACCOUNT } from '../../src/control/broker/index.js';
import type { Check } from './check.js';

/** What doctor read for one repo's broker. */
export interface BrokerFacts {
  /** The broker account's uid; undefined when the account does not exist. */
  readonly accountUid: number | undefined;
  /** Each configured key file as root's reader found it; undefined: no reader was wired. */
  readonly keyFiles: ReadonlyMap<string, KeyFileRead> | undefined;
}

/** One provider of the report, for --json. */
export interface ModelProviderReport {
  readonly provider: string;
  readonly keyKind: RepoBrokerProvider['keyKind'];
  readonly keyFile: string;
  readonly origin: string;
  /** Whether the key file may be used; null when it could not be read here. */
  readonly keyFileOk: boolean | null;
  readonly problem?: string;
}

/** How the repo's agents reach their model, for --json. */
export interface ModelReport {
  /** "broker on 127.0.0.1:702: anthropic api-key, openai api-key", or NO_BROKER_SUMMARY. */
  readonly summary: string;
  readonly broker: {
    readonly port: number;
    readonly account: string;
    readonly accountUid: number | null;
    readonly providers: readonly ModelProviderReport[];
  } | null;
}

export const NO_BROKER_SUMMARY = "no broker: agents use logins in the agent's home";

/** Pure: "broker on 127.0.0.1:PORT: anthropic api-key, openai subscription-token", or the no-broker line. */
export function modelAccessSummary(repo: Pick<RegistryRepo, 'broker'>): string {
  if (repo.broker === undefined) return NO_BROKER_SUMMARY;
  const providers = Object.entries(repo.broker.providers).flatMap(([provider, settings]) =>
    settings === undefined ? [] : [`${provider} ${settings.keyKind}`],
  );
  return `broker on 127.0.0.1:${repo.broker.port}: ${providers.join(', ')}`;
}

/** Pure: a key-file problem of src/broker/key.ts split into what is wrong and its fix. */
function keyFileFix(problem: string, file: string): { detail: string; fix: string } {
  const owner = / is owned by uid \d+, not the broker's uid \d+/.exec(problem);
  if (owner) return { detail: problem.replace(/; chown it$/, ''), fix: `chown ${BROKER_ACCOUNT}: ${file}` };
  const split = problem.indexOf('; ');
  if (split >= 0) return { detail: problem.slice(0, split), fix: problem.slice(split + 2) };
  return {
    detail: problem,
    fix: `put the key alone (one line) in a regular file at ${file}, owned by ${BROKER_ACCOUNT}, mode 0600`,
  };
}

/** Pure: the report and the checks for one repo from what was read. */
export function brokerReport(
  repo: Pick<RegistryRepo, 'name' | 'broker'>,
  facts: BrokerFacts,
): { model: ModelReport; checks: Check[] } {
  const summary = modelAccessSummary(repo);
  const access: Check = { name: 'model access', ok: true, detail: summary, fix: '' };
  if (repo.broker === undefined) return { model: { summary, broker: null }, checks: [access] };
  const checks: Check[] = [access];
  const account = facts.accountUid;
  checks.push({
    name: 'broker account exists',
    ok: account !== undefined,
    detail:
      account === undefined
        ? `no user ${BROKER_ACCOUNT}: the broker has no identity to run as and the key files no owner`
        : `${BROKER_ACCOUNT} is uid ${account}`,
    fix: account === undefined ? 'agent-runner provision host (it creates the account)' : '',
  });
  const providers: ModelProviderReport[] = [];
  for (const [provider, settings] of Object.entries(repo.broker.providers)) {
    if (settings === undefined) continue;
    const name = `${provider} key file is usable`;
    const base = { provider, keyKind: settings.keyKind, keyFile: settings.keyFile, origin: settings.origin };
    const read = facts.keyFiles?.get(settings.keyFile);
    if (read === undefined) {
      providers.push({ ...base, keyFileOk: null, problem: 'not read: doctor has no key reader here' });
      checks.push({
        name,
        ok: false,
        detail: `${settings.keyFile} was not read: doctor has no key reader here`,
        fix: 'run agent-runner doctor as root from the installed command',
      });
      continue;
    }
    // Without the account only the owner cannot be judged: every other rule still is.
    const ownerUid = account ?? (read.kind === 'opened' ? read.uid : 0);
    const verdict = keyFromFile(settings.keyFile, read, ownerUid);
    if (verdict.ok) {
      providers.push({ ...base, keyFileOk: true });
      const mode = read.kind === 'opened' ? (read.mode & 0o777).toString(8).padStart(4, '0') : '';
      checks.push({
        name,
        ok: true,
        detail: `${settings.keyFile}: one ${settings.keyKind}, mode ${mode}${account === undefined ? '' : `, owned by ${BROKER_ACCOUNT}`}`,
        fix: '',
      });
      continue;
    }
    providers.push({ ...base, keyFileOk: false, problem: verdict.problem });
    checks.push({ name, ok: false, ...keyFileFix(verdict.problem, settings.keyFile) });
  }
  return {
    model: {
      summary,
      broker: { port: repo.broker.port, account: BROKER_ACCOUNT, accountUid: account ?? null, providers },
    },
    checks,
  };
}

/** Reads the broker account and every key file of the repo (root's reader: no link followed, nothing but a stat). */
export async function readBrokerFacts(
  deps: { readonly process: ProcessPort; readonly keys: KeySource | undefined },
  repo: Pick<RegistryRepo, 'broker'>,
): Promise<BrokerFacts> {
  if (repo.broker === undefined) return { accountUid: undefined, keyFiles: new Map() };
  const account = await lookupUser(deps.process, BROKER_ACCOUNT);
  if (deps.keys === undefined) return { accountUid: account?.uid, keyFiles: undefined };
  const keyFiles = new Map<string, KeyFileRead>();
  for (const settings of Object.values(repo.broker.providers))
    if (settings !== undefined) keyFiles.set(settings.keyFile, await deps.keys.read(settings.keyFile));
  return { accountUid: account?.uid, keyFiles };
}
