// Pausing a repo's watcher without editing the registry: a root-owned file,
// <state>/repos/NAME/paused.json, in root's own state dir (no repo user can
// create or remove it). While it exists the watcher starts nothing new for
// the repo (a run in progress finishes), and fleet and the dashboard show
// it. `agent-runner pause|resume REPO` and the dashboard's `P` write it.
import type { FsPort } from '../../ports.js';
import { pauseFile } from '../../paths.js';
import { ensureRepoStateDir } from '../state-dirs.js';

export interface PauseFlag {
  readonly since: string;
  /** Who paused it, for the operator who finds it paused. */
  readonly by: string;
}

/** The flag, or undefined when the repo is not paused. A file that does not parse still pauses. */
export async function readPause(fs: FsPort, state: string, repo: string): Promise<PauseFlag | undefined> {
  const text = await fs.readTextIfExists(pauseFile(state, repo));
  if (text === undefined) return undefined;
  try {
    const value = JSON.parse(text) as Partial<PauseFlag>;
    return {
      since: typeof value.since === 'string' ? value.since : '?',
      by: typeof value.by === 'string' ? value.by : '?',
    };
  } catch {
    return { since: '?', by: '?' };
  }
}

export async function pauseRepo(fs: FsPort, state: string, repo: string, flag: PauseFlag): Promise<void> {
  await ensureRepoStateDir(fs, state, repo);
  await fs.writeAtomic(pauseFile(state, repo), `${JSON.stringify(flag)}\n`, 0o600);
}

/** True when the repo was paused. */
export async function resumeRepo(fs: FsPort, state: string, repo: string): Promise<boolean> {
  const was = (await fs.readTextIfExists(pauseFile(state, repo))) !== undefined;
  await fs.remove(pauseFile(state, repo));
  return was;
}
