// Taking a lock through the LockPort: the one lock abstraction, for the
// control plane's per-repo locks (run.lock, watch.lock) and the drain's
// workspace lock alike. A lock whose recorded holder is dead (by the one
// process-identity rule: pid gone, or reused by another process) is broken at
// once instead of waiting for the edge's heartbeat to go stale.
import type { Clock, HeldLock, LockHolder, LockPort, ProcessPort } from './ports.js';
import { BusyError } from './errors.js';
import { isSameProcess } from './process-identity.js';

export function describeHolder(holder: LockHolder | undefined, now: number): string {
  if (!holder) return 'held by a process that has not recorded itself yet';
  const ageSec = Math.max(0, Math.round((now - Date.parse(holder.since)) / 1000));
  return `held by pid ${holder.pid} (${holder.command}) since ${holder.since} (${ageSec}s ago)`;
}

export interface LockDeps {
  readonly locks: LockPort;
  readonly process: Pick<ProcessPort, 'startTimeOf'>;
  readonly clock: Clock;
}

/** Breaks the lock when its recorded holder is dead; true when it did. */
export async function clearDeadLock(
  deps: LockDeps,
  lockPath: string,
): Promise<{ cleared: boolean; holder: LockHolder | undefined }> {
  const { locked, holder } = await deps.locks.inspect(lockPath);
  if (!locked || !holder) return { cleared: false, holder };
  if (isSameProcess(holder, await deps.process.startTimeOf(holder.pid))) return { cleared: false, holder };
  return { cleared: await deps.locks.breakLock(lockPath, holder), holder };
}

export interface AcquireOptions {
  /** What the holder is doing, shown to whoever finds the lock busy. */
  readonly command: string;
  /** Keep trying (every pollMs) instead of failing busy. */
  readonly wait: boolean;
  readonly pollMs?: number;
  /** For the busy message: "repo \"web\"". */
  readonly what: string;
  /**
   * The flag that makes the caller wait (dispatch's --wait), suggested in the busy message; commands without one are
   * told only to try again.
   */
  readonly waitFlag?: string;
  /** The busy message, when the default ("WHAT is busy: held by ...; try again later[, or pass FLAG]") does not fit. */
  readonly busyMessage?: (holder: LockHolder | undefined, now: number) => string;
  readonly onCompromised?: (error: Error) => void;
  /** Called once when waiting starts, with the holder's description. */
  readonly onWaiting?: (description: string) => void;
}

/** Takes the lock, or throws BusyError (exit 75) naming the holder and since when. */
export async function acquireLock(deps: LockDeps, lockPath: string, options: AcquireOptions): Promise<HeldLock> {
  let announced = false;
  let unrecorded = 0;
  for (;;) {
    const since = new Date(deps.clock.now()).toISOString();
    const attempt = await deps.locks.tryLock(
      lockPath,
      options.command,
      since,
      options.onCompromised ?? (() => undefined),
    );
    if (attempt.acquired) return attempt.lock;
    if (attempt.holder && !isSameProcess(attempt.holder, await deps.process.startTimeOf(attempt.holder.pid))) {
      if (await deps.locks.breakLock(lockPath, attempt.holder)) continue;
    }
    // The holder writes its record right after taking the lock: give it a moment, so the error can name it.
    if (!attempt.holder && unrecorded++ < 5) {
      await deps.clock.sleep(50);
      continue;
    }
    const now = deps.clock.now();
    if (!options.wait)
      throw new BusyError(
        options.busyMessage?.(attempt.holder, now) ??
          `${options.what} is busy: ${describeHolder(attempt.holder, now)}; try again later${options.waitFlag ? `, or pass ${options.waitFlag}` : ''}`,
      );
    if (!announced) {
      announced = true;
      options.onWaiting?.(describeHolder(attempt.holder, now));
    }
    await deps.clock.sleep(options.pollMs ?? 1000);
  }
}
