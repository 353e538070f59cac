// What a repo's watcher is given, and what its parts (recover.ts, run.ts)
// are given by the watcher: the ports and settings, and the watcher's own
// log, status and clock, so each part is a plain function over them.
import type { RegistryRepo } from '../../types.js';
import type { ControlPorts } from '../../ports.js';
import type { LockDeps } from '../../lock.js';
import type { Install } from '../repo-user/index.js';
import type { Spool } from '../jobs/index.js';
import type { WatchStatus } from './status.js';

export type LogEvent = { readonly event: string; readonly repo: string } & Record<string, unknown>;

export interface WatchDeps extends ControlPorts {
  readonly install: Install;
  readonly state: string;
  readonly registryFile: string;
  log(event: LogEvent): void;
  /** How long a stopping watcher lets the current run finish before interrupting it. */
  readonly stopGraceMs: number;
  /** After interrupting: how long orchestrate gets before its groups are killed. */
  readonly killAfterMs: number;
  readonly maxAttempts?: number;
  /**
   * Throws, naming what is missing, when the repo's egress lock or proxy is not in place (cli/isolation-check.ts);
   * absent with --no-isolation.
   */
  readonly checkIsolation?: (repo: RegistryRepo) => Promise<void>;
  /** The agents of a repo running now, for its metrics (cli/watch.ts: the fleet's count). */
  readonly runningAgents: (repo: RegistryRepo) => Promise<number>;
}

/** One watcher as its parts see it. */
export interface WatcherContext {
  readonly deps: WatchDeps;
  readonly name: string;
  readonly spool: Spool;
  /** Built once: every lock the watcher takes or clears uses them. */
  readonly lockDeps: LockDeps;
  now(): string;
  log(event: string, fields?: Record<string, unknown>): void;
  setStatus(change: Partial<WatchStatus>): Promise<void>;
  /** Error text with the repo user's credentials taken out, for the journal and watch.json. */
  redacted(repo: RegistryRepo | undefined, message: string): Promise<string>;
  /** A stop was asked for: no new run starts. */
  stopping(): boolean;
}
