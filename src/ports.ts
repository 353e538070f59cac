// One port per OS effect. The core receives these as parameters; src/io/real-ports.ts has
// the real implementations and test/fakes.ts the builder fakes. Nothing in the
// core imports node:child_process, node:fs or execa (test/unit/imports.test.ts).
import type { Command } from './types.js';

export interface CommandResult {
  readonly exitCode: number | null;
  readonly signal: string | null;
  readonly stdout: string;
  readonly stderr: string;
}

export interface StartedProcess {
  readonly pid: number;
  /** Resolves when the process has exited and its output is drained. */
  readonly exited: Promise<{ exitCode: number | null; signal: string | null }>;
  /** Signals the whole process group the process leads. */
  signalGroup(signal: 'SIGTERM' | 'SIGKILL'): void;
}

export interface OutputHandlers {
  onStdoutLine(line: string): void;
  onStderrLine(line: string): void;
}

export interface ProcessPort {
  /** Runs to completion and captures output. Never throws on a non-zero exit. */
  run(command: Command): Promise<CommandResult>;
  /** Starts in its own process group, streaming output lines as they come. */
  start(command: Command, handlers: OutputHandlers): StartedProcess;
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
  /** Creates the file only if it does not exist (O_EXCL); false when it already does. */
  createExclusive(path: string, text: string, mode?: number): Promise<boolean>;
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
  /** What is at root/relative (a link reported as such), by the same walk; undefined when absent. */
  statUntrusted(root: string, relative: string): Promise<UntrustedStat | undefined>;
  /** Entry names of root/relative by the same walk; [] when absent; more than maxEntries is an error. */
  listUntrusted(root: string, relative: string, maxEntries: number): Promise<string[]>;
}

export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  sleep(ms: number): Promise<void>;
  /** A cancellable timer; the watchdog uses it so tests can drive time. */
  setTimer(ms: number, callback: () => void): { cancel(): void };
}

export interface Ids {
  /** A fresh id, sortable by creation time, e.g. "20261129T143000Z-1a2b3c". */
  next(): string;
}

export interface Ports {
  readonly process: ProcessPort;
  readonly fs: FsPort;
  readonly clock: Clock;
  readonly ids: Ids;
}
