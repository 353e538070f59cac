// The three accounts of a registered repo: the runner (the registry's user),
// the agent and the gate, each checked the way the repo user always was
// (uid at or above UID_MIN, the exact comment of its part, so never root, a
// system account, another repo's account or another part's); and what root
// hands the launcher for the two it starts commands as. Read (getent) ->
// decide (pure).
import type { Ports } from '../../ports.js';
import type { RegistryRepo } from '../../types.js';
import { identityNames, type Identity, type LaunchedIdentity } from '../../identities.js';
import { UsageError } from '../../errors.js';
import { lookupUser, proxyEnvironment, type UserAccount } from './privdrop.js';
import { accountProblem, readUidMin, runnerNameProblem } from './account.js';

export type RepoIdentities = Readonly<Record<Identity, UserAccount>>;

/** Pure: why the looked-up accounts cannot be the repo's identities, one line per part; [] when they can. */
export function identityProblems(
  repo: Pick<RegistryRepo, 'name' | 'user'>,
  accounts: Readonly<Record<Identity, UserAccount | undefined>>,
  uidMin: number,
): string[] {
  const tooLong = runnerNameProblem(repo.name, repo.user);
  if (tooLong) return [tooLong];
  const names = identityNames(repo.user);
  const problems: string[] = [];
  for (const part of ['runner', 'agent', 'gate'] as const) {
    const account = accounts[part];
    const create = `create it with: agent-runner provision repo ${repo.name}`;
    if (!account)
      problems.push(
        part === 'runner'
          ? `repo "${repo.name}": user "${names.runner}" does not exist; ${create}`
          : `repo "${repo.name}": ${part} identity "${names[part]}" does not exist; ${create}`,
      );
    else {
      const refused = accountProblem(repo.name, account, uidMin, part);
      if (refused) problems.push(refused);
    }
  }
  return problems;
}

/** The runner, agent and gate accounts of a repo, or a UsageError naming every part that is missing or wrong. */
export async function repoIdentities(
  ports: Pick<Ports, 'process' | 'fs'>,
  repo: RegistryRepo,
): Promise<RepoIdentities> {
  const names = identityNames(repo.user);
  const accounts = {
    runner: await lookupUser(ports.process, names.runner),
    agent: await lookupUser(ports.process, names.agent),
    gate: await lookupUser(ports.process, names.gate),
  };
  const problems = identityProblems(repo, accounts, await readUidMin(ports.fs));
  if (problems.length) throw new UsageError(problems.join('\n'));
  return accounts as RepoIdentities;
}

/** An identity root starts commands as on the runner's request, and the variables it always gets. */
export interface LaunchIdentity {
  readonly account: UserAccount;
  /** HOME/USER/LOGNAME of the account, and for the agent its repo's proxy; they override what the runner asks. */
  readonly env: Readonly<Record<string, string>>;
}

/** Pure: the agent (with its repo's proxy) and the gate (with no proxy at all) for the launcher. */
export function launchIdentities(
  repo: Pick<RegistryRepo, 'proxyPort'>,
  agent: UserAccount,
  gate: UserAccount,
): ReadonlyMap<LaunchedIdentity, LaunchIdentity> {
  return new Map<LaunchedIdentity, LaunchIdentity>([
    ['agent', { account: agent, env: forcedLaunchEnvironment('agent', agent, repo.proxyPort) }],
    ['gate', { account: gate, env: forcedLaunchEnvironment('gate', gate, repo.proxyPort) }],
  ]);
}

/**
 * Pure: what a launched command always gets as `identity`: the account's own HOME/USER/LOGNAME, the agent its proxy.
 */
export function forcedLaunchEnvironment(
  identity: LaunchedIdentity,
  account: UserAccount,
  proxyPort: number | undefined,
): Record<string, string> {
  return {
    HOME: account.home,
    USER: account.name,
    LOGNAME: account.name,
    ...(identity === 'agent' && proxyPort !== undefined ? proxyEnvironment(proxyPort) : {}),
  };
}
