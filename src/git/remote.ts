// Remotes as named verbs: which exist, fetch, push, push with a lease. Thin
// typed wrappers over Git.
import type { Git } from './git.js';
import { headRef } from './refs.js';

export interface PushAttempt {
  readonly ok: boolean;
  readonly stderr: string;
}

/** Whether the repo has a remote called `name`. */
export async function hasRemote(git: Git, cwd: string, name: string): Promise<boolean> {
  return (await git.run(cwd, ['remote'])).split('\n').some((line) => line.trim() === name);
}

/** Fetches `remote`, pruning remote-tracking branches it no longer has. */
export async function fetchPrune(git: Git, cwd: string, remote: string): Promise<void> {
  await git.run(cwd, ['fetch', '--quiet', '--prune', remote]);
}

/** Pushes local branch `branch` to the same name on `remote`. */
export async function pushBranch(git: Git, cwd: string, remote: string, branch: string): Promise<PushAttempt> {
  const result = await git.try(cwd, ['push', '--quiet', remote, `${headRef(branch)}:${headRef(branch)}`]);
  return { ok: result.exitCode === 0, stderr: result.stderr };
}

/**
 * Pushes local branch `branch` to `remote`, overwriting it only if it is
 * still at `expected` (undefined: only if it does not exist).
 */
export async function pushWithLease(
  git: Git,
  cwd: string,
  remote: string,
  branch: string,
  expected: string | undefined,
  source: string = headRef(branch),
): Promise<PushAttempt> {
  const lease = `--force-with-lease=${headRef(branch)}:${expected ?? ''}`;
  const result = await git.try(cwd, ['push', '--quiet', lease, remote, `${source}:${headRef(branch)}`]);
  return { ok: result.exitCode === 0, stderr: result.stderr };
}

/**
 * The URL configured for `remote`, as written (insteadOf rewrites not
 * applied): the repository it names, not where git happens to send it.
 */
export async function configuredRemoteUrl(git: Git, cwd: string, remote: string): Promise<string | undefined> {
  const result = await git.try(cwd, ['config', '--get', `remote.${remote}.url`]);
  return result.exitCode === 0 ? result.stdout.trim() || undefined : undefined;
}
