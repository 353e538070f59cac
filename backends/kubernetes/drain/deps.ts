// What the drain's Kubernetes path is given: the cluster port, the repo's settings, and the pod's half of the hand-off
// as functions (the push token, the worker's environment, the pushed result taken through the host's checks), so the
// drain does not care who implements them. The CLI wires the real ones; tests pass doubles that record their calls.
import type { Acceptance } from '../../../src/handoff/accept.js';
import type { Clock } from '../../../src/ports.js';
import type { RepoKubernetes, RunLimits } from '../../../src/types.js';
import type { KubeJobs } from '../port.js';
import type { RemoteWork } from '../../../src/drain/remote.js';

/**
 * The task worker's argv in the image: the image's `agent-runner` (on its PATH) run as `pod-worker`. A constant, not a
 * registry key: the image is pinned by digest and built to run exactly this.
 */
export const POD_WORKER_ARGV: readonly string[] = ['agent-runner', 'pod-worker'];

/** How long a Job may be without a started pod before the attempt fails (quota, scheduling, image pull). */
export const PODLESS_BOUND_MS = 10 * 60 * 1000;

/** The evictions in a row one attempt is run again for, uncharged, before it counts as a failed attempt. */
export const MAX_EVICTIONS = 3;

/** One attempt's Job, as the pod's half names it. */
export interface AttemptRef {
  readonly repo: string;
  readonly run: string;
  readonly task: string;
  /** The Job's number for this task (labels, names, the result ref). */
  readonly attempt: number;
}

export interface KubeTaskDeps {
  readonly jobs: KubeJobs;
  readonly clock: Clock;
  /** The registry's repo name. */
  readonly repo: string;
  readonly runId: string;
  readonly kubernetes: RepoKubernetes;
  readonly limits: RunLimits;
  /** Each Job's activeDeadlineSeconds: the attempt's wall-clock bound. */
  readonly deadlineSec: number;
  /** The branch the clone step checks out (auto/work); the base commit is on it. */
  readonly baseBranch: string;
  /** Default POD_WORKER_ARGV. */
  readonly worker?: readonly string[];
  /** The worker's environment in the Job's spec (non-secret), for this attempt (its retry reason). */
  readonly workerEnv: (ref: AttemptRef, work: RemoteWork) => Readonly<Record<string, string>>;
  /** A token that may push this attempt's result ref and nothing else; it goes into the attempt's Secret. */
  readonly issueToken: (ref: AttemptRef) => Promise<string>;
  /** The token is no longer good: called once the attempt ended, however it ended. */
  readonly revokeToken: (ref: AttemptRef) => Promise<void>;
  /** The pushed result taken through the host's hand-off checks, as the task's branch; or why it was refused. */
  readonly takeResult: (ref: AttemptRef & { readonly base: string }) => Promise<Acceptance>;
  /** The drain's stop: no new Job (an eviction's retry) starts once it is aborted. */
  readonly stop: AbortSignal;
  readonly podlessBoundMs?: number;
  readonly maxEvictions?: number;
  /** The runtime's pauses (pods read again, a watch or log retried); tests make them short. */
  readonly pollMs?: number;
  readonly retryMs?: number;
}
