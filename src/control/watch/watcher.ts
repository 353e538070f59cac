// The watch loop of one repo: on each scheduled tick, run a queued job or a
// drain when the board has ready work; on start, repair what a crashed
// predecessor left (stale locks, the processes of a run marked running,
// those runs, jobs in running/); on stop, finish the current run or, after a grace
// period, interrupt it. A broken repo is logged and skipped every tick; it
// never throws out of tick().
import type { Registry, RegistryRepo } from '../../types.js';
import { BusyError, EXIT, ExitError } from '../../errors.js';
import { CachedRegistry } from '../registry/index.js';
import { acquireLock, clearDeadLock } from '../../lock.js';
import { runLockPath, watchLockPath } from '../../paths.js';
import { DEFAULT_MAX_ATTEMPTS, describeWork, jobTask, orchestrateArgsFor, Spool, type Job, createPromptTask } from '../jobs/index.js';
import { tasksLandedInRun, BoardSnapshot } from '../repo-view/index.js';
import { decideTick, needsBoard } from './tick.js';
import { dispatchRun, StopRequest, runUnitPattern, stopUnitCommand, systemdIsRunning, describeSweep, endRunProcesses } from '../dispatch/index.js';
import { latestRuns, writeRun, type RunRecord } from '../runs/index.js';
import { writeWatchStatus, type WatchStatus } from './status.js';
import type { ControlPorts, HeldLock } from '../../ports.js';
import { repoUser, repoUserSecrets, type Install } from '../repo-user/index.js';
import { afterPublishedDrain } from '../pull-request/index.js';
import { readPause } from './pause.js';
import { applyDailyRetention } from '../retention/index.js';
import { clockTime, spendHold, appendLedger, sealRun } from '../ledger/index.js';
import { RemotePoller } from './remote.js';
import { redactSecrets } from '../../agent/secrets.js';

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
  /** Throws, naming what is missing, when the repo's egress lock or proxy is not in place (cli/isolation-check.ts); absent with --no-isolation. */
  readonly checkIsolation?: (repo: RegistryRepo) => Promise<void>;
}

const HEARTBEAT_MS = 15_000;
/** How many of a repo's runs a restart checks for "still marked running". */
const RECENT_RUNS = 20;

export class RepoWatcher {
  private watchLock: HeldLock | undefined;
  private task: { stop(): void } | undefined;
  private schedule: string | undefined;
  private current: { promise: Promise<void>; stop: StopRequest } | undefined;
  private stopping = false;
  private status: WatchStatus;
  private readonly spool: Spool;
  private snapshot: BoardSnapshot | undefined;
  private poller: RemotePoller | undefined;

  constructor(
    private readonly deps: WatchDeps,
    readonly name: string,
    pid: number,
  ) {
    this.spool = new Spool(deps.fs, deps.state, name);
    this.status = { repo: name, state: 'starting', pid, heartbeat: this.now() };
  }

  private now(): string {
    return new Date(this.deps.clock.now()).toISOString();
  }

  private log(event: string, fields: Record<string, unknown> = {}): void {
    this.deps.log({ event, repo: this.name, ...fields });
  }

  private async setStatus(change: Partial<WatchStatus>): Promise<void> {
    this.status = { ...this.status, ...change, heartbeat: this.now() };
    await writeWatchStatus(this.deps.fs, this.deps.state, this.status).catch((error: Error) => this.log('status-write-failed', { error: error.message }));
  }

  /** Takes the watch lock (BusyError when another watcher has it), repairs, schedules. */
  async start(repo: RegistryRepo): Promise<void> {
    const lockDeps = { locks: this.deps.locks, process: this.deps.process, clock: this.deps.clock };
    const cleared = await clearDeadLock(lockDeps, watchLockPath(this.deps.state, this.name));
    if (cleared.cleared) this.log('stale-lock-cleared', { lock: 'watch', holderPid: cleared.holder?.pid });
    this.watchLock = await acquireLock(lockDeps, watchLockPath(this.deps.state, this.name), { command: `watch ${this.name}`, wait: false, what: `the watcher of repo "${this.name}"` });
    await this.spool.ensure();
    await this.recover(repo);
    this.reschedule(repo.schedule);
    this.poller = this.remotePoller();
    this.poller.start(repo.remotePollSec);
    await this.setStatus({ state: 'idle' });
    this.log('watching', { schedule: repo.schedule, remotePollSec: repo.remotePollSec });
  }

  private reschedule(expression: string): void {
    if (this.schedule === expression) return;
    this.task?.stop();
    this.schedule = expression;
    this.task = this.deps.scheduler.schedule(expression, () => this.tick());
  }

  /** After a crash: stale run lock, orphaned process groups, runs still marked running, jobs left in running/. */
  private async recover(repo: RegistryRepo): Promise<void> {
    const lockDeps = { locks: this.deps.locks, process: this.deps.process, clock: this.deps.clock };
    const cleared = await clearDeadLock(lockDeps, runLockPath(this.deps.state, this.name));
    if (cleared.cleared) this.log('stale-lock-cleared', { lock: 'run', holderPid: cleared.holder?.pid, holderCommand: cleared.holder?.command });
    let runLock: HeldLock | undefined;
    try {
      runLock = await acquireLock(lockDeps, runLockPath(this.deps.state, this.name), { command: `watch ${this.name} (recovering)`, wait: false, what: `repo "${this.name}"` });
    } catch (error) {
      if (!(error instanceof BusyError)) throw error;
      // A live dispatch owns the repo: its runs and agents are not orphans.
      this.log('recovery-deferred', { reason: error.message });
    }
    if (runLock) {
      try {
        const orphans = (await latestRuns(this.deps.fs, this.deps.state, this.name, RECENT_RUNS)).filter((run) => run.status === 'running');
        if (orphans.length) await this.endLeftovers(repo, orphans);
        for (const run of orphans) {
          const record: RunRecord = { ...run, status: 'interrupted', outcome: 'interrupted', endedAt: this.now(), detail: 'the runner died mid-run (watcher restarted); its processes were ended' };
          await writeRun(this.deps.fs, this.deps.state, record);
          // Its sessions were never reported: the ledger says unknown, not nothing.
          await appendLedger(this.deps.fs, this.deps.state, this.name, sealRun({ repo: this.name, runId: run.id, startedAt: run.startedAt, endedAt: record.endedAt!, summary: undefined, sealedAt: record.endedAt! }));
          this.log('run-interrupted', { runId: run.id });
        }
      } finally {
        await runLock.release();
      }
    }
    const runs = await latestRuns(this.deps.fs, this.deps.state, this.name, RECENT_RUNS);
    const landedIn = async (job: Job): Promise<string | undefined> => {
      const taskId = jobTask(job);
      const run = runs.find((candidate) => candidate.jobId === job.id);
      if (!taskId || !run) return undefined;
      const landed = await tasksLandedInRun(this.deps.process, repo.path, run.id);
      return landed.some((id) => id.toLowerCase() === taskId.toLowerCase()) ? run.id : undefined;
    };
    for (const action of await this.spool.recover(this.now(), this.deps.maxAttempts ?? DEFAULT_MAX_ATTEMPTS, landedIn)) {
      const event = { requeue: 'job-requeued', landed: 'job-landed-before-restart', 'give-up': 'job-gave-up', 'drop-duplicate': 'job-duplicate-dropped' }[action.action];
      this.log(event, { jobId: action.id, ...(action.action === 'landed' ? { runId: action.runId, detail: action.detail } : {}) });
    }
  }

  /**
   * Runs died with their runner: their processes are the repo user's. End
   * them all (the run units too, under systemd), never by pids read from
   * records: a record says THAT a run was in flight, not what to kill.
   */
  private async endLeftovers(repo: RegistryRepo, orphans: readonly RunRecord[]): Promise<void> {
    const runs = orphans.map((run) => run.id);
    let user;
    try {
      user = await repoUser(this.deps, repo);
    } catch (error) {
      this.log('leftovers-not-ended', { runs, error: (error as Error).message });
      return;
    }
    const units = (await systemdIsRunning(this.deps.fs)) ? stopUnitCommand(runUnitPattern(this.name)) : undefined;
    const sweep = await endRunProcesses(this.deps, units, user, this.deps.killAfterMs);
    this.log('leftovers-ended', { runs, found: sweep.found, killed: sweep.killed, survivors: sweep.survivors, detail: describeSweep(sweep) });
  }

  /** One tick. Never throws: a broken repo is logged and skipped. */
  async tick(): Promise<void> {
    // Ticks come from the schedule and from the remote poller: one at a time, or an idle tick's
    // slow work (the daily retention pass) would run twice.
    if (this.stopping || this.current || this.ticking) return;
    this.ticking = true;
    try {
      await this.tickOnce();
    } finally {
      this.ticking = false;
    }
  }

  private ticking = false;

  private async tickOnce(): Promise<void> {
    const at = this.now();
    let repo: RegistryRepo | undefined;
    try {
      const registry = await this.registry();
      repo = registry.repos.find((candidate) => candidate.name === this.name);
      if (!repo) throw new ExitError(`repo "${this.name}" is no longer in ${this.deps.registryFile}; stop its unit: systemctl disable --now agent-runner-watch@${this.name}`, 2);
      this.reschedule(repo.schedule);
      const queued = (await this.spool.ids('queue')).length;
      const paused = (await readPause(this.deps.fs, this.deps.state, this.name)) !== undefined;
      let ready: readonly string[] | undefined;
      let boardError: string | undefined;
      if (needsBoard({ enabled: repo.enabled, paused, running: false, stopping: false, queued })) {
        if (!this.snapshot || this.snapshotFor !== `${repo.path}\n${repo.baseBranch}`) {
          this.snapshot = new BoardSnapshot(this.deps.process, repo.path, repo.baseBranch);
          this.snapshotFor = `${repo.path}\n${repo.baseBranch}`;
        }
        try {
          ready = (await this.snapshot.summary()).ready;
        } catch (error) {
          boardError = (error as Error).message;
        }
      }
      const action = decideTick({ enabled: repo.enabled, paused, running: false, stopping: this.stopping, queued, ready, ...(boardError === undefined ? {} : { boardError }) });
      if (action.kind === 'broken') throw new Error(action.reason);
      const starts = action.kind === 'run-job' || action.kind === 'drain';
      if (starts && (await this.held(repo, at))) return;
      // Checked before every start, not once: an egress lock flushed or a proxy that died stops new runs until it is back.
      if (starts) await this.deps.checkIsolation?.(repo);
      if (action.kind === 'run-job') this.begin(repo, undefined);
      else if (action.kind === 'drain') {
        this.log('drain-starting', { ready: action.ready });
        this.begin(repo, ['--drain']);
      } else {
        await this.setStatus({ lastTick: at });
        // Nothing started: a quiet moment for the daily retention pass.
        if (!this.stopping) await applyDailyRetention({ ...this.deps, log: (event, fields) => this.log(event, fields) }, repo);
      }
    } catch (error) {
      const message = await this.redacted(repo, error instanceof Error ? error.message : String(error));
      this.log('repo-skipped', { error: message });
      await this.setStatus({ lastTick: at, lastError: { at, message } });
    }
  }

  /**
   * Error text can quote what the repo user wrote (git prints the gitdir a
   * .git file names, or a remote URL, whole): redacted with the credentials
   * in its home before the journal and watch.json, like every other sink.
   * Without a readable home there is nothing known to redact.
   */
  private async redacted(repo: RegistryRepo | undefined, message: string): Promise<string> {
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
    const hold = await spendHold(this.deps.fs, this.deps.state, repo, this.deps.clock.now(), this.status.rateLimitUntil);
    if (hold?.reason !== this.status.hold?.reason) this.log(hold ? 'held' : 'hold-lifted', hold ? { reason: hold.reason, until: hold.until } : {});
    await this.setStatus({ lastTick: at, hold });
    return hold !== undefined;
  }

  /** Origin's base, asked every remote_poll_sec while idle; a move ticks at once (remote.ts). */
  private remotePoller(): RemotePoller {
    return new RemotePoller({
      clock: this.deps.clock,
      ports: this.deps,
      repo: async () => (await this.registry()).repos.find((candidate) => candidate.name === this.name),
      busy: () => this.stopping || this.current !== undefined,
      onMoved: () => this.tick(),
      log: (event, fields) => this.log(event, fields),
      redact: (repo, message) => this.redacted(repo, message),
    });
  }

  private snapshotFor: string | undefined;
  /** The registry, parsed again only when its text changed, a broken one too (an idle tick should cost next to nothing). */
  private cachedRegistry: CachedRegistry | undefined;

  private registry(): Promise<Registry> {
    this.cachedRegistry ??= new CachedRegistry(this.deps, this.deps.registryFile);
    return this.cachedRegistry.read();
  }

  /** Starts a run in the background; tick() returns at once so other repos go on. */
  private begin(repo: RegistryRepo, drainArgs: string[] | undefined): void {
    const stop = new StopRequest();
    const promise = this.runOnce(repo, drainArgs, stop).finally(() => {
      this.current = undefined;
    });
    this.current = { promise, stop };
  }

  /** Resolves when the current run (if any) has ended. */
  async idle(): Promise<void> {
    await this.current?.promise;
  }

  private async runOnce(repo: RegistryRepo, drainArgs: string[] | undefined, stop: StopRequest): Promise<void> {
    const lockDeps = { locks: this.deps.locks, process: this.deps.process, clock: this.deps.clock };
    let lock: HeldLock;
    try {
      lock = await acquireLock(lockDeps, runLockPath(this.deps.state, this.name), {
        command: `watch ${this.name}`,
        wait: false,
        what: `repo "${this.name}"`,
        onCompromised: (error) => this.log('lock-lost', { error: error.message }),
      });
    } catch (error) {
      if (error instanceof BusyError) {
        this.log('busy', { reason: error.message });
        await this.setStatus({ lastTick: this.now() });
        return;
      }
      throw error;
    }
    let job: Job | undefined;
    const heartbeat = { timer: undefined as { cancel(): void } | undefined };
    const beat = () => {
      heartbeat.timer = this.deps.clock.setTimer(HEARTBEAT_MS, () => {
        void this.setStatus({}).then(beat);
      });
    };
    try {
      // The job is claimed under the lock: a busy repo leaves it queued.
      if (!drainArgs) {
        job = await this.spool.claimNext(this.now());
        if (!job) return;
        this.log('job-starting', { jobId: job.id, work: describeWork(job.work), attempt: job.attempt });
      }
      const runId = this.deps.ids.next();
      await this.setStatus({ state: 'running', runId, runStartedAt: this.now(), lastTick: this.now(), ...(job ? { jobId: job.id } : { jobId: undefined }) });
      beat();
      let args = drainArgs ?? [];
      if (job) {
        let taskId = job.taskId;
        if (job.work.kind === 'prompt' && taskId === undefined) {
          taskId = await createPromptTask(this.deps, repo, job);
          job = { ...job, taskId };
          await this.spool.update(job);
          this.log('prompt-task-created', { jobId: job.id, taskId });
        }
        args = orchestrateArgsFor(job.work, taskId);
      }
      const record = await dispatchRun(
        { ...this.deps, killAfterMs: this.deps.killAfterMs },
        { repo, state: this.deps.state, install: this.deps.install, orchestrateArgs: args, trigger: job ? 'job' : 'watch', ...(job ? { jobId: job.id } : {}), progress: 'json', runId },
        {
          onStderrLine: (line) => this.relay(line),
          onSweep: (sweep) => {
            if (sweep.found) this.log('leftovers-ended', { runId, found: sweep.found, killed: sweep.killed, survivors: sweep.survivors, detail: describeSweep(sweep) });
          },
        },
        stop,
      );
      this.log('run-finished', { runId, outcome: record.outcome, exitCode: record.exitCode, tasks: (record.tasks ?? []).map((task) => `${task.id}:${task.outcome}`) });
      if (record.pushed) await afterPublishedDrain({ ...this.deps, now: () => this.now() }, repo, (event, fields) => this.log(event, fields));
      if (job) {
        if (record.status === 'interrupted') {
          // Stopped by the operator: back to the queue, the attempt counted.
          await this.deps.fs.rename(`${this.spoolPath('running', job.id)}`, `${this.spoolPath('queue', job.id)}`);
          this.log('job-requeued', { jobId: job.id });
        } else {
          await this.spool.finish(job, { outcome: record.exitCode === EXIT.ok ? 'succeeded' : 'failed', runId, exitCode: record.exitCode ?? -1, finishedAt: this.now(), ...(record.detail ? { detail: record.detail } : {}) });
        }
      }
      await this.setStatus({ state: this.stopping ? 'stopping' : 'idle', runId: undefined, jobId: undefined, runStartedAt: undefined, lastResult: { runId, outcome: record.outcome ?? record.status, exitCode: record.exitCode, endedAt: record.endedAt }, lastError: undefined });
    } catch (error) {
      const message = await this.redacted(repo, error instanceof Error ? error.message : String(error));
      this.log('run-failed', { error: message, ...(job ? { jobId: job.id } : {}) });
      if (job) await this.spool.finish(job, { outcome: 'failed', detail: message, finishedAt: this.now() }).catch(() => undefined);
      await this.setStatus({ state: this.stopping ? 'stopping' : 'idle', runId: undefined, jobId: undefined, runStartedAt: undefined, lastError: { at: this.now(), message } });
    } finally {
      heartbeat.timer?.cancel();
      await lock.release();
    }
  }

  private spoolPath(where: 'queue' | 'running', id: string): string {
    return `${this.deps.state}/repos/${this.name}/spool/${where}/${id}.json`;
  }

  private relay(line: string): void {
    let event: Record<string, unknown>;
    try {
      event = line.startsWith('{') ? (JSON.parse(line) as Record<string, unknown>) : { event: 'log', line };
    } catch {
      event = { event: 'log', line };
    }
    const { event: name, ...rest } = event;
    // The drain's word on a rate limit only delays root's next run, bounded by the drain's own wait cap.
    if (name === 'rate-limit-wait' && typeof event.until === 'string' && !Number.isNaN(Date.parse(event.until))) {
      const until = new Date(Date.parse(event.until)).toISOString();
      void this.setStatus({ rateLimitUntil: until, hold: { reason: `waiting for rate limit until ${clockTime(until)}`, until } });
    }
    this.deps.log({ ...rest, event: `orchestrate:${String(name ?? 'log')}`, repo: this.name });
  }

  /**
   * Stops at the next run boundary: nothing new starts; a run in progress
   * gets stopGraceMs to finish, then orchestrate is told to stop (it ends its
   * agents), and after killAfterMs its groups are killed.
   */
  async stop(): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    this.task?.stop();
    this.poller?.stop();
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
    await this.watchLock?.release();
    this.log('stopped');
  }
}
