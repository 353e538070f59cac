// Root looking into a repo user's tree (its home and clone): everything there
// is the user's to write, so it is read through the untrusted walk
// (src/io/untrusted-fs.ts), which refuses links and non-regular files and
// bounds what it reads. The trusted root is the user's home when the path is
// inside it (the home itself sits in root-owned /home); a clone the registry
// puts elsewhere has its parent as the trusted root (the operator chose it).
import * as path from 'node:path';
import { customDirectory, LOCATION_PROBES, locateBoard, ROOT_CONFIG_FILE } from '../../src/board/location.js';
import type { FsPort, UntrustedStat } from '../../src/ports.js';
import { UntrustedPathError } from '../../src/errors.js';

/** Small text files root reads from a user's tree (configs): more is refused, not read. */
export const MAX_USER_CONFIG_BYTES = 256 * 1024;

export interface UserTreePath {
  /** A directory root trusts (not writable by the user above it). */
  readonly root: string;
  /** The path below root, walked without following links. */
  readonly relative: string;
}

/** Pure: where the untrusted walk for `target` starts. */
export function userTreePath(home: string | undefined, target: string): UserTreePath {
  const resolved = path.resolve(target);
  if (home) {
    const relative = path.relative(path.resolve(home), resolved);
    if (relative !== '' && !relative.startsWith('..') && !path.isAbsolute(relative))
      return { root: path.resolve(home), relative };
  }
  return { root: path.dirname(resolved), relative: path.basename(resolved) };
}

/** A place inside a clone: the clone's walk, one more relative part. */
export function inClone(clone: UserTreePath, relative: string): UserTreePath {
  return { root: clone.root, relative: path.join(clone.relative, relative) };
}

/** lstat of the clone itself: a link there is refused (root would act on what it points at). */
export async function statClone(
  fs: FsPort,
  home: string | undefined,
  clonePath: string,
): Promise<UntrustedStat | undefined> {
  const where = userTreePath(home, clonePath);
  const stat = await fs.statUntrusted(where.root, where.relative);
  if (stat?.isSymlink)
    throw new UntrustedPathError(clonePath, 'is a symbolic link; a repo clone must be a real directory');
  return stat;
}

export interface CloneFacts {
  readonly stat: UntrustedStat | undefined;
  readonly isGit: boolean;
  /** .git/config as text ('' when absent or when .git is not a directory). */
  readonly gitConfig: string;
  readonly backlogConfig: string | undefined;
  /**
   * Where that config is, relative to the clone (backlog/config.yml, .backlog/config.yaml, backlog.config.yml, ...).
   */
  readonly backlogConfigFile?: string;
}

/** What provision needs to know about a clone, read without following a link anywhere in it. */
export async function readCloneFacts(fs: FsPort, home: string | undefined, clonePath: string): Promise<CloneFacts> {
  const stat = await statClone(fs, home, clonePath);
  if (!stat?.isDirectory) return { stat, isGit: false, gitConfig: '', backlogConfig: undefined };
  const clone = userTreePath(home, clonePath);
  const read = (relative: string) => {
    const where = inClone(clone, relative);
    return fs.readUntrusted(where.root, where.relative, MAX_USER_CONFIG_BYTES);
  };
  const dotGit = inClone(clone, '.git');
  const gitStat = await fs.statUntrusted(dotGit.root, dotGit.relative);
  if (gitStat?.isSymlink)
    throw new UntrustedPathError(path.join(clonePath, '.git'), 'is a symbolic link; links are never followed here');
  return {
    stat,
    isGit: gitStat !== undefined,
    // A .git file (gitdir: ...) names another place: its config is not read; the identity is just set again (as the
    // user).
    gitConfig: gitStat?.isDirectory ? ((await read('.git/config')) ?? '') : '',
    ...(await boardConfig(fs, clone, read)),
  };
}

/** The board's config, found where the backlog CLI looks (src/board/location.ts), through the no-follow walk. */
async function boardConfig(
  fs: FsPort,
  clone: UserTreePath,
  read: (relative: string) => Promise<string | undefined>,
): Promise<Pick<CloneFacts, 'backlogConfig' | 'backlogConfigFile'>> {
  const rootConfig = await read(ROOT_CONFIG_FILE);
  const custom = customDirectory(rootConfig);
  const probes = [...LOCATION_PROBES, ...(custom ? [custom] : [])];
  const stats = new Map(
    await Promise.all(
      probes.map(async (probe) => {
        const where = inClone(clone, probe);
        return [probe, await fs.statUntrusted(where.root, where.relative)] as const;
      }),
    ),
  );
  // A link counts as what it stands in for, so the read below walks into it and refuses it with its path named (never
  // followed).
  const location = locateBoard({
    rootConfig,
    isDir: (file) => stats.get(file)?.isDirectory === true || stats.get(file)?.isSymlink === true,
    isFile: (file) => stats.get(file) !== undefined && !stats.get(file)!.isDirectory,
  });
  if (!location?.configFile) return { backlogConfig: undefined };
  return { backlogConfig: await read(location.configFile), backlogConfigFile: location.configFile };
}
