// What every command receives from the entry point. Commands never read
// process.env, process.argv or the real ports themselves.
import type { Ports } from '../ports.js';

export interface CliContext {
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly cwd: string;
  readonly ports: Ports;
  readonly stdoutIsTTY: boolean;
  /** Results: data or the human rendering of it. */
  out(text: string): void;
  /** Diagnostics and progress. */
  err(text: string): void;
  /** This process's pid (recorded in locks). */
  readonly pid: number;
  /** Aborted on SIGTERM or SIGINT: long commands stop at the next boundary. */
  readonly terminate: AbortSignal;
  /** The process's own uid (0 means root). */
  readonly uid: number;
  /** Path of bin/agent-runner, for commands that start a child agent-runner. */
  readonly selfBin: string;
}

