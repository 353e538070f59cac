// Locks that survive crashes: proper-lockfile's mkdir lock with an mtime
// heartbeat (`update`), taken over once the heartbeat is older than `stale`.
// Limits it lives with: mkdir locks are invisible to flock(2) users, and a
// holder frozen longer than `stale` (SIGSTOP, a suspended VM) loses its lock:
// onCompromised tells it so. The holder record (pid, start time, command,
// since) is a sibling JSON file written right after the lock is taken.
import lockfile from 'proper-lockfile';
import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import { realFs, realProcess } from './real-ports.js';
import type { LockHolder, LockPort } from '../control/ports.js';

/** A lock whose heartbeat is older than this is stale. */
const STALE_MS = 30_000;
const UPDATE_MS = 5_000;
const BREAK_GUARD_STALE_MS = 10_000;

function holderFile(lockPath: string): string {
  return `${lockPath}.holder.json`;
}

async function readHolder(lockPath: string): Promise<LockHolder | undefined> {
  const text = await realFs.readTextIfExists(holderFile(lockPath));
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text) as LockHolder;
  } catch {
    return undefined;
  }
}

function target(lockPath: string): string {
  // proper-lockfile locks "<file>" by creating "<file>.lock"; lockfilePath
  // names the directory itself, so the file need not exist.
  return lockPath.replace(/\.lock$/, '');
}

export const realLocks: LockPort = {
  async tryLock(lockPath, command, since, onCompromised) {
    // The lock lives in $STATE/repos/NAME: root-only (control/state-dirs.ts).
    await fs.mkdir(path.dirname(lockPath), { recursive: true, mode: 0o700 });
    let release: () => Promise<void>;
    try {
      release = await lockfile.lock(target(lockPath), {
        lockfilePath: lockPath,
        realpath: false,
        retries: 0,
        stale: STALE_MS,
        update: UPDATE_MS,
        onCompromised,
      });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ELOCKED') return { acquired: false, holder: await readHolder(lockPath) };
      throw error;
    }
    const holder: LockHolder = { pid: process.pid, startTime: await realProcess.startTimeOf(process.pid), command, since };
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
    const locked = await lockfile.check(target(lockPath), { lockfilePath: lockPath, realpath: false, stale: STALE_MS });
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
      if (stat && Date.now() - stat.mtimeMs > BREAK_GUARD_STALE_MS) await fs.rm(guard, { recursive: true, force: true });
      return false;
    }
    try {
      const current = await readHolder(lockPath);
      if (!current || current.pid !== expected.pid || current.startTime !== expected.startTime || current.since !== expected.since) return false;
      await fs.rm(holderFile(lockPath), { force: true });
      await fs.rm(lockPath, { recursive: true, force: true });
      return true;
    } finally {
      await fs.rm(guard, { recursive: true, force: true });
    }
  },
};
