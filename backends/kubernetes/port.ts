// The cluster as a port: what the drain asks of the Kubernetes API, in one namespace, and nothing more (the RBAC in
// docs/operations.md grants exactly these verbs: jobs, pods, pods/log, secrets). The real implementation is
// client/real-jobs.ts over @kubernetes/client-node, wired by src/main.ts only; tests point that same client at the
// loopback fake API server (test/helpers/fake-kube-api.ts).
import type { V1Job, V1Pod, V1Secret } from '@kubernetes/client-node';

/** Where the runner reaches its cluster: a kubeconfig context, or the pod's own service account. */
export type KubeTarget =
  | {
      readonly source: 'kubeconfig';
      /** The kubeconfig file (the registry's path, or $KUBECONFIG / ~/.kube/config as the caller resolved it). */
      readonly file: string;
      /** The context to use; the file's current context when absent. */
      readonly context?: string;
      readonly namespace: string;
    }
  | { readonly source: 'in-cluster'; readonly namespace: string };

/** One list: the objects and the resourceVersion a watch continues from. */
export interface Listed<T> {
  readonly items: readonly T[];
  readonly resourceVersion: string;
}

/**
 * One event of a watch, as the API server sends it. An ERROR carries a Status (410 Gone: the resourceVersion is too
 * old, list again); a BOOKMARK only moves the resourceVersion on.
 */
export type WatchEvent =
  | { readonly type: 'ADDED' | 'MODIFIED' | 'DELETED'; readonly object: V1Job }
  | { readonly type: 'BOOKMARK'; readonly resourceVersion: string }
  | { readonly type: 'ERROR'; readonly status: KubeStatus };

/** The API server's Status object, as much of it as decisions read. */
export interface KubeStatus {
  readonly code: number;
  readonly reason: string;
  readonly message: string;
}

/** A running watch or log stream. */
export interface KubeStream {
  /** Resolves when the server closed the stream or it failed (with the error); never rejects. */
  readonly ended: Promise<{ readonly error?: Error }>;
  stop(): void;
}

export interface LogRequest {
  readonly pod: string;
  readonly container: string;
  /** RFC 3339: only lines at or after this time (the API server's sinceTime, whole seconds). */
  readonly sinceTime?: string;
}

export interface DeleteOptions {
  /** Absent: the pod's own grace period (a stop); 0: at once (a kill). */
  readonly gracePeriodSeconds?: number;
}

/** The cluster operations of one namespace. Every refusal is a KubeRequestError. */
export interface KubeJobs {
  readonly namespace: string;
  createSecret(secret: V1Secret): Promise<V1Secret>;
  createJob(job: V1Job): Promise<V1Job>;
  listJobs(labelSelector: string): Promise<Listed<V1Job>>;
  /** Watches Jobs from `resourceVersion` (with bookmarks); `onEvent` gets each event in order. */
  watchJobs(labelSelector: string, resourceVersion: string, onEvent: (event: WatchEvent) => void): Promise<KubeStream>;
  listPods(labelSelector: string): Promise<Listed<V1Pod>>;
  listSecrets(labelSelector: string): Promise<Listed<V1Secret>>;
  /** Follows a container's log with timestamps (each line "RFC3339NANO text"); `onText` gets raw chunks. */
  followLog(request: LogRequest, onText: (text: string) => void): Promise<KubeStream>;
  /** Deletes a Job and, in the background, its pods. */
  deleteJob(name: string, options: DeleteOptions): Promise<void>;
  deleteSecret(name: string): Promise<void>;
}

export interface KubeConnector {
  connect(target: KubeTarget): KubeJobs;
}

/** A request the API server refused (or that never reached it: status 0). */
export class KubeRequestError extends Error {
  constructor(
    readonly status: number,
    /** "POST /apis/batch/v1/namespaces/ns/jobs" */
    readonly request: string,
    /** The Status reason (Forbidden, AlreadyExists, Invalid, NotFound, Gone), when the server gave one. */
    readonly reason: string | undefined,
    detail: string,
  ) {
    super(
      `${request}: ${status === 0 ? 'no answer' : `${status}${reason ? ` ${reason}` : ''}`}: ${detail}${fixFor(status)}`,
    );
    this.name = 'KubeRequestError';
  }
}

function fixFor(status: number): string {
  switch (status) {
    case 0:
      return '; check the cluster address in the kubeconfig and that the runner can reach it';
    case 401:
      return "; the runner's credentials were refused: renew the kubeconfig's user";
    case 403:
      return "; grant the runner's account the RBAC in docs/operations.md (jobs, pods, pods/log, secrets)";
    case 409:
      return '; an object of that name exists already (a Job of this attempt is still there): delete it or wait for its TTL';
    case 422:
      return '; the API server refused the object: a field the cluster does not accept (see its message)';
    default:
      return '';
  }
}
