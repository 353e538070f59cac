// Verbs that make a repo from nothing (the demo's, and anything else that
// seeds one): a bare origin, a clone of it, one commit of the whole tree on
// a branch, and its push. Each runs through Git, so the sanitized
// environment and the no-hooks flags hold here too.
import type { Git } from './git.js';

/** A new bare repository at `dir` whose first branch is `branch`. */
export async function initBare(git: Git, cwd: string, dir: string, branch: string): Promise<void> {
  await git.run(cwd, ['init', '--quiet', '--bare', `--initial-branch=${branch}`, dir]);
}

/** A clone of `origin` at `dir`. */
export async function cloneRepo(git: Git, cwd: string, origin: string, dir: string): Promise<void> {
  await git.run(cwd, ['clone', '--quiet', origin, dir]);
}

/** Everything in the tree, committed on `branch` (created or reset to HEAD first). */
export async function commitEverything(git: Git, clone: string, branch: string, message: string): Promise<void> {
  await git.run(clone, ['checkout', '--quiet', '-B', branch]);
  await git.run(clone, ['add', '-A']);
  await git.run(clone, ['commit', '--quiet', '-m', message]);
}

/** `branch` pushed to `remote` under the same name. */
export async function pushBranch(git: Git, clone: string, remote: string, branch: string): Promise<void> {
  await git.run(clone, ['push', '--quiet', remote, branch]);
}
