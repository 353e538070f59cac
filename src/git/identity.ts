// Who authors the commits the runner itself makes (landings, park and block
// notes): the repo's configured author, agent-runner always the committer.
import type { Git, GitIdentity } from './git.js';

/**
 * user.name and user.email as the checkout's git config says (local, then the user's global), or undefined when either
 * is unset.
 */
export async function configuredIdentity(git: Git, cwd: string): Promise<GitIdentity | undefined> {
  const read = async (key: string) => {
    const result = await git.try(cwd, ['config', '--get', key]);
    return result.exitCode === 0 ? result.stdout.trim() : '';
  };
  const name = await read('user.name');
  const email = await read('user.email');
  return name && email ? { name, email } : undefined;
}
