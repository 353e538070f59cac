// The drain's Kubernetes path: each task attempt as a Job (drain/remote.ts is the seam). Per Job: a push token issued
// for its result ref, the Secret holding it and the Job built from the registry's settings, the task, the attempt
// and its base (auto/work at the task's start); the attempt runtime (jobs/attempt.ts) followed to its end, each log
// line into the task's transcript; then what the end means (verdict.ts): the result taken through the host's checks,
// a stall, a failure, or an eviction run again uncharged. The token is revoked and the Secret removed however the Job
// ended. At the drain's start the Jobs and Secrets of every other run of the repo are removed: the drain holds the
// repo's lock, so no other run of it is alive.
import type { Task } from '../../../src/types.js';
import type { RemoteAttempts, RemoteWork } from '../../../src/drain/remote.js';
import type { WorkOutcome } from '../../../src/drain/verdict/index.js';
import { redactDeep } from '../../../src/agent/secrets.js';
import { KubeRequestError } from '../port.js';
import { startAttempt, type RunningAttempt } from '../jobs/attempt.js';
import { removeDeadRuns } from '../jobs/cleanup.js';
import { PUSH_TOKEN_KEY, taskObjectName, type TaskJobSpec } from '../manifests/spec.js';
import { taskJobManifest } from '../manifests/job.js';
import { taskSecretManifest } from '../manifests/secret.js';
import { MAX_EVICTIONS, PODLESS_BOUND_MS, POD_WORKER_ARGV, type AttemptRef, type KubeTaskDeps } from './deps.js';
import { afterJob, podLineEvent, runnerNote, type JobEnd } from './verdict.js';

/** The Job's end, or the cluster's refusal to create it. */
type Ran = { readonly kind: 'ended'; readonly end: JobEnd } | { readonly kind: 'refused'; readonly reason: string };

export function kubeAttempts(deps: KubeTaskDeps): RemoteAttempts {
  const running = new Set<RunningAttempt>();
  /** The last Job number used per task in this run: an eviction's new Job never reuses a name. */
  const lastNumber = new Map<string, number>();
  let stopping: 'stop' | 'kill' | undefined;

  function nextNumber(task: string, failuresBefore: number): number {
    const number = Math.max(failuresBefore + 1, (lastNumber.get(task) ?? 0) + 1);
    lastNumber.set(task, number);
    return number;
  }

  function jobSpec(ref: AttemptRef, work: RemoteWork): TaskJobSpec {
    return {
      ...ref,
      kubernetes: deps.kubernetes,
      limits: deps.limits,
      deadlineSec: deps.deadlineSec,
      base: { branch: deps.baseBranch, commit: work.base },
      worker: deps.worker ?? POD_WORKER_ARGV,
      env: deps.workerEnv(ref, work),
      secretKeys: [PUSH_TOKEN_KEY],
    };
  }

  /** One Job from its Secret to its end. The token is revoked, and the Secret gone, when it returns. */
  async function runJob(ref: AttemptRef, work: RemoteWork): Promise<Ran> {
    const name = taskObjectName(ref);
    const token = await deps.issueToken(ref);
    let attempt: RunningAttempt | undefined;
    let end: JobEnd | undefined;
    try {
      const job = taskJobManifest(jobSpec(ref, work));
      const secret = taskSecretManifest({
        ...ref,
        namespace: deps.kubernetes.namespace,
        values: { [PUSH_TOKEN_KEY]: token },
      });
      try {
        attempt = await startAttempt({
          jobs: deps.jobs,
          job,
          secret,
          clock: deps.clock,
          podlessBoundMs: deps.podlessBoundMs ?? PODLESS_BOUND_MS,
          ...(deps.pollMs !== undefined ? { pollMs: deps.pollMs } : {}),
          ...(deps.retryMs !== undefined ? { retryMs: deps.retryMs } : {}),
          // The push token is this attempt's own secret: the drain's list does not know it.
          onLine: (line, at) => work.transcript.write(redactDeep(podLineEvent(line, at, name), [token])),
          onTrouble: (error) => work.transcript.write(runnerNote(`Job ${name}: ${error.message}`)),
        });
      } catch (error) {
        if (!(error instanceof KubeRequestError)) throw error;
        // The Secret may have been created before the Job was refused: it goes with the token.
        await gone(() => deps.jobs.deleteSecret(name), work, name);
        return { kind: 'refused', reason: `Job ${name} of task ${ref.task}: ${error.message}` };
      }
      running.add(attempt);
      work.transcript.write(
        runnerNote(
          `Job ${name} created in namespace ${deps.kubernetes.namespace} (attempt ${ref.attempt}) from ${deps.baseBranch} at ${work.base}`,
        ),
      );
      // A stop that came while the Job was being created reaches it now.
      if (stopping) void attempt.stop(stopping);
      end = await attempt.outcome;
      work.transcript.write(runnerNote(`Job ${name} ended: ${end.kind}${'reason' in end ? `: ${end.reason}` : ''}`));
      return { kind: 'ended', end };
    } finally {
      if (attempt) running.delete(attempt);
      // startAttempt deleted the Secret with the Job when it ended the Job itself; otherwise it goes here.
      const secretLeft = end !== undefined && end.kind !== 'stopped' && !(end.kind === 'failed' && end.jobActive);
      if (secretLeft) await gone(() => deps.jobs.deleteSecret(name), work, name);
      await deps
        .revokeToken(ref)
        .catch((error: unknown) =>
          work.transcript.write(runnerNote(`Job ${name}: the push token could not be revoked: ${String(error)}`)),
        );
    }
  }

  /** A delete whose 404 is fine; any other failure is said in the transcript (the next drain's sweep retries it). */
  async function gone(deletion: () => Promise<void>, work: RemoteWork, name: string): Promise<void> {
    try {
      await deletion();
    } catch (error) {
      if (error instanceof KubeRequestError && error.status === 404) return;
      work.transcript.write(runnerNote(`Secret ${name}: ${error instanceof Error ? error.message : String(error)}`));
    }
  }

  return {
    async prepare() {
      const removed = await removeDeadRuns(deps.jobs, deps.repo, new Set([deps.runId]));
      return removed.map(
        (object) =>
          `removed ${object.kind} ${object.name} of run ${object.run} from namespace ${deps.kubernetes.namespace}`,
      );
    },

    async work(task: Task, work: RemoteWork): Promise<WorkOutcome> {
      let evictions = 0;
      for (;;) {
        const ref: AttemptRef = {
          repo: deps.repo,
          run: deps.runId,
          task: task.id,
          attempt: nextNumber(task.id, work.failuresBefore),
        };
        const ran = await runJob(ref, work);
        if (ran.kind === 'refused') return { kind: 'cluster-refused', reason: ran.reason };
        const next = afterJob(ran.end, evictions, deps.maxEvictions ?? MAX_EVICTIONS);
        if (next.kind === 'ended') return next.outcome;
        if (next.kind === 'take-result') {
          const accepted = await deps.takeResult({ ...ref, base: work.base });
          return accepted.accepted ? { kind: 'done' } : { kind: 'handoff-refused', reason: accepted.reason };
        }
        evictions += 1;
        if (deps.stop.aborted || stopping)
          return { kind: 'unfinished', reason: `${next.reason}; the drain is stopping, so it is not run again` };
        work.transcript.write(runnerNote(`${next.reason}; run again as a new Job, no attempt charged`));
      }
    },

    async stopAll(how) {
      stopping = how;
      await Promise.all([...running].map((attempt) => attempt.stop(how)));
    },
  };
}
