// The common start of status, promote, discard and gc: a checked workspace,
// its config's base branch, a git with a clean environment, and (for the
// commands that change things) the workspace lock a drain also takes.
import type { CliContext } from './context.js';
import { checkWorkspace } from '../repo/workspace.js';
import { readRepoConfig } from '../repo/read-config.js';
import { agentBaseEnv } from '../agent/env.js';
import { Git } from '../git/git.js';
import { stateDir } from '../paths.js';
import { acquireRepoLock } from '../drain/recovery/workspace-lock.js';
import { clearStaleGitLocks } from '../drain/recovery/git-locks.js';
import type { LifecycleInput } from '../staging/lifecycle.js';

export async function lifecycleInput(
  context: CliContext,
  workspaceOption: string | undefined,
  fetch: boolean,
): Promise<LifecycleInput> {
  const { fs, process } = context.ports;
  const workspace = await checkWorkspace(fs, context.cwd, workspaceOption);
  const { config } = await readRepoConfig(fs, workspace);
  const git = new Git(process, { env: agentBaseEnv(context.env), startedBy: await context.ports.control.self() });
  return {
    ports: context.ports,
    git,
    workspace,
    baseBranch: config.baseBranch,
    stateDir: stateDir(context.env),
    fetch,
  };
}

/**
 * Runs work holding the repository's drain lock, released whatever happens,
 * after ending the gits a killed run left and removing the git locks they
 * held (a killed promote's fast-forward leaves the checkout's index.lock);
 * says what it ended and removed. Busy while a live process holds a lock.
 */
export async function withWorkspaceLock<T>(
  context: CliContext,
  input: LifecycleInput,
  purpose: string,
  work: () => Promise<T>,
): Promise<T> {
  const { locks, process, clock, fs, control } = context.ports;
  const { lock, gitCommonDir } = await acquireRepoLock({ locks, process, clock }, input.git, input.workspace, purpose);
  try {
    for (const note of await clearStaleGitLocks({ fs, process, clock, control }, input.workspace, gitCommonDir))
      context.err(`${note}\n`);
    return await work();
  } finally {
    await lock.release();
  }
}
