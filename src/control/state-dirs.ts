// Modes of root's state dir ($STATE, AGENT_RUNNER_STATE). Nothing in it is
// for the repo users: their own state lives in their homes (paths.ts
// repoUserStateDir). $STATE is root:proxy 0750 (Squid, group proxy, reaches
// its squid/ subdir; provision host sets owner and group), and
// $STATE/repos with every repos/NAME (locks, spool, run records, watcher
// status) is root-only 0700: no agent reads another repo's runs, and no
// record root acts on is writable by anyone else.
import * as path from 'node:path';
import type { FsPort } from '../ports.js';
import { repoStateDir } from '../paths.js';

const STATE_DIR_MODE = 0o750;
export const ROOT_ONLY_DIR_MODE = 0o700;

/** Creates $STATE/repos/NAME (and what is missing above it) with the modes above; returns it. */
export async function ensureRepoStateDir(fs: FsPort, state: string, repo: string): Promise<string> {
  const dir = repoStateDir(state, repo);
  await fs.mkdirp(state, STATE_DIR_MODE);
  await fs.mkdirp(path.dirname(dir), ROOT_ONLY_DIR_MODE);
  await fs.mkdirp(dir, ROOT_ONLY_DIR_MODE);
  return dir;
}

/** Pure: what is wrong with the modes of $STATE, $STATE/repos and its entries, in words (empty when nothing). */
export function stateDirProblems(
  state: { readonly path: string; readonly mode: number; readonly uid: number } | undefined,
  repoDirs: readonly { readonly path: string; readonly mode: number; readonly uid: number }[],
): string[] {
  if (!state) return [];
  const problems: string[] = [];
  const octal = (mode: number) => (mode & 0o7777).toString(8).padStart(4, '0');
  if (state.uid !== 0) problems.push(`${state.path} belongs to uid ${state.uid}, not root`);
  if ((state.mode & 0o007) !== 0) problems.push(`${state.path} is open to every user (mode ${octal(state.mode)})`);
  if ((state.mode & 0o020) !== 0) problems.push(`${state.path} is group-writable (mode ${octal(state.mode)})`);
  for (const dir of repoDirs) {
    if (dir.uid !== 0) problems.push(`${dir.path} belongs to uid ${dir.uid}, not root`);
    if ((dir.mode & 0o077) !== 0) problems.push(`${dir.path} is open to other users (mode ${octal(dir.mode)})`);
  }
  return problems;
}
