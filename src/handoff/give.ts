// The runner hands a commit to another identity (the agent's repository, the
// gate's checkout) as a bundle file in a hand-off folder only the runner
// writes: git data, never access to the runner's repository. One bundle per
// commit, made once however many tasks start from it.
import * as path from 'node:path';
import type { FsPort } from '../ports.js';
import type { Git } from '../git/git.js';

/** The ref a given commit is bundled under, in the runner's repository and in the bundle. */
export function givenRef(commit: string): string {
  return `refs/agent-runner/given/${commit}`;
}

export function givenBundleName(commit: string): string {
  return `commit-${commit}.bundle`;
}

/** Makes `dir/commit-<sha>.bundle` holding `commit` and its history, unless it is there already; its path. */
export async function giveCommit(
  git: Git,
  fs: FsPort,
  workspace: string,
  commit: string,
  dir: string,
): Promise<string> {
  const file = path.join(dir, givenBundleName(commit));
  if (await fs.stat(file)) return file;
  const ref = givenRef(commit);
  // One drain per repo (its lock): no other writer can be making the same file.
  const partial = `${file}.partial`;
  await git.run(workspace, ['update-ref', ref, commit]);
  try {
    await git.run(workspace, ['bundle', 'create', '--quiet', partial, ref]);
    await fs.rename(partial, file);
  } finally {
    await git.try(workspace, ['update-ref', '-d', ref]);
    await fs.remove(partial).catch(() => undefined);
  }
  return file;
}

/** Gives every commit once, whoever asks first: tasks started together from one tip share its bundle. */
export class GivenCommits {
  private readonly made = new Map<string, Promise<string>>();
  constructor(
    private readonly git: Git,
    private readonly fs: FsPort,
    private readonly workspace: string,
    private readonly dir: string,
  ) {}

  bundleOf(commit: string): Promise<string> {
    let made = this.made.get(commit);
    if (!made) {
      made = giveCommit(this.git, this.fs, this.workspace, commit, this.dir);
      made.catch(() => this.made.delete(commit));
      this.made.set(commit, made);
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
