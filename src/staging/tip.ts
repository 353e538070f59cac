// auto/work moves only from the commit the runner last wrote itself. The
// runner keeps that commit (the tip) in memory for the whole drain: every
// landing and board edit checks it first and moves the branch by
// compare-and-swap from it, and publish pushes exactly it. A branch that
// something else moved (an agent with git plumbing in the shared
// repository, say) is never built on, merged or published: the drain stops
// and says which commit it expected and which it found.
import { FailedError } from '../errors.js';
import type { Git } from '../git/git.js';
import { commitIndexOnto } from '../git/tree.js';
import { STAGING_BRANCH, STAGING_REF } from './names.js';

export class StagingMovedError extends FailedError {
  constructor(
    readonly expected: string,
    readonly found: string | undefined,
  ) {
    super(
      `${STAGING_BRANCH} was moved outside the runner: it is at ${found ?? '(deleted)'}, and the runner last ` +
        `wrote ${expected}; the drain stopped and published nothing. See what was added with ` +
        `git log ${expected}..${found ?? STAGING_BRANCH}, then discard it (agent-runner discard) or reset ` +
        `${STAGING_BRANCH} to ${expected.slice(0, 12)} before the next drain`,
    );
    this.name = 'StagingMovedError';
  }
}

export class StagingTip {
  private moved: StagingMovedError | undefined;

  constructor(
    private readonly git: Git,
    private readonly stagingDir: string,
    private last: string,
  ) {}

  /** The commit the runner last wrote to auto/work. */
  get current(): string {
    return this.last;
  }

  /** Why the drain must stop, once auto/work was found moved. */
  get movedBy(): StagingMovedError | undefined {
    return this.moved;
  }

  /**
   * The tip, after checking that auto/work, and the staging worktree's HEAD
   * on it, are still at it; throws StagingMovedError when either is not.
   */
  async verify(): Promise<string> {
    await this.verifyRef();
    const head = await this.git.resolve(this.stagingDir, 'HEAD');
    if (head !== this.last) throw this.stop(head);
    return this.last;
  }

  private async verifyRef(): Promise<string> {
    if (this.moved) throw this.moved;
    const found = await this.git.resolve(this.stagingDir, STAGING_REF);
    if (found !== this.last) throw this.stop(found);
    return this.last;
  }

  /** Commits the staging worktree's index as the next tip, by compare-and-swap from this one. */
  async commit(message: string): Promise<string> {
    const parent = await this.verify();
    const result = await commitIndexOnto(this.git, this.stagingDir, STAGING_BRANCH, parent, message);
    if (!result.ok) throw this.stop(result.found);
    this.last = result.commit;
    return result.commit;
  }

  /** Moves auto/work to `to` (a batch's gated commit, built on the tip) by compare-and-swap from the tip. */
  async moveTo(to: string): Promise<void> {
    // The staging worktree is detached on the batch's chain here: only the branch is checked.
    const from = await this.verifyRef();
    const moved = await this.git.try(this.stagingDir, ['update-ref', '-m', 'land a batch', STAGING_REF, to, from]);
    if (moved.exitCode !== 0) throw this.stop(await this.git.resolve(this.stagingDir, STAGING_REF));
    this.last = to;
  }

  private stop(found: string | undefined): StagingMovedError {
    this.moved ??= new StagingMovedError(this.last, found);
    return this.moved;
  }
}
