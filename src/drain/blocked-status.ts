// The Blocked status exists before any agent needs it. A fresh `backlog
// init` lists To Do, In Progress, Done, and the CLI refuses `-s Blocked`
// ("Invalid status: Blocked") until the board's config lists it; it must also
// come before the finished (last) status, or the CLI shows a blocked
// dependency as completed. So each drain puts it in place on auto/work, in
// its own commit, before the first task worktree is cut from it.
import type { FsPort } from '../ports.js';
import type { Git } from '../git/git.js';
import { ensureBlockedStatusFile } from '../board/write.js';
import { findBoardOnDisk } from '../board/read.js';
import { commitIndex, stagePaths } from '../git/tree.js';
import { resolveCommit } from '../git/refs.js';

/** Returns the new head of auto/work when the config changed, else undefined. */
export async function ensureBlockedOnStaging(fs: FsPort, git: Git, stagingDir: string): Promise<string | undefined> {
  // A board without a config file has only the CLI's defaults; nothing to edit (blocking a task reports it).
  if (!(await findBoardOnDisk(fs, stagingDir)).configFile) return undefined;
  const config = await ensureBlockedStatusFile(fs, stagingDir);
  if (!config) return undefined;
  await stagePaths(git, stagingDir, [config]);
  await commitIndex(git, stagingDir, 'Board: add the Blocked status before the finished one');
  return resolveCommit(git, stagingDir, 'HEAD');
}
