// The runner hands a commit to another identity (the agent's repository, the
// gate's checkout) as a bundle file in a hand-off folder only the runner
// writes: git data, never access to the runner's repository. One bundle per
// commit, made once however many tasks start from it.
import * as path from 'node:path';
import type { FsPort } from '../ports.js';
import { GitError, type Git } from '../git/git.js';

/** The ref a given commit is bundled under, in the runner's repository and in the bundle. */
export function givenRef(commit: string): string {
  return `refs/agent-runner/given/${commit}`;
}

export function givenBundleName(commit: string, thin: boolean): string {
  return `commit-${commit}${thin ? '.thin' : ''}.bundle`;
}

/** How many commits a side already holds a thin bundle is cut against (enough to find an ancestor). */
const THIN_AGAINST = 8;

/**
 * Makes `dir/commit-<sha>[.thin].bundle` holding `commit` and its history, unless it is there already; its path.
 * Against `received` (commits the side holds, with everything they reach) it is thin: only what they lack, with them
 * as its prerequisites; undefined when they lack nothing (`commit` is one they reach: a batch's earlier prefix).
 */
export async function giveCommit(
  git: Git,
  fs: FsPort,
  workspace: string,
  commit: string,
  dir: string,
  received: readonly string[] = [],
): Promise<string | undefined> {
  const file = path.join(dir, givenBundleName(commit, received.length > 0));
  if (await fs.stat(file)) return file;
  const ref = givenRef(commit);
  // One drain per repo (its lock): no other writer can be making the same file.
  const partial = `${file}.partial`;
  await git.run(workspace, ['update-ref', ref, commit]);
  try {
    const not = received.length ? ['--not', ...received.slice(-THIN_AGAINST)] : [];
    const made = await git.try(workspace, ['bundle', 'create', '--quiet', partial, ref, ...not]);
    if (made.exitCode !== 0 && not.length && /empty bundle/.test(made.stderr)) return undefined;
    if (made.exitCode !== 0) throw new GitError(['bundle', 'create', partial, ref, ...not], workspace, made);
    await fs.rename(partial, file);
  } finally {
    await git.try(workspace, ['update-ref', '-d', ref]);
    await fs.remove(partial).catch(() => undefined);
  }
  return file;
}

/**
 * Gives every commit to one side once, whoever asks first: tasks started together from one tip share its bundle.
 * The first bundle of a drain is whole (the side's repository is new); later ones are thin against what the side
 * said it received, and a side that turns out to lack a prerequisite is given the whole bundle instead.
 */
export class GivenCommits {
  private readonly made = new Map<string, Promise<string | undefined>>();
  private readonly received: string[] = [];
  constructor(
    private readonly git: Git,
    private readonly fs: FsPort,
    private readonly workspace: string,
    private readonly dir: string,
  ) {}

  /** Whether the side holds `commit` already (no bundle needed). */
  holds(commit: string): boolean {
    return this.received.includes(commit);
  }

  /** The side fetched `commit`: later bundles may leave out what it reaches. */
  receivedBy(commit: string): void {
    if (!this.received.includes(commit)) this.received.push(commit);
  }

  /** The bundle to give `commit` with; undefined: the side holds it already (it reaches it from what it received). */
  bundleOf(commit: string, whole = false): Promise<string | undefined> {
    const key = `${commit}${whole ? ':whole' : ''}`;
    let made = this.made.get(key);
    if (!made) {
      made = giveCommit(this.git, this.fs, this.workspace, commit, this.dir, whole ? [] : this.received);
      made.catch(() => this.made.delete(key));
      this.made.set(key, made);
    }
    return made;
  }
  /** Removes the bundles this drain made. */
  async removeAll(): Promise<void> {
    for (const made of this.made.values()) {
      const file = await made.catch(() => undefined);
      if (file) await this.fs.remove(file).catch(() => undefined);
    }
    this.made.clear();
  }
}
