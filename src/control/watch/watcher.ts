// The watch loop of one repo: on each scheduled tick, run a queued job or a
// drain when the board has ready work (run.ts); on start, repair what a
// crashed predecessor left (recover.ts); on stop, finish the current run or,
// after a grace period, interrupt it. A broken repo is logged and skipped
// every tick; it never throws out of tick().
import type { Registry, RegistryRepo } from '../../types.js';
import { ExitError } from '../../errors.js';
import { CachedRegistry } from '../registry/index.js';
import { acquireLock, clearDeadLock, type LockDeps } from '../../lock.js';
import { wakeFile, watchLockPath } from '../../paths.js';
import { Spool } from '../jobs/index.js';
import { BoardSnapshot, readGitView } from '../repo-view/index.js';
import { decideTick, needsBoard } from './tick.js';
import { StopRequest } from '../dispatch/index.js';
import { writeWatchStatus, type WatchStatus } from './status.js';
import type { HeldLock } from '../../ports.js';
import { repoUser, repoUserSecrets } from '../repo-user/index.js';
import { readPause } from './pause.js';
import { applyDailyRetention } from '../retention/index.js';
import { spendHold } from '../ledger/index.js';
import { RemotePoller } from './remote.js';
import { redactSecrets } from '../../agent/secrets.js';
import type { WatchDeps, WatcherContext } from './deps.js';
import { recoverRepo } from './recover.js';
import { runOnce, type RunRequest } from './run.js';
import { RepoNotifier } from '../notify/index.js';
import { MetricsEndpoint } from '../metrics/index.js';

export class RepoWatcher implements WatcherContext {
  readonly spool: Spool;
  readonly lockDeps: LockDeps;
  private watchLock: HeldLock | undefined;
  private task: { stop(): void } | undefined;
  private schedule: string | undefined;
  private current: { promise: Promise<void>; stop: StopRequest } | undefined;
  private isStopping = false;
  private ticking = false;
  private status: WatchStatus;
  private snapshot: { readonly key: string; readonly board: BoardSnapshot } | undefined;
  private poller: RemotePoller | undefined;
  private wakes: { close(): void } | undefined;
  /**
   * The registry, parsed again only when its text changed, a broken one too (an idle tick should cost next to nothing).
   */
  private cachedRegistry: CachedRegistry | undefined;
  /** Webhooks: told of every change below, sent from their own loop (control/notify). */
  private readonly notifier: RepoNotifier;
  /** Prometheus metrics on 127.0.0.1:metrics_port, while the registry names one. */
  private readonly metrics: MetricsEndpoint;

  constructor(
    readonly deps: WatchDeps,
    readonly name: string,
    pid: number,
  ) {
    this.spool = new Spool(deps.fs, deps.state, name);
    this.lockDeps = { locks: deps.locks, process: deps.process, clock: deps.clock };
    this.status = { repo: name, state: 'starting', pid, heartbeat: this.now() };
    this.notifier = new RepoNotifier(
      { ...deps, log: (event, fields) => this.log(event, fields), redact: (repo, text) => this.redacted(repo, text) },
      name,
    );
    this.metrics = new MetricsEndpoint(deps, {
      name,
      status: () => this.status,
      log: (event, fields) => this.log(event, fields),
    });
  }

  now(): string {
    return new Date(this.deps.clock.now()).toISOString();
  }

  log(event: string, fields: Record<string, unknown> = {}): void {
    this.deps.log({ event, repo: this.name, ...fields });
  }

  stopping(): boolean {
    return this.isStopping;
  }

  async setStatus(change: Partial<WatchStatus>): Promise<void> {
    this.status = { ...this.status, ...change, heartbeat: this.now() };
    const hold = this.status.hold;
    this.notifier.observe({
      hold: hold ? { ...hold, rateLimit: hold.until === this.status.rateLimitUntil } : null,
      runEnded: 'runId' in change && change.runId === undefined,
    });
    await writeWatchStatus(this.deps.fs, this.deps.state, this.status).catch((error: Error) =>
      this.log('status-write-failed', { error: error.message }),
    );
  }

  /** Takes the watch lock (BusyError when another watcher has it), repairs, schedules. */
  async start(repo: RegistryRepo): Promise<void> {
    const lockPath = watchLockPath(this.deps.state, this.name);
    const cleared = await clearDeadLock(this.lockDeps, lockPath);
    if (cleared.cleared) this.log('stale-lock-cleared', { lock: 'watch', holderPid: cleared.holder?.pid });
    this.watchLock = await acquireLock(this.lockDeps, lockPath, {
      command: `watch ${this.name}`,
      wait: false,
      what: `the watcher of repo "${this.name}"`,
    });
    await this.spool.ensure();
    await recoverRepo(this, repo);
    await this.notifier.start(repo);
    this.reschedule(repo.schedule);
    await this.metrics.follow(repo);
    this.poller = this.remotePoller();
    this.poller.start(repo.remotePollSec);
    this.wakes = this.watchWakes();
    const runner = await repoUser(this.deps, repo).catch(() => undefined);
    await this.setStatus({ state: 'idle', ...(runner ? { runner: { user: runner.name, home: runner.home } } : {}) });
    this.log('watching', { schedule: repo.schedule, remotePollSec: repo.remotePollSec });
  }

  private reschedule(expression: string): void {
    if (this.schedule === expression) return;
    this.task?.stop();
    this.schedule = expression;
    this.task = this.deps.scheduler.schedule(expression, () => this.tick());
  }

  /** One tick. Never throws: a broken repo is logged and skipped. */
  async tick(): Promise<void> {
    // Ticks come from the schedule and from the remote poller: one at a time, or an idle tick's
    // slow work (the daily retention pass) would run twice.
    if (this.isStopping || this.current || this.ticking) return;
    this.ticking = true;
    try {
      if (await this.tickOnce()) this.metrics.tickSucceeded();
    } finally {
      this.ticking = false;
    }
  }

  /** True when the tick did its work without an error. */
  private async tickOnce(): Promise<boolean> {
    const at = this.now();
    let repo: RegistryRepo | undefined;
    let checkingIsolation = false;
    try {
      const registry = await this.registry();
      repo = registry.repos.find((candidate) => candidate.name === this.name);
      if (!repo)
        throw new ExitError(
          `repo "${this.name}" is no longer in ${this.deps.registryFile}; stop its unit: systemctl disable --now agent-runner-watch@${this.name}`,
          2,
        );
      this.reschedule(repo.schedule);
      await this.metrics.follow(repo);
      const queued = (await this.spool.ids('queue')).length;
      const paused = (await readPause(this.deps.fs, this.deps.state, this.name)) !== undefined;
      let ready: readonly string[] | undefined;
      let boardError: string | undefined;
      if (needsBoard({ enabled: repo.enabled, paused, running: false, stopping: false, queued })) {
        try {
          ready = (await this.boardOf(repo).summary()).ready;
          await this.noteView(repo);
        } catch (error) {
          boardError = (error as Error).message;
        }
      }
      const action = decideTick({
        enabled: repo.enabled,
        paused,
        running: false,
        stopping: this.isStopping,
        queued,
        ready,
        ...(boardError === undefined ? {} : { boardError }),
      });
      if (action.kind === 'broken') throw new Error(action.reason);
      const starts = action.kind === 'run-job' || action.kind === 'drain';
      if (starts && (await this.held(repo, at))) return true;
      // Checked before every start, not once: an egress lock flushed or a proxy that died stops new runs until it is
      // back.
      checkingIsolation = starts;
      if (starts) await this.deps.checkIsolation?.(repo);
      checkingIsolation = false;
      this.notifier.observe({ repo, skipped: null });
      if (action.kind === 'run-job') this.begin(repo, { kind: 'job' });
      else if (action.kind === 'drain') {
        this.log('drain-starting', { ready: action.ready });
        this.begin(repo, { kind: 'drain', args: ['--drain'] });
      } else {
        await this.setStatus({ lastTick: at });
        // Nothing started: a quiet moment for the daily retention pass.
        if (!this.isStopping)
          await applyDailyRetention({ ...this.deps, log: (event, fields) => this.log(event, fields) }, repo);
      }
      return true;
    } catch (error) {
      const message = await this.redacted(repo, error instanceof Error ? error.message : String(error));
      this.log('repo-skipped', { error: message });
      this.notifier.observe({ ...(repo ? { repo } : {}), skipped: { message, isolation: checkingIsolation } });
      await this.setStatus({ lastTick: at, lastError: { at, message } });
      return false;
    }
  }

  /**
   * The board on origin's base, read by root as data; one snapshot per path and base, so later ticks read only what
   * changed.
   */
  private boardOf(repo: RegistryRepo): BoardSnapshot {
    const key = `${repo.path}\n${repo.baseBranch}`;
    if (this.snapshot?.key !== key)
      this.snapshot = { key, board: new BoardSnapshot(this.deps.process, repo.path, repo.baseBranch) };
    return this.snapshot.board;
  }

  /**
   * Keeps fleet's view of the repo with the status (written with the tick's
   * next status): the board just read, and staging counted again only when
   * the commits moved. A view that cannot be made is dropped, never kept stale.
   */
  private async noteView(repo: RegistryRepo): Promise<void> {
    const view = await readGitView(
      this.deps.process,
      this.boardOf(repo),
      repo.path,
      repo.baseBranch,
      this.status.view,
    ).catch(() => undefined);
    this.status = { ...this.status, view };
  }

  /**
   * Error text can quote what the repo user wrote (git prints the gitdir a
   * .git file names, or a remote URL, whole): redacted with the credentials
   * in its home before the journal and watch.json, like every other sink.
   * Without a readable home there is nothing known to redact.
   */
  async redacted(repo: RegistryRepo | undefined, message: string): Promise<string> {
    if (!repo) return message;
    try {
      const user = await repoUser(this.deps, repo);
      return redactSecrets(message, await repoUserSecrets(this.deps.fs, user.home));
    } catch {
      return message;
    }
  }

  /** A rate limit or a daily budget holds new runs: say so (once per change) and start nothing. */
  private async held(repo: RegistryRepo, at: string): Promise<boolean> {
    const hold = await spendHold(
      this.deps.fs,
      this.deps.state,
      repo,
      this.deps.clock.now(),
      this.status.rateLimitUntil,
    );
    if (hold?.reason !== this.status.hold?.reason)
      this.log(hold ? 'held' : 'hold-lifted', hold ? { reason: hold.reason, until: hold.until } : {});
    await this.setStatus({ lastTick: at, hold });
    return hold !== undefined;
  }

  /** Origin's base, asked every remote_poll_sec while idle; a move ticks at once (remote.ts). */
  private remotePoller(): RemotePoller {
    return new RemotePoller({
      clock: this.deps.clock,
      ports: this.deps,
      repo: async () => (await this.registry()).repos.find((candidate) => candidate.name === this.name),
      busy: () => this.isStopping || this.current !== undefined,
      onMoved: () => this.tick(),
      log: (event, fields) => this.log(event, fields),
      redact: (repo, message) => this.redacted(repo, message),
    });
  }

  /** The push webhook's wake file (control/pickup/): the poller's check at once, instead of at its next interval. */
  private watchWakes(): { close(): void } | undefined {
    return this.deps.wake?.watch(
      wakeFile(this.deps.state, this.name),
      () => {
        this.log('woken');
        void this.poller?.wake();
      },
      (error) => this.log('wake-watch-failed', { error: error.message }),
    );
  }

  private registry(): Promise<Registry> {
    this.cachedRegistry ??= new CachedRegistry(this.deps, this.deps.registryFile);
    return this.cachedRegistry.read();
  }

  /** Starts a run in the background; tick() returns at once so other repos go on. */
  private begin(repo: RegistryRepo, request: RunRequest): void {
    const stop = new StopRequest();
    const promise = runOnce(this, repo, request, stop).finally(() => {
      this.current = undefined;
      void this.poller?.afterRun();
    });
    this.current = { promise, stop };
  }

  /** Resolves when the current run (if any) has ended. */
  async idle(): Promise<void> {
    await this.current?.promise;
  }

  /**
   * Stops at the next run boundary: nothing new starts; a run in progress
   * gets stopGraceMs to finish, then orchestrate is told to stop (it ends its
   * agents), and after killAfterMs its groups are killed.
   */
  async stop(): Promise<void> {
    if (this.isStopping) return;
    this.isStopping = true;
    this.task?.stop();
    this.poller?.stop();
    this.wakes?.close();
    const current = this.current;
    if (current) {
      await this.setStatus({ state: 'stopping' });
      this.log('stopping', { waitingForRun: this.status.runId, graceMs: this.deps.stopGraceMs });
      const timer = this.deps.clock.setTimer(this.deps.stopGraceMs, () => {
        this.log('interrupting-run', { runId: this.status.runId });
        current.stop.request();
      });
      await current.promise;
      timer.cancel();
    }
    await this.setStatus({ state: 'stopped' });
    await this.notifier.stop();
    await this.metrics.close();
    await this.watchLock?.release();
    this.log('stopped');
  }
}
