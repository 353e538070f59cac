// One drain per workspace: an O_EXCL lock file holding the owner's pid and
// kernel start time. A lock whose owner is gone (or whose pid now belongs to
// another process) is stale and taken over, so a crash never wedges the repo.
import type { FsPort, ProcessPort } from '../ports.js';
import { BusyError } from '../errors.js';
import { stillRunning } from '../process-identity.js';

export interface LockOwner {
  readonly pid: number;
  readonly startTime: string | undefined;
  readonly since: string;
  readonly purpose: string;
}

export interface WorkspaceLock {
  release(): Promise<void>;
}

export interface LockDeps {
  readonly fs: FsPort;
  readonly process: ProcessPort;
}

export async function acquireWorkspaceLock(deps: LockDeps, file: string, me: LockOwner): Promise<WorkspaceLock> {
  for (let attempt = 0; attempt < 3; attempt++) {
    if (await deps.fs.createExclusive(file, `${JSON.stringify(me)}\n`, 0o600)) {
      return { release: () => deps.fs.remove(file) };
    }
    const text = await deps.fs.readTextIfExists(file);
    if (text === undefined) continue; // released between our two calls
    let owner: LockOwner | undefined;
    try {
      owner = JSON.parse(text) as LockOwner;
    } catch {
      owner = undefined; // half-written by a crashed owner: stale
    }
    if (owner && (await stillRunning(deps.process, owner))) {
      throw new BusyError(`${file} is held by pid ${owner.pid} (${owner.purpose}) since ${owner.since}; wait for it to finish`);
    }
    await deps.fs.remove(file);
  }
  throw new BusyError(`${file}: could not take the lock (another process keeps taking it)`);
}
