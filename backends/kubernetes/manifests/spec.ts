// What the manifest builders are given, and the names and places both halves
// of the Kubernetes backend agree on: object names, the result ref, the
// paths inside a pod, the Secret's key for the push token. Pure.
import { createHash } from 'node:crypto';
import type { RepoKubernetes, RunLimits } from '../../../src/types.js';
import { FailedError } from '../../../src/errors.js';

/** One task attempt as the drain runs it in a cluster. */
export interface TaskAttempt {
  /** The registry's repo name. */
  readonly repo: string;
  readonly run: string;
  readonly task: string;
  /** 1-based, as the drain counts attempts. */
  readonly attempt: number;
}

/** Everything the Job of one task attempt is built from. */
export interface TaskJobSpec extends TaskAttempt {
  readonly kubernetes: RepoKubernetes;
  /** The repo's run limits: memory_max is each pod's memory, cpu_weight its CPU request. */
  readonly limits: RunLimits;
  /** activeDeadlineSeconds: the attempt's wall-clock bound (the Job then fails with DeadlineExceeded). */
  readonly deadlineSec: number;
  /** The task's base: the branch the clone step checks out from the fetch endpoint, and the commit it must be. */
  readonly base: { readonly branch: string; readonly commit: string };
  /** The task worker's argv in the image. */
  readonly worker: readonly string[];
  /** Non-secret environment of the agent container (the registry's env, the agent's settings). */
  readonly env: Readonly<Record<string, string>>;
  /** The keys of the attempt's Secret, each given to the agent container alone as the variable of that name. */
  readonly secretKeys: readonly string[];
}

/** The attempt's Secret: the agent's credential (or the broker's capability) and the push token. */
export interface TaskSecretSpec extends TaskAttempt {
  readonly namespace: string;
  /** Variable name -> value; names are environment variable names. */
  readonly values: Readonly<Record<string, string>>;
}

/** The repo's NetworkPolicy is built from its settings alone. */
export interface RepoPolicySpec {
  readonly repo: string;
  readonly kubernetes: RepoKubernetes;
}

/** Who the runner is in the cluster: the kubeconfig's user, or the service account of the runner's pod. */
export type RunnerSubject =
  | { readonly kind: 'User'; readonly name: string }
  | { readonly kind: 'ServiceAccount'; readonly name: string; readonly namespace: string };

export interface RunnerRoleSpec {
  readonly namespace: string;
}

export interface RunnerRoleBindingSpec extends RunnerRoleSpec {
  readonly subject: RunnerSubject;
}

/** The Secret key holding the token that may push this attempt's result ref, and nothing else. */
export const PUSH_TOKEN_KEY = 'AGENT_RUNNER_PUSH_TOKEN';
/** Where a task's result is pushed; the runner reads it from there and takes it through the usual checks. */
export const RESULT_REF_PREFIX = 'refs/agent-runner/results';

/** The ref one attempt pushes its result to. */
export function resultRef(task: string, attempt: number): string {
  return `${RESULT_REF_PREFIX}/${task}/${attempt}`;
}

/** Paths inside the pod: the clone and the agent's work; /tmp; the agent's home. Everything else is read-only. */
export const POD_PATHS = { work: '/work', repo: '/work/repo', tmp: '/tmp', home: '/home/agent' } as const;
/** The unprivileged uid and gid the pods run as (restricted pod security: never root). */
export const POD_UID = 10001;

export const CLONE_CONTAINER = 'clone';
export const AGENT_CONTAINER = 'agent';

/** A spec the builders cannot turn into a manifest: which attempt, which field, and the fix. */
export class ManifestSpecError extends FailedError {
  constructor(attempt: TaskAttempt, field: string, problem: string, fix: string) {
    super(`task ${attempt.task} attempt ${attempt.attempt} (repo ${attempt.repo}): ${field}: ${problem}; ${fix}`);
    this.name = 'ManifestSpecError';
  }
}

const NAME_MAX = 63;

/**
 * The name of one attempt's Job and Secret: readable (repo, task, attempt) and unique (a hash of all four ids, the
 * run too), a DNS-1123 label of at most 63 characters however long the ids are.
 */
export function taskObjectName(of: TaskAttempt): string {
  const hash = createHash('sha256')
    .update(`${of.repo}\0${of.run}\0${of.task}\0${of.attempt}`)
    .digest('hex')
    .slice(0, 10);
  const tail = `-${of.attempt}-${hash}`;
  const slug = `ar-${of.repo}-${of.task}`
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .slice(0, NAME_MAX - tail.length)
    .replace(/-+$/, '');
  return `${slug}${tail}`;
}

/** The name of a repo's NetworkPolicy. */
export function repoPolicyName(repo: string): string {
  return `agent-runner-${repo}`;
}

/** The name of the runner's Role and RoleBinding in a namespace. */
export const RUNNER_ROLE_NAME = 'agent-runner-runner';
