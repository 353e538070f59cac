// The settings that govern integration (which gates script, how long it may
// run) come from auto/work as committed before any merge of the drain: the
// trusted side. Not from the workspace's checkout (any file there can be
// edited without a commit), and never from a task's tree, which is what the
// gate judges. Read from git objects, so no link in a worktree is followed.
import type { Git } from '../../git/git.js';
import type { RepoConfig } from '../../types.js';
import type { GateSpec } from './gate.js';
import { CONFIG_FILE, parseRepoConfig } from '../../repo/config.js';
import { STAGING_BRANCH } from '../../staging/names.js';
import { UsageError } from '../../errors.js';
import { readBlob, treeEntry } from '../../git/objects.js';

/** The repo config committed at `commit` (auto/work's head before the merges); the defaults when it has none. */
export async function committedConfig(git: Git, cwd: string, commit: string): Promise<RepoConfig> {
  const where = `${STAGING_BRANCH} (${commit.slice(0, 12)}):${CONFIG_FILE}`;
  const entry = await treeEntry(git, cwd, commit, CONFIG_FILE);
  if (!entry) return parseRepoConfig(undefined, where).config;
  if (entry.type !== 'blob' || entry.mode === '120000') {
    throw new UsageError(`${where} is not a regular file (git mode ${entry.mode}); commit a plain JSON file there`);
  }
  return parseRepoConfig(await readBlob(git, cwd, entry.object), where).config;
}

/** Pure: the gate of a drain from the trusted config. */
export function gateSpecFrom(config: RepoConfig, env: Readonly<Record<string, string>>): GateSpec {
  return { script: config.gates, env, timeoutMs: config.agentWallClockSec * 1000 };
}
