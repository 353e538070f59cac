// The per-repo job queue: one JSON file per job, moved between folders by
// atomic renames so a job is in exactly one state at any time.
//   queue/ --claim (rename)--> running/ --finish--> done/
//   running/ at watcher start (its runner died) --> done/ when its task
//   landed in the interrupted run (the landing trailers say so), else queue/
//   again with the attempt not charged, or failed/ once interrupted
//   maxAttempts times.
// Ids sort by creation time, so listing queue/ in name order is FIFO, and a
// requeued job goes back to the front.
import type { FsPort, Ids } from '../../ports.js';
import type { TaskId } from '../../types.js';
import { spoolJobFile, spoolStateDir } from '../../paths.js';
import { ensureRepoStateDir } from '../state-dirs.js';
import { UsageError } from '../../errors.js';

export type JobState = 'queue' | 'running' | 'done' | 'failed';
const JOB_STATES: readonly JobState[] = ['queue', 'running', 'done', 'failed'];

export type JobWork =
  | { readonly kind: 'task'; readonly taskId: TaskId }
  | { readonly kind: 'drain' }
  | { readonly kind: 'prompt'; readonly prompt: string };

export interface JobResult {
  readonly outcome: 'succeeded' | 'failed' | 'cancelled' | 'gave-up';
  readonly runId?: string;
  readonly exitCode?: number;
  readonly detail?: string;
  readonly finishedAt: string;
}

export interface Job {
  readonly id: string;
  readonly repo: string;
  readonly work: JobWork;
  readonly model?: string;
  readonly createdAt: string;
  /** How many of its starts count (an interrupted one does not). */
  readonly attempt: number;
  /** How many times the runner died while it ran. */
  readonly interruptions?: number;
  readonly claimedAt?: string;
  /** For prompt jobs: the task the prompt became, once it exists. */
  readonly taskId?: TaskId;
  readonly result?: JobResult;
}

export const DEFAULT_MAX_ATTEMPTS = 3;

function jobFile(state: string, repo: string, where: JobState, id: string): string {
  return spoolJobFile(state, repo, where, id);
}

const JOB_ID = /^[A-Za-z0-9._-]{1,100}$/;

function parseJob(text: string, file: string): Job {
  const job = JSON.parse(text) as Job;
  if (
    typeof job.id !== 'string' ||
    !JOB_ID.test(job.id) ||
    typeof job.work !== 'object' ||
    typeof job.attempt !== 'number'
  ) {
    throw new Error(`${file}: not a job record`);
  }
  return job;
}

function render(job: Job): string {
  return `${JSON.stringify(job, null, 2)}\n`;
}

export class Spool {
  constructor(
    private readonly fs: FsPort,
    private readonly state: string,
    private readonly repo: string,
  ) {}

  private file(where: JobState, id: string): string {
    return jobFile(this.state, this.repo, where, id);
  }

  async ensure(): Promise<void> {
    // The repo dir first, world-traversable: the repo user reaches its own state below it.
    await ensureRepoStateDir(this.fs, this.state, this.repo);
    for (const where of JOB_STATES) await this.fs.mkdirp(spoolStateDir(this.state, this.repo, where), 0o700);
  }

  /** Writes a new job into queue/ (atomically: the watcher never sees half of it). */
  async enqueue(ids: Ids, now: string, work: JobWork, model: string | undefined): Promise<Job> {
    await this.ensure();
    const job: Job = {
      id: ids.next(),
      repo: this.repo,
      work,
      ...(model === undefined ? {} : { model }),
      createdAt: now,
      attempt: 0,
    };
    await this.fs.writeAtomic(this.file('queue', job.id), render(job), 0o600);
    return job;
  }

  /** Ids in one state, oldest first. */
  async ids(where: JobState): Promise<string[]> {
    const names = await this.fs.list(spoolStateDir(this.state, this.repo, where));
    return names
      .filter((name) => name.endsWith('.json') && !name.startsWith('.'))
      .map((name) => name.slice(0, -'.json'.length))
      .sort();
  }

  async read(where: JobState, id: string): Promise<Job | undefined> {
    const file = this.file(where, id);
    const text = await this.fs.readTextIfExists(file);
    return text === undefined ? undefined : parseJob(text, file);
  }

  async list(where: JobState): Promise<Job[]> {
    const jobs: Job[] = [];
    for (const id of await this.ids(where)) {
      const job = await this.read(where, id).catch(() => undefined);
      if (job) jobs.push(job);
    }
    return jobs;
  }

  /**
   * Claims the oldest queued job: the rename is the claim, so two runners can
   * never both get it. The attempt is counted right after.
   */
  async claimNext(now: string): Promise<Job | undefined> {
    for (const id of await this.ids('queue')) {
      try {
        await this.fs.rename(this.file('queue', id), this.file('running', id));
      } catch {
        continue; // cancelled or claimed meanwhile
      }
      const job = await this.read('running', id);
      if (!job) continue;
      const claimed: Job = { ...job, attempt: job.attempt + 1, claimedAt: now };
      await this.fs.writeAtomic(this.file('running', id), render(claimed), 0o600);
      return claimed;
    }
    return undefined;
  }

  /** Records progress on a running job (e.g. the task a prompt became). */
  async update(job: Job): Promise<void> {
    await this.fs.writeAtomic(this.file('running', job.id), render(job), 0o600);
  }

  /** A running job back in the queue as it is (its attempt stays counted): the operator stopped its run. */
  async requeue(job: Job): Promise<void> {
    await this.fs.rename(this.file('running', job.id), this.file('queue', job.id));
  }

  /** done/ (or failed/) is written before running/ is removed: a crash in between is repaired by recover(). */
  async finish(job: Job, result: JobResult, where: 'done' | 'failed' = 'done'): Promise<Job> {
    const finished: Job = { ...job, result };
    await this.fs.writeAtomic(this.file(where, job.id), render(finished), 0o600);
    await this.fs.remove(this.file('running', job.id));
    return finished;
  }

  /** Cancels a queued job. A running job cannot be cancelled from here. */
  async cancel(id: string, now: string): Promise<Job> {
    if (!JOB_ID.test(id)) throw new UsageError(`"${id}" is not a job id; list them with: enqueue ${this.repo} --list`);
    const job = await this.read('queue', id);
    if (!job) {
      if (await this.read('running', id))
        throw new UsageError(
          `job ${id} of repo "${this.repo}" is running and cannot be cancelled; stop the run with: systemctl stop agent-runner-watch@${this.repo}`,
        );
      throw new UsageError(`no queued job ${id} for repo "${this.repo}"; list them with: enqueue ${this.repo} --list`);
    }
    try {
      await this.fs.rename(this.file('queue', id), this.file('running', id));
    } catch {
      throw new UsageError(`job ${id} of repo "${this.repo}" was claimed just now and cannot be cancelled`);
    }
    return this.finish(job, { outcome: 'cancelled', finishedAt: now });
  }

  /**
   * After a runner died: each job left in running/ is decided by what its
   * interrupted run landed (`landedIn`: the run that landed the job's task,
   * read from auto/work's landing trailers by the caller). Only call while
   * holding the repo's watch lock, when no runner can be working on them.
   */
  async recover(
    now: string,
    maxAttempts: number,
    landedIn: (job: Job) => Promise<string | undefined>,
  ): Promise<RecoveryAction[]> {
    const running = await this.list('running');
    const finished = new Set([...(await this.ids('done')), ...(await this.ids('failed'))]);
    const landed = new Map<string, string>();
    for (const job of running) {
      const runId = finished.has(job.id) ? undefined : await landedIn(job);
      if (runId) landed.set(job.id, runId);
    }
    const actions = decideRecovery(running, finished, maxAttempts, landed);
    for (const action of actions) {
      const job = running.find((candidate) => candidate.id === action.id)!;
      if (action.action === 'drop-duplicate') await this.fs.remove(this.file('running', job.id));
      else if (action.action === 'landed')
        await this.finish(job, { outcome: 'succeeded', runId: action.runId, detail: action.detail, finishedAt: now });
      else if (action.action === 'requeue') {
        // The interrupted start is not charged: the job goes back as it was, one interruption more.
        await this.fs.writeAtomic(
          this.file('running', job.id),
          render({ ...job, attempt: action.attempt, interruptions: action.interruptions }),
          0o600,
        );
        await this.fs.rename(this.file('running', job.id), this.file('queue', job.id));
      } else await this.finish(job, { outcome: 'gave-up', detail: action.reason, finishedAt: now }, 'failed');
    }
    return actions;
  }
}

export type RecoveryAction =
  /** Back to the queue with the interrupted start uncharged. */
  | { readonly id: string; readonly action: 'requeue'; readonly attempt: number; readonly interruptions: number }
  /** Its task landed in the interrupted run: done, never run twice. */
  | { readonly id: string; readonly action: 'landed'; readonly runId: string; readonly detail: string }
  | { readonly id: string; readonly action: 'give-up'; readonly reason: string }
  | { readonly id: string; readonly action: 'drop-duplicate' };

/**
 * Pure: what to do with jobs found in running/ when no runner is alive.
 * `landedIn` maps a job to the interrupted run that landed its task.
 */
export function decideRecovery(
  running: readonly Job[],
  finishedIds: ReadonlySet<string>,
  maxAttempts: number,
  landedIn: ReadonlyMap<string, string> = new Map(),
): RecoveryAction[] {
  return running.map((job): RecoveryAction => {
    if (finishedIds.has(job.id)) return { id: job.id, action: 'drop-duplicate' };
    const runId = landedIn.get(job.id);
    if (runId)
      return {
        id: job.id,
        action: 'landed',
        runId,
        detail: `${jobTask(job) ?? 'its task'} landed in run ${runId} before the runner died`,
      };
    const interruptions = (job.interruptions ?? 0) + 1;
    if (interruptions >= maxAttempts)
      return {
        id: job.id,
        action: 'give-up',
        reason: `interrupted ${interruptions} times (limit ${maxAttempts}); enqueue it again once the cause is fixed`,
      };
    return { id: job.id, action: 'requeue', attempt: Math.max(0, job.attempt - 1), interruptions };
  });
}

/** Pure: the task a job's work lands, when it is one task (a drain job lands whatever is ready). */
export function jobTask(job: Job): TaskId | undefined {
  return job.work.kind === 'task' ? job.work.taskId : job.taskId;
}

/** The orchestrate arguments a job's work becomes (a prompt job once it has its task). */
export function orchestrateArgsFor(work: JobWork, taskId: TaskId | undefined): string[] {
  if (work.kind === 'drain') return ['--drain'];
  if (work.kind === 'task') return ['--task', work.taskId];
  if (taskId === undefined) throw new Error('a prompt job runs only once its task exists');
  return ['--task', taskId];
}

export function describeWork(work: JobWork): string {
  if (work.kind === 'drain') return 'drain';
  if (work.kind === 'task') return `task ${work.taskId}`;
  const line = work.prompt.split('\n')[0]!;
  return `prompt "${line.length > 60 ? `${line.slice(0, 57)}...` : line}"`;
}
