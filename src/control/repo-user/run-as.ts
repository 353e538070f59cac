// Root acting in a repo: never itself, always as the repo's user. One place
// that says who that user is (never uid 0), where its own state lives (in
// its home, never under root's state dir) and how an agent-runner command
// is started as that user: the same environment dispatch gives orchestrate.
import type { Ports } from '../../ports.js';
import type { Command, RegistryRepo } from '../../types.js';
import { agentEnvironment, lookupUser, type UserAccount } from './privdrop.js';
import { accountProblem, readUidMin } from './account.js';
import { repoUserStateDir } from '../../paths.js';
import { UsageError } from '../../errors.js';

export interface Install {
  /** Absolute path of the node binary. */
  readonly node: string;
  /** Absolute path of dist/src/main.js. */
  readonly main: string;
}

/**
 * The repo's user, or a UsageError that says how to create it; never root, a system account or one agent-runner did not
 * make for this repo.
 */
export async function repoUser(ports: Pick<Ports, 'process' | 'fs'>, repo: RegistryRepo): Promise<UserAccount> {
  const user = await lookupUser(ports.process, repo.user);
  if (!user)
    throw new UsageError(
      `repo "${repo.name}": user "${repo.user}" does not exist; create it with: agent-runner provision repo ${repo.name}`,
    );
  const refused = accountProblem(repo.name, user, await readUidMin(ports.fs));
  if (refused) throw new UsageError(refused);
  return user;
}

/** Pure: `agent-runner <args>` as the repo's user, before the privilege drop. */
export function runnerCommandAsUser(
  install: Install,
  repo: RegistryRepo,
  user: UserAccount,
  args: readonly string[],
): Command {
  return {
    program: install.node,
    args: [install.main, ...args],
    env: {
      // The runner's own proxy port (the git host alone): the lock rejects it on the agent's.
      ...agentEnvironment({ user, path: repo.toolchainPath, proxyPort: repo.runnerProxyPort, extra: repo.env }),
      AGENT_RUNNER_STATE: repoUserStateDir(user.home),
    },
    cwd: repo.path,
  };
}
