// Wires doctor's GitHub checks for one repo: the repo user's home (for its
// credential store) and the origin URL (the registry's url, else what the
// clone says, read as the repo user).
import type { CliContext } from './context.js';
import type { RegistryRepo } from '../types.js';
import type { Check } from '../../backends/host/check.js';
import { githubChecks } from '../../backends/host/doctor-github.js';
import { dropPrivileges, lookupUser } from '../control/repo-user/privdrop.js';
import { getConfigArgs } from '../git/plumbing.js';
import { USER_PATH } from '../system-path.js';

export async function repoGitHubChecks(context: CliContext, repo: RegistryRepo): Promise<Check[]> {
  const account = await lookupUser(context.ports.process, repo.user);
  if (!account)
    return [
      {
        name: 'GitHub token stored',
        ok: false,
        detail: `no user ${repo.user}, so no credential store`,
        fix: `agent-runner provision repo ${repo.name}`,
      },
    ];
  if (!context.github)
    return [
      {
        name: 'GitHub client',
        ok: false,
        detail: 'no GitHub client is wired into this agent-runner',
        fix: 'run the installed agent-runner',
      },
    ];
  let originUrl = repo.url;
  if (originUrl === undefined) {
    const env = {
      HOME: account.home,
      USER: account.name,
      LOGNAME: account.name,
      PATH: USER_PATH,
      GIT_CONFIG_NOSYSTEM: '1',
    };
    const result = await context.ports.process.run(
      dropPrivileges(account, { program: 'git', args: getConfigArgs(repo.path, 'remote.origin.url'), env, cwd: '/' }),
    );
    originUrl = result.exitCode === 0 ? result.stdout.trim() || undefined : undefined;
  }
  return githubChecks(
    { fs: context.ports.fs, github: context.github, onWait: (message) => context.err(`${message}\n`) },
    { repo, home: account.home, originUrl },
  );
}
