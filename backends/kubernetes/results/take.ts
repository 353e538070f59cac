// Taking a pod's result: the attempt's result ref in the results repository
// becomes a bundle of the runner's own (what the ref adds to the task's
// base, or all of it when the base is not there), and that bundle goes
// through acceptTaskBundle, the very checks a host task's hand-over gets:
// the size bound, `bundle verify`, the one branch it may name, every object
// fsck'd through a quarantine, a tip that descends from the base. The task's
// branch exists in the runner's repository only when all pass. The result
// ref is deleted either way: a result is taken once.
import * as path from 'node:path';
import type { FsPort } from '../../../src/ports.js';
import type { Git } from '../../../src/git/git.js';
import { gitsLastWords } from '../../../src/git/git.js';
import { acceptTaskBundle, type Acceptance } from '../../../src/handoff/accept.js';
import { taskBranch } from '../../../src/staging/names.js';
import { resultRef } from '../manifests/spec.js';

export interface TakeResultDeps {
  /** Git as the runner. */
  readonly git: Git;
  readonly fs: FsPort;
  /** The runner's repository: where the task's branch is made. */
  readonly workspace: string;
  /** The repo's results repository (resultsRepository). */
  readonly results: string;
  /** A folder of the runner's own for the bundle and its copy. */
  readonly scratch: string;
  /** The bound of a task's bundle (the same as a host hand-over's). */
  readonly maxBytes: number;
}

export interface TakenAttempt {
  readonly task: string;
  readonly attempt: number;
  /** The commit the task was cut from: the result must descend from it. */
  readonly base: string;
}

/** The attempt's pushed result checked and made the task's branch, or why not; the result ref is gone after. */
export async function takeResult(deps: TakeResultDeps, of: TakenAttempt): Promise<Acceptance> {
  const { git, fs, results } = deps;
  const ref = resultRef(of.task, of.attempt);
  const branch = taskBranch(of.task);
  const refuse = (reason: string): Acceptance => ({
    accepted: false,
    reason: `the result of ${of.task} attempt ${of.attempt} was refused: ${reason}`,
  });
  const staged = `refs/heads/${branch}`;
  const out = path.join(deps.scratch, 'results-out');
  const name = `${of.task}.${of.attempt}.bundle`;
  try {
    const type = await git.try(results, ['cat-file', '-t', ref]);
    if (type.exitCode !== 0) return refuse(`nothing was pushed to ${ref} in ${results}`);
    if (type.stdout.trim() !== 'commit')
      return refuse(`${ref} names a ${type.stdout.trim()}, not a commit: the worker pushes its HEAD`);
    const tip = await git.value(results, ['rev-parse', '--verify', `${ref}^{commit}`]);
    await git.run(results, ['update-ref', staged, tip]);
    const hasBase = (await git.try(results, ['cat-file', '-e', `${of.base}^{commit}`])).exitCode === 0;
    await fs.mkdirp(out, 0o700);
    await fs.remove(path.join(out, name)).catch(() => undefined);
    const bundled = await git.try(results, [
      'bundle',
      'create',
      '--quiet',
      path.join(out, name),
      staged,
      ...(hasBase ? [`^${of.base}`] : []),
    ]);
    if (bundled.exitCode !== 0)
      return refuse(
        tip === of.base
          ? `${ref} is the base itself: the task committed nothing`
          : `git bundle create: ${gitsLastWords(bundled.stderr)}`,
      );
    const accepted = await acceptTaskBundle(git, fs, deps.workspace, {
      dir: out,
      name,
      branch,
      base: of.base,
      maxBytes: deps.maxBytes,
      ownerUid: undefined,
      scratch: deps.scratch,
    });
    return accepted.accepted ? accepted : refuse(accepted.reason);
  } finally {
    await git.try(results, ['update-ref', '-d', staged]);
    await git.try(results, ['update-ref', '-d', ref]);
    await fs.remove(path.join(out, name)).catch(() => undefined);
  }
}
