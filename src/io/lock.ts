// Locks that survive crashes: proper-lockfile's mkdir lock (mkdir is atomic:
// one holder) with an mtime heartbeat (`update`). proper-lockfile's own stale
// takeover is remove-then-mkdir with nothing in between (two contenders that
// both see it stale can both end up holding it), so it is never used here:
// a lock is only ever removed by breakLock, under a guard directory that
// serializes breakers, after re-reading what it is about to remove. Two
// cases are broken: a recorded holder that is provably dead (src/lock.ts
// decides), and a lock with no holder record whose heartbeat stopped (its
// taker died between mkdir and writing the record). A live holder keeps its
// lock however long it is frozen. mkdir locks are invisible to flock(2)
// users. The holder record (pid, start time, command, since) is a sibling
// JSON file written right after the lock is taken.
// The drain's workspace lock lives in a repo user's home, which root also
// locks (lifecycle commands): the holder record is read without following
// links and bounded, and anything but a directory at the lock's path is
// refused, never followed or removed.
import lockfile from 'proper-lockfile';
import * as fs from 'node:fs/promises';
import { statSync } from 'node:fs';
import * as path from 'node:path';
import { realFs, realProcess } from './real-ports.js';
import type { LockHolder, LockPort } from '../ports.js';
import { FailedError } from '../errors.js';

/** A lock with no holder record whose heartbeat is older than this was left by a taker that died. */
const HEARTBEAT_STALE_MS = 30_000;
/** proper-lockfile never calls a lock stale on its own (see above). */
const NEVER_STALE_MS = 2 ** 40;
const UPDATE_MS = 5_000;
const BREAK_GUARD_STALE_MS = 10_000;
/** A holder record is one short JSON line. */
const MAX_HOLDER_BYTES = 4096;

function holderFile(lockPath: string): string {
  return `${lockPath}.holder.json`;
}

async function readHolder(lockPath: string): Promise<LockHolder | undefined> {
  const file = holderFile(lockPath);
  let text: string | undefined;
  try {
    text = await realFs.readUntrusted(path.dirname(file), path.basename(file), MAX_HOLDER_BYTES);
  } catch {
    return undefined; // a link, a fifo, too large: no record root will believe
  }
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text) as LockHolder;
  } catch {
    return undefined;
  }
}

/**
 * Refuses a lock path that holds anything but a lock directory (a planted link or fifo, a file of another lock scheme).
 */
async function refuseNonDirectory(lockPath: string): Promise<void> {
  const found = await fs.lstat(lockPath).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return undefined;
    throw error;
  });
  if (found && !found.isDirectory())
    throw new FailedError(
      `${lockPath} is not a lock directory; remove it (it is a file, link or fifo no agent-runner lock leaves there)`,
    );
}

function target(lockPath: string): string {
  // proper-lockfile locks "<file>" by creating "<file>.lock"; lockfilePath
  // names the directory itself, so the file need not exist.
  return lockPath.replace(/\.lock$/, '');
}

export const realLocks: LockPort = {
  async tryLock(lockPath, command, since, onCompromised) {
    // Control-plane locks live in $STATE/repos/NAME, root-only (control/state-dirs.ts); the
    // workspace lock's directory exists already (the drain and lifecycle commands make it).
    await fs.mkdir(path.dirname(lockPath), { recursive: true, mode: 0o700 });
    await refuseNonDirectory(lockPath);
    let release: () => Promise<void>;
    try {
      release = await lockfile.lock(target(lockPath), {
        lockfilePath: lockPath,
        realpath: false,
        retries: 0,
        stale: NEVER_STALE_MS,
        update: UPDATE_MS,
        onCompromised,
      });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ELOCKED') throw error;
      const holder = await readHolder(lockPath);
      // A taker that died between mkdir and writing its record: nobody else will ever remove it.
      if (!holder) await realLocks.breakLock(lockPath, undefined);
      return { acquired: false, holder };
    }
    const holder: LockHolder = {
      pid: process.pid,
      startTime: await realProcess.startTimeOf(process.pid),
      command,
      since,
    };
    await realFs.writeAtomic(holderFile(lockPath), `${JSON.stringify(holder)}\n`, 0o644);
    let released = false;
    return {
      acquired: true,
      lock: {
        async release() {
          if (released) return;
          released = true;
          await fs.rm(holderFile(lockPath), { force: true });
          await release().catch(() => undefined);
        },
      },
    };
  },

  async inspect(lockPath) {
    // What lockfile.check answers with a lock never stale: whether the lock directory exists. Asked in this thread:
    // fleet inspects a watch lock per repo, a thousand at once, and libuv's pool made each wait behind the others.
    const locked = statSync(lockPath, { throwIfNoEntry: false }) !== undefined;
    return { locked, holder: locked ? await readHolder(lockPath) : undefined };
  },

  async breakLock(lockPath, expected) {
    const guard = `${lockPath}.breaking`;
    try {
      await fs.mkdir(guard);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      // A breaker that died mid-break must not block breaking forever.
      const stat = await fs.stat(guard).catch(() => undefined);
      if (stat && Date.now() - stat.mtimeMs > BREAK_GUARD_STALE_MS)
        await fs.rm(guard, { recursive: true, force: true });
      return false;
    }
    try {
      const current = await readHolder(lockPath);
      if (expected === undefined) {
        if (current) return false;
        const lock = await fs.lstat(lockPath).catch(() => undefined);
        if (!lock?.isDirectory() || Date.now() - lock.mtimeMs < HEARTBEAT_STALE_MS) return false;
      } else if (
        !current ||
        current.pid !== expected.pid ||
        current.startTime !== expected.startTime ||
        current.since !== expected.since
      )
        return false;
      await fs.rm(holderFile(lockPath), { force: true });
      await fs.rm(lockPath, { recursive: true, force: true });
      return true;
    } finally {
      await fs.rm(guard, { recursive: true, force: true });
    }
  },
};
