// One port per OS effect. The core receives these as parameters; src/io/ has
// the real implementations (wired once, in src/main.ts) and
// test/helpers/fake-ports.ts the builder fakes. Nothing outside src/io/
// imports node:child_process, node:fs, execa, proper-lockfile or node-cron.
import type { Command } from './types.js';

export interface CommandResult {
  readonly exitCode: number | null;
  readonly signal: string | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** How a started process ended. */
export interface ProcessExit {
  readonly exitCode: number | null;
  readonly signal: string | null;
  /**
   * When the provider said its rate limit lifts (ISO): root's launcher sets it from the broker's record of a 429
   * during this command; the real edge never does.
   */
  readonly rateLimitResetAt?: string;
}

export interface StartedProcess {
  readonly pid: number;
  /**
   * Resolves when the process has exited and its output is drained: its pipes closed, or a bounded wait after its
   * exit when something it left behind still holds them (the real edge waits 2 s).
   */
  readonly exited: Promise<ProcessExit>;
  /** Signals the whole process group the process leads. */
  signalGroup(signal: 'SIGTERM' | 'SIGKILL'): void;
}

export interface OutputHandlers {
  onStdoutLine(line: string): void;
  onStderrLine(line: string): void;
}

/**
 * Lines both ways over one connection (the launch socket between root and the runner). Lines arrive in order; a line
 * longer than the edge's bound arrives cut, so the reader refuses it.
 */
export interface LineChannel {
  /** Sends one line (the newline is added); nothing once the channel is closed. */
  send(line: string): void;
  onLine(handler: (line: string) => void): void;
  /** Called once, when the other side has gone or close() was called (at once if that happened already). */
  onClose(handler: () => void): void;
  close(): void;
}

export interface StartOptions {
  /** Give the child a socket as its fd 3; the returned process carries this side of it. */
  readonly channel?: true;
}

export interface ProcessPort {
  /** Runs to completion and captures output. Never throws on a non-zero exit. */
  run(command: Command): Promise<CommandResult>;
  /** Starts in its own process group, streaming output lines as they come. */
  start(
    command: Command,
    handlers: OutputHandlers,
    options?: StartOptions,
  ): StartedProcess & { readonly channel?: LineChannel };
  /**
   * The kernel's start time of a process (field 22 of /proc/PID/stat), or
   * undefined when it is gone (a zombie counts as gone: it has exited). With the pid it identifies a process for good:
   * a recycled pid has another start time.
   */
  startTimeOf(pid: number): Promise<string | undefined>;
  /** Whether a program can be found (absolute path, or on the PATH given). */
  which(program: string, pathVariable: string): Promise<string | undefined>;
}

export interface FileStat {
  readonly size: number;
  readonly mode: number;
  readonly uid: number;
  /** The owning group, when the edge knows it (the real one always does). */
  readonly gid?: number;
  readonly isDirectory: boolean;
  readonly mtimeMs: number;
}

/** lstat of a path in a repo user's tree: a link is reported, never followed. */
export interface UntrustedStat extends FileStat {
  readonly isFile: boolean;
  readonly isSymlink: boolean;
}

export interface FsPort {
  readText(path: string): Promise<string>;
  /** undefined when the file does not exist; other errors throw. */
  readTextIfExists(path: string): Promise<string | undefined>;
  /** Temp file in the same directory, fsync, rename: readers see old or new, never half. */
  writeAtomic(path: string, text: string, mode?: number): Promise<void>;
  appendLine(path: string, line: string): Promise<void>;
  /** Entry names of a directory; [] when it does not exist. */
  list(dir: string): Promise<string[]>;
  stat(path: string): Promise<FileStat | undefined>;
  mkdirp(path: string, mode?: number): Promise<void>;
  remove(path: string): Promise<void>;
  rename(from: string, to: string): Promise<void>;
  makeTempDir(prefix: string): Promise<string>;
  /**
   * For a tree a repo user can write (its home, clone, worktrees, records),
   * read by root: `relative` under the trusted `root`, never following a link
   * below root, regular files only, at most maxBytes (more is an
   * UntrustedPathError, as is a link). undefined when absent.
   */
  readUntrusted(root: string, relative: string, maxBytes: number): Promise<string | undefined>;
  /**
   * readUntrusted of several files below one root, each at most maxBytes, in their order: the folders they share
   * are opened once (three ref files of one repo share .git/refs/). Throws as readUntrusted at the first refused.
   */
  readUntrustedFiles(root: string, relatives: readonly string[], maxBytes: number): Promise<(string | undefined)[]>;
  /** What is at root/relative (a link reported as such), by the same walk; undefined when absent. */
  statUntrusted(root: string, relative: string): Promise<UntrustedStat | undefined>;
  /** Entry names of root/relative by the same walk; [] when absent; more than maxEntries is an error. */
  listUntrusted(root: string, relative: string, maxEntries: number): Promise<string[]>;
  /**
   * Copies the regular file root/relative, by the same walk, into a new file `destination` (0600), at most maxBytes
   * (more, a link or anything but a regular file is an UntrustedPathError): its size and its owner; undefined when
   * absent.
   */
  copyUntrusted(
    root: string,
    relative: string,
    maxBytes: number,
    destination: string,
  ): Promise<{ readonly size: number; readonly uid: number } | undefined>;
}

export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  sleep(ms: number): Promise<void>;
  /** A cancellable timer; the watchdog uses it so tests can drive time. */
  setTimer(ms: number, callback: () => void): { cancel(): void };
}

export interface Ids {
  /** A fresh id, sortable by creation time (across processes: microseconds), e.g. "20261129T143000123456Z-1a2b3c". */
  next(): string;
}

export interface Ports {
  readonly process: ProcessPort;
  readonly fs: FsPort;
  readonly clock: Clock;
  readonly ids: Ids;
}

// ------------------------------------------------------------------ control plane
// Ports the control plane needs beyond the shared ones: crash-proof locks and
// control over processes it did not start itself (signals, its own identity).

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

export type LockAttempt =
  | { readonly acquired: true; readonly lock: HeldLock }
  | { readonly acquired: false; readonly holder: LockHolder | undefined };

export interface LockPort {
  /**
   * Takes the lock at `path` (a directory is created at `path`) or reports the
   * holder. Never waits, and never takes over a lock on its own: breaking a
   * dead holder's lock is breakLock's. The holder's pid and start time are
   * filled in by the edge.
   */
  tryLock(path: string, command: string, since: string, onCompromised: (error: Error) => void): Promise<LockAttempt>;
  /** Whether `path` is locked now, and by whom. */
  inspect(path: string): Promise<{ readonly locked: boolean; readonly holder: LockHolder | undefined }>;
  /**
   * Removes a lock left by the dead holder `expected`, unless someone else
   * has broken and retaken it meanwhile (breakers are serialized, and the
   * holder is re-read under that guard). `expected` undefined: a lock with no
   * holder record, removed only once its heartbeat has stopped. True when it
   * removed the lock.
   */
  breakLock(path: string, expected: LockHolder | undefined): Promise<boolean>;
}

export type StopSignal = 'SIGTERM' | 'SIGINT';

/** A process as /proc shows it to root. */
export interface UserProcess {
  readonly pid: number;
  /** /proc/PID/comm, for the log. */
  readonly name: string;
  /** Exited with every thread, waiting for its parent to collect it: holds nothing but its pid. */
  readonly zombie: boolean;
}

/** A process found working in a repository (ProcessControl.processesInRepository), as /proc shows it. */
export interface RepositoryProcess {
  readonly pid: number;
  /** /proc/PID/comm. */
  readonly name: string;
  /** Field 22 of /proc/PID/stat; undefined when it could not be read (or it is a zombie). */
  readonly startTime: string | undefined;
  /** The real uid. */
  readonly uid: number;
  /** Its process group (field 5 of /proc/PID/stat): a git the runner started leads its own. */
  readonly pgid: number;
  /** The file among those asked about that it has open, if any. */
  readonly file: string | undefined;
  /** Whether its working directory is in one of the directories asked about. */
  readonly inDirs: boolean;
  /** The STARTED_BY_VARIABLE of its environment as it is, when present and readable (process-identity.ts). */
  readonly startedBy: string | undefined;
}

export interface ProcessControl {
  /** This process: its identity and its real uid. */
  self(): Promise<{ readonly pid: number; readonly startTime: string | undefined; readonly uid: number }>;
  /**
   * Signals process group `pgid`; false when there is no such group. Only
   * orchestrate uses it, as the repo user, on its own agents: root signals
   * nothing but its own children and, through the user itself, the user's
   * processes (control/dispatch/user-sweep.ts).
   */
  signalGroup(pgid: number, signal: 'SIGTERM' | 'SIGKILL'): boolean;
  /**
   * Signals the one process `pid` (not its group); false when there is none. Like signalGroup, used by a drain or
   * a lifecycle command, as the repo user, on what a gone run of its own left (drain/recovery/git-locks.ts).
   */
  signalProcess(pid: number, signal: 'SIGTERM' | 'SIGKILL'): boolean;
  /** Every process whose REAL uid is `uid` (the Uid: line of /proc/PID/status). */
  processesOfUser(uid: number): Promise<UserProcess[]>;
  /**
   * Processes visible to this one that hold any of `files` open or whose
   * working directory is in any of `dirs`, whatever their name (a git, the
   * filter or editor it runs). This process is never listed.
   */
  processesInRepository(files: readonly string[], dirs: readonly string[]): Promise<RepositoryProcess[]>;
  /** Calls handler on each signal; returns the unsubscribe. */
  onSignal(signal: StopSignal, handler: () => void): () => void;
}

/** Runs work on a cron schedule (node-cron behind src/io/cron.ts). */
export interface Scheduler {
  /** Calls fn on each match of the cron expression; never overlapping calls. */
  schedule(expression: string, fn: () => Promise<void>): { stop(): void };
  /** Whether `schedule` accepts the expression: the one grammar the registry validates against. */
  isValid(expression: string): boolean;
}

/**
 * HTTP POSTs to the operator's webhooks, from root's side: direct, never through a repo's proxy (src/io/webhook.ts).
 */
export interface NotifyPostPort {
  /**
   * POSTs `body` (JSON) to `url`; resolves to the response's status (redirects are not followed), or throws when no
   * answer came within timeoutMs (refused, reset, too slow).
   */
  post(url: string, body: string, timeoutMs: number): Promise<{ readonly status: number }>;
}

/** The check the registry makes of a `schedule` value: the scheduler's own. */
export type ScheduleCheck = Pick<Scheduler, 'isValid'>;

/** A request as a loopback server's handler sees it: no body is read. */
export interface LoopbackRequest {
  readonly method: string;
  /** The path without the query. */
  readonly path: string;
}

export interface LoopbackAnswer {
  readonly status: number;
  readonly contentType: string;
  readonly body: string;
}

export interface LoopbackListener {
  /** Stops listening and ends every open connection. Safe to call twice. */
  close(): Promise<void>;
}

/** An HTTP server on 127.0.0.1 only (src/io/http/): the watcher's metrics. */
export interface LoopbackHttp {
  /** Listens on 127.0.0.1:port; rejects naming the port when it cannot (in use, not allowed). */
  listen(port: number, answer: (request: LoopbackRequest) => Promise<LoopbackAnswer>): Promise<LoopbackListener>;
}

/**
 * Every port: the shared ones plus the control plane's (crash-proof locks,
 * control over processes it did not start, the cron scheduler, a loopback
 * HTTP server). The CLI context carries these; src/main.ts wires the real ones.
 */
export interface ControlPorts extends Ports {
  readonly locks: LockPort;
  readonly control: ProcessControl;
  readonly scheduler: Scheduler;
  readonly notifyPosts: NotifyPostPort;
  readonly loopbackHttp: LoopbackHttp;
  /** Wake files the watcher listens for (the push webhook); absent: only the poll finds new work. */
  readonly wake?: WakePort;
}

/** Noticing, without polling, that a file in a root-only directory was written (inotify behind src/io/webhook/). */
export interface WakePort {
  /**
   * Calls onWake each time `file` is created or replaced (written atomically by another process); the directory
   * must exist. onError when the watch itself fails (the directory went away): nothing more is noticed.
   */
  watch(file: string, onWake: () => void, onError: (error: Error) => void): { close(): void };
}
