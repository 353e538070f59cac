// A builder fake of the LockPort: locks in a map, holders recorded as the
// real edge records them (pid and start time of "this process", given here).
import type { HeldLock, LockHolder, LockPort } from '../../src/ports.js';

export interface FakeLocks extends LockPort {
  /** Puts a lock in place as another process would: holder undefined means it has not recorded itself yet. */
  plant(path: string, holder: LockHolder | undefined): void;
  holderOf(path: string): LockHolder | undefined;
  isLocked(path: string): boolean;
}

export function fakeLocks(self: { pid: number; startTime: string | undefined }): FakeLocks {
  const held = new Map<string, LockHolder | undefined>();
  return {
    async tryLock(path, command, since) {
      if (held.has(path)) return { acquired: false, holder: held.get(path) };
      const holder: LockHolder = { pid: self.pid, startTime: self.startTime, command, since };
      held.set(path, holder);
      const lock: HeldLock = {
        async release() {
          if (held.get(path) === holder) held.delete(path);
        },
      };
      return { acquired: true, lock };
    },
    async inspect(path) {
      return { locked: held.has(path), holder: held.get(path) };
    },
    async breakLock(path, expected) {
      const current = held.get(path);
      // No heartbeat here: a lock with no holder record is never stale.
      if (
        expected === undefined ||
        !current ||
        current.pid !== expected.pid ||
        current.startTime !== expected.startTime ||
        current.since !== expected.since
      )
        return false;
      held.delete(path);
      return true;
    },
    plant: (path, holder) => void held.set(path, holder),
    holderOf: (path) => held.get(path),
    isLocked: (path) => held.has(path),
  };
}
