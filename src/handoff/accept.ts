// A task's work comes back from the agent as a bundle file in the one folder
// the agent writes. To the runner that file is hostile input: it is copied
// out by a walk that follows no link (regular file, the agent's own, at most
// the bound), checked by git as data (`bundle verify`, `list-heads`), fetched
// with every object checked (`transfer.fsckObjects`) into a ref of the
// runner's own, and accepted only when it is the task's branch alone and
// descends from the commit the task was cut from. Only then does the task's
// branch exist in the runner's repository for the integrator to merge.
import * as path from 'node:path';
import type { FsPort } from '../ports.js';
import type { Git } from '../git/git.js';
import { UntrustedPathError } from '../errors.js';
import { parseBundleHeads, taskBundleCommit } from './heads.js';
import { gitsLastWords } from '../git/git.js';

export interface TaskBundle {
  /** The folder the agent writes (the hand-off's fromAgent) and the bundle's name in it. */
  readonly dir: string;
  readonly name: string;
  /** The task's branch (auto/<id>): the one ref the bundle may name, and the runner's ref it lands on. */
  readonly branch: string;
  /** The commit the task was cut from: the bundle's tip must descend from it. */
  readonly base: string;
  readonly maxBytes: number;
  /** Every file must belong to this uid; undefined when the identities are one user. */
  readonly ownerUid: number | undefined;
  /** A folder of the runner's own for the copy. */
  readonly scratch: string;
}

export type Acceptance =
  { readonly accepted: true; readonly commit: string } | { readonly accepted: false; readonly reason: string };

/** Where a bundle's objects land before they are judged: never a branch, never auto/work. */
export function incomingRef(branch: string): string {
  return `refs/agent-runner/incoming/${branch}`;
}

const CHECKED = ['-c', 'transfer.fsckObjects=true', '-c', 'fetch.fsckObjects=true'];

/**
 * The bundle's objects into `incoming`, each one checked. Git 2.39 does not fsck what it unbundles, so the bundle
 * is first unpacked into a quarantine repository of the runner's own (borrowing the runner's objects, so the
 * bundle's prerequisites resolve and nothing is copied twice), and fetched from there with transfer.fsckObjects:
 * only the bundle's new objects travel, and index-pack checks every one. What fails, nothing of it reaches a ref.
 */
async function fetchChecked(
  git: Git,
  fs: FsPort,
  workspace: string,
  copy: string,
  bundle: TaskBundle,
  incoming: string,
): Promise<string | undefined> {
  const quarantine = `${copy}.quarantine`;
  await fs.remove(quarantine).catch(() => undefined);
  try {
    await git.run(bundle.scratch, ['init', '--quiet', '--bare', quarantine]);
    const common = await git.value(workspace, ['rev-parse', '--path-format=absolute', '--git-common-dir']);
    await fs.writeAtomic(path.join(quarantine, 'objects', 'info', 'alternates'), `${path.join(common, 'objects')}\n`);
    const branchRef = `refs/heads/${bundle.branch}`;
    const unbundled = await git.try(quarantine, ['fetch', '--no-tags', '--quiet', copy, `+${branchRef}:${branchRef}`]);
    if (unbundled.exitCode !== 0) return `git fetch from the bundle: ${gitsLastWords(unbundled.stderr)}`;
    const fetched = await git.try(workspace, [
      ...CHECKED,
      'fetch',
      '--no-tags',
      '--no-write-fetch-head',
      '--quiet',
      `file://${quarantine}`,
      `+${branchRef}:${incoming}`,
    ]);
    if (fetched.exitCode !== 0) {
      await removeHalfPacks(fs, path.join(common, 'objects', 'pack'));
      return `git fetch from the bundle: ${gitsLastWords(fetched.stderr)}`;
    }
    return undefined;
  } finally {
    await fs.remove(quarantine).catch(() => undefined);
  }
}

/**
 * What an index-pack that refused a pack leaves behind (an empty tmp_pack_* file). Acceptances run one at a time
 * (the caller's lock), so no other fetch of the runner's is writing one now.
 */
async function removeHalfPacks(fs: FsPort, packDir: string): Promise<void> {
  for (const name of await fs.list(packDir))
    if (name.startsWith('tmp_pack_')) await fs.remove(path.join(packDir, name)).catch(() => undefined);
}

/**
 * Copies, checks and fetches a task's bundle; the task's branch is set to its tip only when every check passes. One
 * at a time per repository (the caller serializes).
 */
export async function acceptTaskBundle(
  git: Git,
  fs: FsPort,
  workspace: string,
  bundle: TaskBundle,
): Promise<Acceptance> {
  const refuse = (reason: string): Acceptance => ({
    accepted: false,
    reason: `the hand-over of ${bundle.branch} was refused: ${reason}`,
  });
  const copy = path.join(bundle.scratch, `${bundle.name}.${bundle.base.slice(0, 12)}.copy`);
  await fs.remove(copy).catch(() => undefined);
  try {
    let copied;
    try {
      copied = await fs.copyUntrusted(bundle.dir, bundle.name, bundle.maxBytes, copy);
    } catch (error) {
      if (error instanceof UntrustedPathError) return refuse(error.message);
      throw error;
    }
    if (!copied) return refuse(`no bundle ${path.join(bundle.dir, bundle.name)} was handed over`);
    if (bundle.ownerUid !== undefined && copied.uid !== bundle.ownerUid)
      return refuse(
        `${path.join(bundle.dir, bundle.name)} belongs to uid ${copied.uid}, not the agent's ${bundle.ownerUid}`,
      );
    const verified = await git.try(workspace, ['bundle', 'verify', copy]);
    if (verified.exitCode !== 0)
      return refuse(`git bundle verify: ${gitsLastWords(verified.stderr || verified.stdout)}`);
    const listed = await git.try(workspace, ['bundle', 'list-heads', copy]);
    if (listed.exitCode !== 0) return refuse(`git bundle list-heads: ${gitsLastWords(listed.stderr)}`);
    const heads = parseBundleHeads(listed.stdout);
    if (typeof heads === 'string') return refuse(heads);
    const tip = taskBundleCommit(heads, bundle.branch);
    if (typeof tip === 'string') return refuse(tip);
    const incoming = incomingRef(bundle.branch);
    const fetched = await fetchChecked(git, fs, workspace, copy, bundle, incoming);
    if (fetched !== undefined) return refuse(fetched);
    try {
      const commit = await git.value(workspace, ['rev-parse', '--verify', '--quiet', `${incoming}^{commit}`]);
      if (commit !== tip.commit)
        return refuse(`the bundle's ${bundle.branch} is ${tip.commit}, but ${commit} was fetched`);
      if (!(await git.isAncestor(workspace, bundle.base, commit)))
        return refuse(
          `${commit.slice(0, 12)} does not descend from ${bundle.base.slice(0, 12)}, the commit the task was cut from`,
        );
      await git.run(workspace, ['update-ref', `refs/heads/${bundle.branch}`, commit]);
      return { accepted: true, commit };
    } finally {
      await git.try(workspace, ['update-ref', '-d', incoming]);
    }
  } finally {
    await fs.remove(copy).catch(() => undefined);
  }
}
