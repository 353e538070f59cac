// Ports the control plane needs beyond the shared ones: crash-proof locks and
// control over processes it did not start itself (signals, its own identity).
import type { Ports } from '../ports.js';

/** Who holds a lock, recorded beside it so a busy error can say who and since when. */
export interface LockHolder {
  readonly pid: number;
  /** Field 22 of /proc/PID/stat: with the pid, identifies the holder for good. */
  readonly startTime: string | undefined;
  readonly command: string;
  /** ISO 8601. */
  readonly since: string;
}

export interface HeldLock {
  /** Removes the lock and its holder record. Safe to call twice. */
  release(): Promise<void>;
}

export type LockAttempt = { readonly acquired: true; readonly lock: HeldLock } | { readonly acquired: false; readonly holder: LockHolder | undefined };

export interface LockPort {
  /**
   * Takes the lock at `path` (a directory is created at `path`) or reports the
   * holder. Never waits. The edge keeps the lock fresh while this process
   * lives; a lock whose holder died is stale and taken over after a while.
   * The holder's pid and start time are filled in by the edge.
   */
  tryLock(path: string, command: string, since: string, onCompromised: (error: Error) => void): Promise<LockAttempt>;
  /** Whether `path` is locked now, and by whom. */
  inspect(path: string): Promise<{ readonly locked: boolean; readonly holder: LockHolder | undefined }>;
  /**
   * Removes a lock left by the dead holder `expected`, unless someone else
   * has broken and retaken it meanwhile (breakers are serialized, and the
   * holder is re-read under that guard). True when it removed the lock.
   */
  breakLock(path: string, expected: LockHolder): Promise<boolean>;
}

export type StopSignal = 'SIGTERM' | 'SIGINT';

/** A process as /proc shows it to root. */
export interface UserProcess {
  readonly pid: number;
  /** /proc/PID/comm, for the log. */
  readonly name: string;
  /** Exited, waiting for its parent to collect it: holds nothing but its pid. */
  readonly zombie: boolean;
}

export interface ProcessControl {
  /** This process. */
  self(): Promise<{ readonly pid: number; readonly startTime: string | undefined }>;
  /**
   * Signals process group `pgid`; false when there is no such group. Only
   * orchestrate uses it, as the repo user, on its own agents: root signals
   * nothing but its own children and, through the user itself, the user's
   * processes (user-sweep.ts).
   */
  signalGroup(pgid: number, signal: 'SIGTERM' | 'SIGKILL'): boolean;
  /** Every process whose REAL uid is `uid` (the Uid: line of /proc/PID/status). */
  processesOfUser(uid: number): Promise<UserProcess[]>;
  /** Calls handler on each signal; returns the unsubscribe. */
  onSignal(signal: StopSignal, handler: () => void): () => void;
}

export interface ControlPorts extends Ports {
  readonly locks: LockPort;
  readonly control: ProcessControl;
}
