// One task attempt as a Job, from its creation to its outcome: the Secret and the Job are created, the attempt's Jobs
// watched (jobs/watch.ts), its pods listed on each change and on a timer (a Job stuck without a pod sends no event),
// the agent container's log followed from its first start (jobs/logs.ts), and the first final outcome
// (jobs/verdict.ts) returned once the log is read to its end. A Job that has not ended by itself (a bad image, no pod
// past the bound) is deleted at once. The caller's stop() ends the attempt early, gracefully or as a kill.
import type { V1Job, V1Pod, V1Secret } from '@kubernetes/client-node';
import type { Clock } from '../../../src/ports.js';
import type { KubeJobs } from '../port.js';
import { ATTEMPT_LABEL, REPO_LABEL, RUN_LABEL, TASK_LABEL } from '../labels.js';
import { AGENT_CONTAINER, jobOutcome, type JobOutcome } from './verdict.js';
import { watchJobs } from './watch.js';
import { followLog, type LogFollower } from './logs.js';
import { endAttempt, type StopHow } from './cleanup.js';

export type FinalOutcome =
  Exclude<JobOutcome, { kind: 'running' }> | { readonly kind: 'stopped'; readonly how: StopHow };

export interface AttemptOptions {
  readonly jobs: KubeJobs;
  readonly job: V1Job;
  readonly secret?: V1Secret;
  readonly clock: Clock;
  readonly podlessBoundMs: number;
  /** How often pods are read again with no event (default 5000). */
  readonly pollMs?: number;
  readonly retryMs?: number;
  /** Each line of the agent container's log. */
  readonly onLine: (text: string, at: bigint) => void;
  readonly onTrouble?: (error: Error) => void;
}

export interface RunningAttempt {
  readonly outcome: Promise<FinalOutcome>;
  stop(how: StopHow): Promise<void>;
}

const agentStarted = (pod: V1Pod) =>
  (pod.status?.containerStatuses ?? []).some(
    (status) => status.name === AGENT_CONTAINER && (status.state?.running || status.state?.terminated),
  );

function attemptSelector(job: V1Job): string {
  const labels = job.metadata?.labels ?? {};
  return [REPO_LABEL, RUN_LABEL, TASK_LABEL, ATTEMPT_LABEL].map((label) => `${label}=${labels[label] ?? ''}`).join(',');
}

export async function startAttempt(options: AttemptOptions): Promise<RunningAttempt> {
  const { jobs, clock } = options;
  const name = options.job.metadata?.name ?? '';
  if (options.secret) await jobs.createSecret(options.secret);
  await jobs.createJob(options.job);

  let latest: V1Job = options.job;
  let follower: LogFollower | undefined;
  let settled = false;
  let resolve: (outcome: FinalOutcome) => void = () => undefined;
  const outcome = new Promise<FinalOutcome>((r) => (resolve = r));
  const names = { job: name, ...(options.secret?.metadata?.name ? { secret: options.secret.metadata.name } : {}) };

  async function settle(final: FinalOutcome, how?: StopHow): Promise<void> {
    if (settled) return;
    settled = true;
    await watch.stop();
    if (how) {
      // Stopped by the drain: the Job goes first; the log is not waited for (its pod is going too).
      await endAttempt(jobs, names, how);
      await follower?.stop();
    } else {
      await follower?.finish();
      if (final.kind === 'failed' && final.jobActive) await endAttempt(jobs, names, 'kill');
    }
    resolve(final);
  }

  let judging = false;
  let again = false;
  /** Reads the pods and decides; a change that arrives meanwhile is judged right after, never dropped. */
  async function judge(): Promise<void> {
    if (settled) return;
    if (judging) {
      again = true;
      return;
    }
    judging = true;
    try {
      do {
        again = false;
        await judgeOnce();
      } while (again && !settled);
    } finally {
      judging = false;
    }
  }

  async function judgeOnce(): Promise<void> {
    try {
      const pods = (await jobs.listPods(`job-name=${name}`)).items;
      const pod = pods.find(agentStarted);
      if (pod?.metadata?.name && !follower)
        follower = followLog({
          jobs,
          pod: pod.metadata.name,
          container: AGENT_CONTAINER,
          clock,
          onLine: options.onLine,
          ...(options.retryMs !== undefined ? { retryMs: options.retryMs } : {}),
          ...(options.onTrouble ? { onTrouble: options.onTrouble } : {}),
        });
      const now = jobOutcome({ job: latest, pods, now: clock.now(), podlessBoundMs: options.podlessBoundMs });
      if (now.kind !== 'running') await settle(now);
    } catch (error) {
      options.onTrouble?.(error instanceof Error ? error : new Error(String(error)));
    }
  }

  const watch = await watchJobs({
    jobs,
    labelSelector: attemptSelector(options.job),
    clock,
    ...(options.retryMs !== undefined ? { retryMs: options.retryMs } : {}),
    ...(options.onTrouble ? { onTrouble: options.onTrouble } : {}),
    onJob: (job) => {
      if (job.metadata?.name !== name) return;
      latest = job;
      void judge();
    },
  });
  void (async () => {
    while (!settled) {
      await clock.sleep(options.pollMs ?? 5000);
      await judge();
    }
  })();

  return {
    outcome,
    async stop(how) {
      await settle({ kind: 'stopped', how }, how);
    },
  };
}
