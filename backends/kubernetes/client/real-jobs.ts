// The real cluster port: @kubernetes/client-node 1.x (2.x needs Node 22). Only src/main.ts wires it (and tests, which
// point it at the loopback fake API server). Limits it lives with: the generated API classes deserialize answers into
// their models and drop unknown fields; Watch hands over the raw JSON of each event and calls its done callback once,
// on a close or an error, without saying which; Log pipes the response body into a stream and passes on neither a
// dropped connection nor an error, so the body itself is watched through the stream's 'pipe' event; the client
// refuses plain http unless the kubeconfig skips TLS verification. Every refusal becomes a KubeRequestError that
// names the request, the API server's Status reason and message, and the fix.
import { Writable } from 'node:stream';
import { ApiException, BatchV1Api, CoreV1Api, KubeConfig, Log, Watch } from '@kubernetes/client-node';
import type { V1Job, V1Pod, V1Secret, V1Status } from '@kubernetes/client-node';
import {
  KubeRequestError,
  type DeleteOptions,
  type KubeConnector,
  type KubeJobs,
  type KubeStatus,
  type KubeStream,
  type KubeTarget,
  type Listed,
  type LogRequest,
  type WatchEvent,
} from '../port.js';

/** A KubeConfig for the target: the named context of a kubeconfig file, or the pod's service account. */
export function loadKubeConfig(target: KubeTarget): KubeConfig {
  const config = new KubeConfig();
  if (target.source === 'in-cluster') {
    config.loadFromCluster();
    return config;
  }
  config.loadFromFile(target.file);
  if (target.context !== undefined) {
    if (!config.getContextObject(target.context)) {
      const known = config.getContexts().map((context) => context.name);
      throw new Error(
        `${target.file}: no context "${target.context}" (it has ${known.length ? known.join(', ') : 'none'}): ` +
          'set [repos.NAME.kubernetes] context to one of them',
      );
    }
    config.setCurrentContext(target.context);
  }
  return config;
}

export const kubeConnector: KubeConnector = {
  connect: (target) => realKubeJobs(loadKubeConfig(target), target.namespace),
};

/** The API server's Status from an ApiException's body (a string or already parsed), if it is one. */
function statusOf(body: unknown): Partial<V1Status> | undefined {
  let parsed = body;
  if (typeof body === 'string') {
    try {
      parsed = JSON.parse(body);
    } catch {
      return undefined;
    }
  }
  return parsed && typeof parsed === 'object' && (parsed as { kind?: unknown }).kind === 'Status'
    ? (parsed as Partial<V1Status>)
    : undefined;
}

function requestError(request: string, error: unknown): KubeRequestError {
  if (error instanceof KubeRequestError) return error;
  if (error instanceof ApiException) {
    const status = statusOf(error.body);
    return new KubeRequestError(
      error.code,
      request,
      status?.reason,
      status?.message ?? (typeof error.body === 'string' && error.body ? error.body.slice(0, 500) : 'no Status'),
    );
  }
  return new KubeRequestError(0, request, undefined, error instanceof Error ? error.message : String(error));
}

async function call<T>(request: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    throw requestError(request, error);
  }
}

function kubeStatus(object: unknown): KubeStatus {
  const status = (object ?? {}) as Partial<V1Status>;
  return { code: status.code ?? 0, reason: status.reason ?? '', message: status.message ?? '' };
}

function toWatchEvent(type: string, object: unknown): WatchEvent | undefined {
  switch (type) {
    case 'ADDED':
    case 'MODIFIED':
    case 'DELETED':
      return { type, object: object as V1Job };
    case 'BOOKMARK':
      return {
        type,
        resourceVersion: (object as { metadata?: { resourceVersion?: string } }).metadata?.resourceVersion ?? '',
      };
    case 'ERROR':
      return { type, status: kubeStatus(object) };
    default:
      return undefined;
  }
}

/** A stream whose end is reported once, as data. */
function streamEnd(): { ended: Promise<{ error?: Error }>; end(error?: unknown): void } {
  let settle: (value: { error?: Error }) => void = () => undefined;
  const ended = new Promise<{ error?: Error }>((resolve) => (settle = resolve));
  let done = false;
  return {
    ended,
    end(error?: unknown) {
      if (done) return;
      done = true;
      settle(error ? { error: error instanceof Error ? error : new Error(String(error)) } : {});
    },
  };
}

export function realKubeJobs(config: KubeConfig, namespace: string): KubeJobs {
  const batch = config.makeApiClient(BatchV1Api);
  const core = config.makeApiClient(CoreV1Api);
  const jobsPath = `/apis/batch/v1/namespaces/${namespace}/jobs`;
  const podsPath = `/api/v1/namespaces/${namespace}/pods`;
  const secretsPath = `/api/v1/namespaces/${namespace}/secrets`;
  const listed = <T>(list: { items: T[]; metadata?: { resourceVersion?: string } }): Listed<T> => ({
    items: list.items,
    resourceVersion: list.metadata?.resourceVersion ?? '',
  });

  return {
    namespace,
    createSecret: (body) => call(`POST ${secretsPath}`, () => core.createNamespacedSecret({ namespace, body })),
    createJob: (body) => call(`POST ${jobsPath}`, () => batch.createNamespacedJob({ namespace, body })),
    listJobs: async (labelSelector) =>
      listed(await call(`GET ${jobsPath}`, () => batch.listNamespacedJob({ namespace, labelSelector }))),
    listPods: async (labelSelector) =>
      listed<V1Pod>(await call(`GET ${podsPath}`, () => core.listNamespacedPod({ namespace, labelSelector }))),
    listSecrets: async (labelSelector) =>
      listed<V1Secret>(await call(`GET ${secretsPath}`, () => core.listNamespacedSecret({ namespace, labelSelector }))),

    async watchJobs(labelSelector, resourceVersion, onEvent): Promise<KubeStream> {
      const end = streamEnd();
      const controller = await new Watch(config).watch(
        jobsPath,
        { labelSelector, resourceVersion, allowWatchBookmarks: true },
        (type, object) => {
          const event = toWatchEvent(type, object);
          if (event) onEvent(event);
        },
        (error: unknown) => end.end(error ? requestError(`GET ${jobsPath}?watch=true`, withCode(error)) : undefined),
      );
      return { ended: end.ended, stop: () => controller.abort() };
    },

    async followLog(request: LogRequest, onText): Promise<KubeStream> {
      const end = streamEnd();
      const sink = new Writable({
        write(chunk: Buffer, _encoding, next) {
          onText(chunk.toString('utf8'));
          next();
        },
      });
      sink.on('finish', () => end.end());
      sink.on('error', (error) => end.end(error));
      // A dropped connection errors the response body, which pipe() does not pass on: listen to the body itself.
      sink.on('pipe', (body: NodeJS.ReadableStream) => {
        body.on('error', (error: unknown) => end.end(error ?? new Error('the log stream broke off')));
        body.on('close', () => end.end());
      });
      const path = `GET ${podsPath}/${request.pod}/log`;
      const controller = await call(path, () =>
        new Log(config).log(namespace, request.pod, request.container, sink, {
          follow: true,
          timestamps: true,
          ...(request.sinceTime ? { sinceTime: request.sinceTime } : {}),
        }),
      );
      return {
        ended: end.ended,
        stop: () => {
          controller.abort();
          end.end();
        },
      };
    },

    async deleteJob(name, options: DeleteOptions) {
      await call(`DELETE ${jobsPath}/${name}`, () =>
        batch.deleteNamespacedJob({
          name,
          namespace,
          propagationPolicy: 'Background',
          ...(options.gracePeriodSeconds !== undefined ? { gracePeriodSeconds: options.gracePeriodSeconds } : {}),
        }),
      );
    },
    async deleteSecret(name) {
      await call(`DELETE ${secretsPath}/${name}`, () => core.deleteNamespacedSecret({ name, namespace }));
    },
  };
}

/** Watch's own errors carry the HTTP status as statusCode; an ApiException-like shape keeps it. */
function withCode(error: unknown): unknown {
  const code = (error as { statusCode?: unknown }).statusCode;
  return typeof code === 'number' ? new ApiException(code, String((error as Error).message), undefined, {}) : error;
}
