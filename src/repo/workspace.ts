// Checks that a --workspace argument names something we can work in, before
// anything is written. Every failure is one line: what, and how to fix it.
import * as path from 'node:path';
import type { FsPort } from '../ports.js';
import { UsageError } from '../errors.js';
import { findBoardOnDisk } from '../board/read.js';

export async function checkWorkspace(fs: FsPort, cwd: string, workspace: string | undefined): Promise<string> {
  if (!workspace) throw new UsageError('--workspace DIR is required: the git checkout whose backlog/ holds the tasks');
  const dir = path.resolve(cwd, workspace);
  const stat = await fs.stat(dir);
  if (!stat) throw new UsageError(`workspace ${dir} does not exist; pass the path of a git checkout`);
  if (!stat.isDirectory) throw new UsageError(`workspace ${dir} is not a directory; pass the path of a git checkout`);
  if (!(await fs.stat(path.join(dir, '.git')))) throw new UsageError(`workspace ${dir} is not a git repository (no .git); run git init or clone it first`);
  // Where the CLI would find the board (backlog/, .backlog/, or backlog.config.yml's folder); a UsageError when nowhere.
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
    throw new UsageError(`state dir ${dir} is not writable (${(error as Error).message}); set AGENT_RUNNER_STATE to a directory you can write`);
  }
}
