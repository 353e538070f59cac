// What a task attempt's Job says about the attempt: its conditions and its pod's status read into the outcomes the
// drain already knows (docs/kubernetes-runtime.md, "Outcomes"). Complete hands the pushed result to the same checks
// as on one host; the deadline is a stall; an eviction (the pod's DisruptionTarget condition, reason Evicted, or a
// Job failed by the podFailurePolicy over a disruption) is retried without charging an attempt; any other failure
// names the container, its exit code and its termination message; a bad image, or a Job left without a running pod
// past a bound, is a failure with a named reason. Termination messages are the agent's writing: one printable line,
// bounded. Pure.
import type { V1Job, V1Pod, V1ContainerStatus } from '@kubernetes/client-node';
import type { RunOutcome } from '../../../src/types.js';
import { printableLine } from '../../../src/printable.js';

export const AGENT_CONTAINER = 'agent';
export const CLONE_CONTAINER = 'clone';

export type JobOutcome =
  /** Nothing to decide yet: pending within its bound, or running. */
  | { readonly kind: 'running' }
  /** Succeeded: the result is fetched and checked as on one host. */
  | { readonly kind: 'complete' }
  /** Ran past activeDeadlineSeconds. */
  | { readonly kind: 'stalled'; readonly reason: string }
  /** The cluster took the pod away (eviction, preemption, node drain): run again, no attempt charged. */
  | { readonly kind: 'evicted'; readonly reason: string }
  /**
   * A failed attempt. `jobActive`: the Job has not ended by itself, so the runner deletes it. `agentExit`: how the
   * agent container (the task worker) ended, when it is the one that failed: its code says why (worker/exit-codes.ts).
   */
  | {
      readonly kind: 'failed';
      readonly reason: string;
      readonly jobActive: boolean;
      readonly agentExit?: { readonly code: number; readonly message: string };
    };

export interface JobFacts {
  readonly job: V1Job;
  /** The Job's pods (selected by its job-name label). */
  readonly pods: readonly V1Pod[];
  /** Milliseconds since the epoch. */
  readonly now: number;
  /** How long a Job may be without a started pod (none, unschedulable, or waiting on its image) before it fails. */
  readonly podlessBoundMs: number;
}

/** Waiting reasons that no amount of waiting ends: the image or the pod's config is wrong. */
const HOPELESS_WAITING = new Set([
  'ErrImagePull',
  'ImagePullBackOff',
  'InvalidImageName',
  'ErrImageNeverPull',
  'CreateContainerConfigError',
  'CreateContainerError',
]);

const MESSAGE_MAX = 300;

/** Agent-written text as one bounded printable line. */
function said(text: string | undefined): string {
  const line = printableLine(text ?? '').trim();
  return line.length > MESSAGE_MAX ? `${line.slice(0, MESSAGE_MAX)}...` : line;
}

const conditionTrue = (job: V1Job, type: string) =>
  job.status?.conditions?.find((condition) => condition.type === type && condition.status === 'True');

function millis(time: Date | string | undefined): number | undefined {
  if (time === undefined) return undefined;
  const value = new Date(time).getTime();
  return Number.isNaN(value) ? undefined : value;
}

function disruption(pods: readonly V1Pod[]): string | undefined {
  for (const pod of pods) {
    const target = pod.status?.conditions?.find((c) => c.type === 'DisruptionTarget' && c.status === 'True');
    if (target) return `${target.reason ?? 'DisruptionTarget'}${target.message ? `: ${said(target.message)}` : ''}`;
    if (pod.status?.reason === 'Evicted') return `Evicted${pod.status.message ? `: ${said(pod.status.message)}` : ''}`;
  }
  return undefined;
}

function statuses(pod: V1Pod): { readonly init: boolean; readonly status: V1ContainerStatus }[] {
  return [
    ...(pod.status?.initContainerStatuses ?? []).map((status) => ({ init: true, status })),
    ...(pod.status?.containerStatuses ?? []).map((status) => ({ init: false, status })),
  ];
}

/** The first container that ended badly (the clone step before the agent): in words, and the agent's own exit. */
function failedContainer(
  pods: readonly V1Pod[],
): { readonly text: string; readonly agentExit?: { code: number; message: string } } | undefined {
  for (const pod of pods)
    for (const { init, status } of statuses(pod)) {
      const ended = status.state?.terminated ?? status.lastState?.terminated;
      if (!ended || ended.exitCode === 0) continue;
      const step = init ? `the ${status.name} step` : `the ${status.name} container`;
      const signal = ended.signal ? ` (signal ${ended.signal})` : '';
      const message = said(ended.message);
      const why = [ended.reason, message].filter(Boolean).join(': ');
      const text = `${step} exited ${ended.exitCode}${signal}${why ? `: ${why}` : ''}`;
      return !init && status.name === AGENT_CONTAINER && !ended.signal
        ? { text, agentExit: { code: ended.exitCode, message } }
        : { text };
    }
  return undefined;
}

function hopelessWait(pods: readonly V1Pod[]): string | undefined {
  for (const pod of pods)
    for (const { status } of statuses(pod)) {
      const waiting = status.state?.waiting;
      if (waiting?.reason && HOPELESS_WAITING.has(waiting.reason))
        return `the ${status.name} container cannot start: ${waiting.reason}${waiting.message ? `: ${said(waiting.message)}` : ''}`;
    }
  return undefined;
}

/** Whether some pod has a container that started: from then on the deadline, not the pod bound, applies. */
function started(pods: readonly V1Pod[]): boolean {
  return pods.some((pod) => statuses(pod).some(({ status }) => status.state?.running || status.state?.terminated));
}

function unschedulable(pods: readonly V1Pod[]): string | undefined {
  for (const pod of pods) {
    const scheduled = pod.status?.conditions?.find((c) => c.type === 'PodScheduled' && c.status === 'False');
    if (scheduled)
      return `${scheduled.reason ?? 'not scheduled'}${scheduled.message ? `: ${said(scheduled.message)}` : ''}`;
  }
  return undefined;
}

/** Pure: the outcome of a task attempt's Job as far as it can be told now. */
export function jobOutcome(facts: JobFacts): JobOutcome {
  const { job, pods } = facts;
  const name = job.metadata?.name ?? 'the Job';
  if (conditionTrue(job, 'Complete') || conditionTrue(job, 'SuccessCriteriaMet')) return { kind: 'complete' };
  const failed = conditionTrue(job, 'Failed') ?? conditionTrue(job, 'FailureTarget');
  const evicted = disruption(pods);
  if (failed) {
    if (failed.reason === 'DeadlineExceeded')
      return {
        kind: 'stalled',
        reason: `Job ${name} ran past its deadline (activeDeadlineSeconds ${job.spec?.activeDeadlineSeconds ?? '?'})`,
      };
    if (evicted) return { kind: 'evicted', reason: `Job ${name}: its pod was evicted (${evicted})` };
    const container = failedContainer(pods);
    const detail =
      container?.text ?? `${failed.reason ?? 'Failed'}${failed.message ? `: ${said(failed.message)}` : ''}`;
    return {
      kind: 'failed',
      reason: `Job ${name} failed: ${detail}`,
      jobActive: false,
      ...(container?.agentExit ? { agentExit: container.agentExit } : {}),
    };
  }
  const hopeless = hopelessWait(pods);
  if (hopeless)
    return {
      kind: 'failed',
      reason: `Job ${name}: ${hopeless}; check [repos.NAME.kubernetes] image and that the cluster can pull it`,
      jobActive: true,
    };
  // A disrupted pod under a podFailurePolicy Ignore: the Job controller makes a new pod, uncharged; keep waiting.
  if (started(pods)) return { kind: 'running' };
  const created = millis(job.metadata?.creationTimestamp);
  if (created !== undefined && facts.now - created > facts.podlessBoundMs) {
    const seconds = Math.round(facts.podlessBoundMs / 1000);
    const why =
      pods.length === 0 ? 'no pod was created' : `its pod was never started (${unschedulable(pods) ?? 'Pending'})`;
    return {
      kind: 'failed',
      reason:
        `Job ${name}: ${why} within ${seconds} s; see \`kubectl describe job ${name}\` ` +
        '(quota, admission, scheduling or image pull)',
      jobActive: true,
    };
  }
  return { kind: 'running' };
}

/**
 * The outcome as the run loop's RunOutcome, for the verdict after the agent (verdict/after-agent.ts). Complete and
 * evicted have none: complete goes through the result's checks, evicted is run again uncharged.
 */
export function runOutcomeOf(outcome: Extract<JobOutcome, { kind: 'stalled' | 'failed' }>): RunOutcome {
  return outcome.kind === 'stalled'
    ? { kind: 'stalled', reason: outcome.reason }
    : { kind: 'agent-failed', reason: outcome.reason };
}
