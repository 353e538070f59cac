// One run a watcher starts, in named steps: take the repo's run lock (busy:
// nothing starts), claim the queued job (a busy repo leaves it queued), say
// so in watch.json and keep its heartbeat going, turn the job into
// orchestrate's arguments (a prompt first becomes a task), dispatch the run
// as the repo user, keep the staging pull request current, settle the job,
// and record the result. Never throws: a failed run is logged and recorded.
import type { RegistryRepo } from '../../types.js';
import { BusyError, EXIT } from '../../errors.js';
import { acquireLock } from '../../lock.js';
import { runLockPath } from '../../paths.js';
import type { HeldLock } from '../../ports.js';
import { describeWork, orchestrateArgsFor, type Job, createPromptTask } from '../jobs/index.js';
import { dispatchRun, describeSweep, type StopRequest } from '../dispatch/index.js';
import type { RunRecord } from '../runs/index.js';
import { afterPublishedDrain } from '../pull-request/index.js';
import { clockTime } from '../ledger/index.js';
import type { WatcherContext } from './deps.js';

const HEARTBEAT_MS = 15_000;

/** What the watcher runs: a drain (its orchestrate arguments), or the next queued job. */
export type RunRequest = { readonly kind: 'drain'; readonly args: readonly string[] } | { readonly kind: 'job' };

export async function runOnce(
  context: WatcherContext,
  repo: RegistryRepo,
  request: RunRequest,
  stop: StopRequest,
): Promise<void> {
  const lock = await takeRunLock(context);
  if (!lock) return;
  let job: Job | undefined;
  const heartbeat = new Heartbeat(context);
  try {
    if (request.kind === 'job') {
      job = await claimJob(context);
      if (!job) return;
    }
    const runId = context.deps.ids.next();
    await context.setStatus({
      state: 'running',
      runId,
      runStartedAt: context.now(),
      lastTick: context.now(),
      jobId: job?.id,
    });
    heartbeat.start();
    let args: readonly string[] = request.kind === 'drain' ? request.args : [];
    if (job) ({ job, args } = await argsForJob(context, repo, job));
    const record = await dispatch(context, repo, { args, runId, job }, stop);
    if (record.pushed)
      await afterPublishedDrain({ ...context.deps, now: () => context.now() }, repo, (event, fields) =>
        context.log(event, fields),
      );
    if (job) await settleJob(context, job, record, runId);
    await context.setStatus({
      ...notRunning(context),
      lastResult: {
        runId,
        outcome: record.outcome ?? record.status,
        exitCode: record.exitCode,
        endedAt: record.endedAt,
      },
      lastError: undefined,
    });
  } catch (error) {
    const message = await context.redacted(repo, error instanceof Error ? error.message : String(error));
    context.log('run-failed', { error: message, ...(job ? { jobId: job.id } : {}) });
    if (job)
      await context.spool
        .finish(job, { outcome: 'failed', detail: message, finishedAt: context.now() })
        .catch(() => undefined);
    await context.setStatus({ ...notRunning(context), lastError: { at: context.now(), message } });
  } finally {
    heartbeat.cancel();
    await lock.release();
  }
}

/** The repo's run lock, or undefined (logged) when a dispatch or another run holds it. */
async function takeRunLock(context: WatcherContext): Promise<HeldLock | undefined> {
  try {
    return await acquireLock(context.lockDeps, runLockPath(context.deps.state, context.name), {
      command: `watch ${context.name}`,
      wait: false,
      what: `repo "${context.name}"`,
      onCompromised: (error) => context.log('lock-lost', { error: error.message }),
    });
  } catch (error) {
    if (!(error instanceof BusyError)) throw error;
    context.log('busy', { reason: error.message });
    await context.setStatus({ lastTick: context.now() });
    return undefined;
  }
}

/** The oldest queued job, claimed under the run lock. */
async function claimJob(context: WatcherContext): Promise<Job | undefined> {
  const job = await context.spool.claimNext(context.now());
  if (job) context.log('job-starting', { jobId: job.id, work: describeWork(job.work), attempt: job.attempt });
  return job;
}

/** orchestrate's arguments for a job; a prompt becomes a task first (recorded on the job, so a retry reuses it). */
async function argsForJob(
  context: WatcherContext,
  repo: RegistryRepo,
  job: Job,
): Promise<{ job: Job; args: readonly string[] }> {
  if (job.work.kind !== 'prompt' || job.taskId !== undefined)
    return { job, args: orchestrateArgsFor(job.work, job.taskId) };
  const taskId = await createPromptTask(context.deps, repo, job);
  const withTask = { ...job, taskId };
  await context.spool.update(withTask);
  context.log('prompt-task-created', { jobId: job.id, taskId });
  return { job: withTask, args: orchestrateArgsFor(job.work, taskId) };
}

async function dispatch(
  context: WatcherContext,
  repo: RegistryRepo,
  run: { args: readonly string[]; runId: string; job: Job | undefined },
  stop: StopRequest,
): Promise<RunRecord> {
  const { deps } = context;
  const { runId, job } = run;
  const record = await dispatchRun(
    deps,
    {
      repo,
      state: deps.state,
      install: deps.install,
      orchestrateArgs: [...run.args],
      trigger: job ? 'job' : 'watch',
      ...(job ? { jobId: job.id } : {}),
      progress: 'json',
      runId,
    },
    {
      onStderrLine: (line) => relayProgress(context, line),
      onSweep: (sweep) => {
        if (sweep.found)
          context.log('leftovers-ended', {
            runId,
            found: sweep.found,
            killed: sweep.killed,
            survivors: sweep.survivors,
            detail: describeSweep(sweep),
          });
      },
    },
    stop,
  );
  context.log('run-finished', {
    runId,
    outcome: record.outcome,
    exitCode: record.exitCode,
    tasks: (record.tasks ?? []).map((task) => `${task.id}:${task.outcome}`),
    ...(record.detail ? { detail: record.detail } : {}),
  });
  return record;
}

/** A job's end: back to the queue when the operator stopped the run (the attempt counted), else done or failed. */
async function settleJob(context: WatcherContext, job: Job, record: RunRecord, runId: string): Promise<void> {
  if (record.status === 'interrupted') {
    await context.spool.requeue(job);
    context.log('job-requeued', { jobId: job.id });
    return;
  }
  const outcome = record.exitCode === EXIT.ok ? 'succeeded' : 'failed';
  await context.spool.finish(job, {
    outcome,
    runId,
    exitCode: record.exitCode ?? -1,
    finishedAt: context.now(),
    ...(record.detail ? { detail: record.detail } : {}),
  });
  context.log('job-finished', { jobId: job.id, outcome, runId, ...(record.detail ? { detail: record.detail } : {}) });
}

function notRunning(context: WatcherContext) {
  return {
    state: context.stopping() ? 'stopping' : 'idle',
    runId: undefined,
    jobId: undefined,
    runStartedAt: undefined,
  } as const;
}

/** orchestrate's progress lines, relayed to the journal; its word on a rate limit holds the watcher's next run. */
function relayProgress(context: WatcherContext, line: string): void {
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
    void context.setStatus({
      rateLimitUntil: until,
      hold: { reason: `waiting for rate limit until ${clockTime(until)}`, until },
    });
  }
  context.deps.log({ ...rest, event: `orchestrate:${String(name ?? 'log')}`, repo: context.name });
}

/**
 * watch.json rewritten every HEARTBEAT_MS while a run is in flight, so fleet can tell a live watcher from a dead one.
 */
class Heartbeat {
  private timer: { cancel(): void } | undefined;
  private cancelled = false;

  constructor(private readonly context: WatcherContext) {}

  start(): void {
    this.timer = this.context.deps.clock.setTimer(HEARTBEAT_MS, () => {
      void this.context.setStatus({}).then(() => {
        if (!this.cancelled) this.start();
      });
    });
  }

  cancel(): void {
    this.cancelled = true;
    this.timer?.cancel();
  }
}
