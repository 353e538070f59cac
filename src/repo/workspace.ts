// Checks that a --workspace argument names something we can work in, before
// anything is written. Every failure is one line: what, and how to fix it.
import * as path from 'node:path';
import type { FsPort } from '../ports.js';
import { UsageError } from '../errors.js';
import { findBoardOnDisk } from '../board/read.js';

/** The workspace a command works in: --workspace, or the current directory. */
export async function checkWorkspace(fs: FsPort, cwd: string, workspace: string | undefined): Promise<string> {
  const dir = path.resolve(cwd, workspace ?? '.');
  const stat = await fs.stat(dir);
  if (!stat) throw new UsageError(`workspace ${dir} does not exist; pass the path of a git checkout`);
  if (!stat.isDirectory) throw new UsageError(`workspace ${dir} is not a directory; pass the path of a git checkout`);
  const dotGit = await fs.stat(path.join(dir, '.git'));
  if (!dotGit)
    throw new UsageError(`workspace ${dir} is not a git repository (no .git); run git init or clone it first`);
  if (!dotGit.isDirectory) await checkGitFile(fs, dir);
  // Where the CLI would find the board (backlog/, .backlog/, or backlog.config.yml's folder); a UsageError when
  // nowhere.
  await findBoardOnDisk(fs, dir);
  return dir;
}

/** Makes sure the state dir can be written; says how to point elsewhere when not. */
export async function ensureStateDir(fs: FsPort, dir: string): Promise<void> {
  try {
    await fs.mkdirp(dir, 0o700);
    const probe = path.join(dir, '.write-probe');
    await fs.writeAtomic(probe, '');
    await fs.remove(probe);
  } catch (error) {
    throw new UsageError(
      `state dir ${dir} is not writable (${(error as Error).message}); set AGENT_RUNNER_STATE to a directory you can write`,
    );
  }
}

/** A .git file (a worktree, a submodule) must name a gitdir that exists: git's own error would not say which. */
async function checkGitFile(fs: FsPort, dir: string): Promise<void> {
  const file = path.join(dir, '.git');
  const text = (await fs.readTextIfExists(file)) ?? '';
  const gitdir = /^gitdir:\s*(.+?)\s*$/m.exec(text)?.[1];
  if (!gitdir)
    throw new UsageError(
      `workspace ${dir}: ${file} is a file without a "gitdir:" line; restore the checkout (git clone it again)`,
    );
  const target = path.resolve(dir, gitdir);
  if (!(await fs.stat(target))?.isDirectory) {
    throw new UsageError(
      `workspace ${dir}: ${file} points at ${target}, which does not exist; the repository it belonged to was moved or removed: run \`git worktree prune\` in it, or clone the repo again`,
    );
  }
}
