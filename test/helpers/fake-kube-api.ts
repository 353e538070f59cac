// A loopback Kubernetes API server (127.0.0.1 only) for the REST paths the runner uses: Jobs (batch/v1), Pods,
// pods/log and Secrets in namespaces, answered the way the real API server answers them: lists carry a
// resourceVersion; a watch is a chunked stream of {type, object} lines that replays what happened after the asked
// resourceVersion, sends BOOKMARKs when told, and answers a compacted (too old) resourceVersion with an ERROR event
// carrying a 410 Expired Status; refusals are Status objects (401, 403, 404, 409, 422) with the API server's
// messages; pods/log follows with timestamps and sinceTime (whole seconds, as the kubelet reads it). POSTed Jobs are
// validated with kubernetes-models' schemas; an invalid one is a 422. It writes a kubeconfig that points the REAL
// @kubernetes/client-node at it. The test plays the Job controller and the kubelet: it sets Job and pod status,
// writes log lines, closes watches, drops log streams, and reads every request received.
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { writeFileSync } from 'node:fs';
import * as path from 'node:path';
import type { Test } from 'tap';
import { Job } from 'kubernetes-models/batch/v1';

/** A stored object: plain JSON as the API server keeps it. */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: {
    name: string;
    namespace?: string;
    uid?: string;
    resourceVersion?: string;
    creationTimestamp?: string;
    labels?: Record<string, string>;
    [key: string]: unknown;
  };
  spec?: Record<string, unknown> & { template?: { metadata?: { labels?: Record<string, string> } } };
  status?: Record<string, unknown>;
  [key: string]: unknown;
}

export interface RecordedRequest {
  readonly method: string;
  /** The path without the query. */
  readonly path: string;
  readonly query: Readonly<Record<string, string>>;
  readonly body: unknown;
  readonly status: number;
}

export type Resource = 'jobs' | 'pods' | 'secrets';

interface StoredEvent {
  readonly type: 'ADDED' | 'MODIFIED' | 'DELETED';
  readonly resource: Resource;
  readonly namespace: string;
  readonly object: KubeObject;
  readonly resourceVersion: number;
}

interface OpenWatch {
  readonly resource: Resource;
  readonly namespace: string;
  readonly selector: string;
  readonly bookmarks: boolean;
  readonly response: http.ServerResponse;
}

interface LogLine {
  /** RFC 3339 with nanoseconds, as the kubelet writes it. */
  readonly time: string;
  readonly text: string;
}

interface OpenLog {
  readonly key: string;
  readonly response: http.ServerResponse;
  written: number;
}

export interface Refusal {
  readonly method: string;
  readonly path: RegExp;
  readonly status: 403 | 404 | 409 | 422 | 500;
  /** How many requests to refuse (default 1). */
  times?: number;
}

/** A change to a stored object, as a fake kubelet or Job controller sees it (DELETED carries the asked grace). */
export interface StoreChange {
  readonly type: 'ADDED' | 'MODIFIED' | 'DELETED';
  readonly resource: Resource;
  readonly namespace: string;
  readonly object: KubeObject;
  /** A DELETE's gracePeriodSeconds, when it gave one. */
  readonly gracePeriodSeconds?: number;
}

export interface FakeKubeApi {
  readonly url: string;
  readonly token: string;
  /** A kubeconfig whose context `fake` reaches this server with the token. */
  readonly kubeconfig: string;
  readonly requests: RecordedRequest[];
  /** Schema problems of POSTed objects (each was answered 422). */
  readonly problems: string[];
  job(namespace: string, name: string): KubeObject | undefined;
  jobs(namespace: string): KubeObject[];
  secrets(namespace: string): KubeObject[];
  pods(namespace: string): KubeObject[];
  /** Stores an object as if another client created it (MODIFIED/ADDED events follow). */
  put(resource: Resource, namespace: string, object: KubeObject): KubeObject;
  /** Changes a Job's status as the Job controller would; watchers see MODIFIED. */
  setJobStatus(namespace: string, name: string, status: Record<string, unknown>): void;
  /** Creates the Job's pod (labelled as the Job controller labels it) or changes its status. */
  setPod(namespace: string, jobName: string, podName: string, status: Record<string, unknown>): void;
  /** A log line of a container, at a time (RFC 3339 with nanoseconds). */
  writeLog(namespace: string, pod: string, container: string, time: string, text: string): void;
  /** The container ended: following streams end after its last line. */
  endLog(namespace: string, pod: string, container: string): void;
  /** Cuts every open log stream without ending it cleanly (a dropped connection). */
  dropLogStreams(): void;
  /** Ends every open watch, as the API server does at its watch timeout. */
  closeWatches(): void;
  /** Forgets history up to now: a watch from an older resourceVersion gets a 410 ERROR. */
  compact(): void;
  /** A BOOKMARK at the current resourceVersion to every watch that asked for them. */
  bookmark(): void;
  refuse(refusal: Refusal): void;
  /** Calls `listener` after each change to the store; returns its removal. */
  observe(listener: (change: StoreChange) => void): () => void;
  openWatches(): number;
  openLogs(): number;
  close(): Promise<void>;
}

const GROUP: Record<Resource, { group: string; kind: string; apiVersion: string }> = {
  jobs: { group: 'batch', kind: 'Job', apiVersion: 'batch/v1' },
  pods: { group: '', kind: 'Pod', apiVersion: 'v1' },
  secrets: { group: '', kind: 'Secret', apiVersion: 'v1' },
};

/** "jobs.batch" or "pods", as the API server names a resource in messages. */
const qualified = (resource: Resource) => (GROUP[resource].group ? `${resource}.${GROUP[resource].group}` : resource);

function status(code: number, reason: string, message: string, details?: Record<string, unknown>) {
  return {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message,
    reason,
    ...(details ? { details } : {}),
    code,
  };
}

const REASONS: Record<number, string> = {
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'NotFound',
  409: 'AlreadyExists',
  410: 'Expired',
  422: 'Invalid',
  500: 'InternalError',
};

/** The Status the API server writes for a refusal of `verb` on `resource`/`name`. */
function refusalStatus(code: number, verb: string, resource: Resource, namespace: string, name: string | undefined) {
  const what = qualified(resource);
  switch (code) {
    case 403:
      return status(
        403,
        'Forbidden',
        `${what}${name ? ` "${name}"` : ''} is forbidden: User "system:serviceaccount:${namespace}:agent-runner" ` +
          `cannot ${verb} resource "${resource}" in API group "${GROUP[resource].group}" in the namespace "${namespace}"`,
        { ...(name ? { name } : {}), group: GROUP[resource].group, kind: resource },
      );
    case 404:
      return status(404, 'NotFound', `${what} "${name ?? ''}" not found`, {
        name,
        group: GROUP[resource].group,
        kind: resource,
      });
    case 409:
      return status(409, 'AlreadyExists', `${what} "${name ?? ''}" already exists`, {
        name,
        group: GROUP[resource].group,
        kind: resource,
      });
    default:
      return status(code, REASONS[code] ?? 'Unknown', `the server refused ${verb} ${what}`);
  }
}

/** `k=v`, `k!=v` and `k` (exists), comma-separated: the selectors the runner sends. */
export function matchesSelector(labels: Record<string, string> | undefined, selector: string): boolean {
  if (!selector) return true;
  return selector.split(',').every((term) => {
    const not = term.indexOf('!=');
    if (not >= 0) return labels?.[term.slice(0, not)] !== term.slice(not + 2);
    const eq = term.indexOf('=');
    if (eq >= 0) return labels?.[term.slice(0, eq)] === term.slice(eq + 1).replace(/^=/, '');
    return labels?.[term] !== undefined;
  });
}

/** Seconds since the epoch and nanoseconds of an RFC 3339 time: how the kubelet compares sinceTime. */
function wholeSeconds(time: string): number {
  return Math.floor(Date.parse(time.replace(/\.\d+Z$/, 'Z')) / 1000);
}

const ROUTE =
  /^\/(?:api\/v1|apis\/batch\/v1)\/namespaces\/([a-z0-9-]+)\/(jobs|pods|secrets)(?:\/([A-Za-z0-9._-]+)(\/log)?)?$/;

export async function startFakeKubeApi(t: Test, dir: string): Promise<FakeKubeApi> {
  const token = `fake-token-${Math.random().toString(36).slice(2)}`;
  const store = new Map<string, KubeObject>();
  const history: StoredEvent[] = [];
  let resourceVersion = 100;
  let compactedAt = 0;
  const watches = new Set<OpenWatch>();
  const logs = new Map<string, { lines: LogLine[]; ended: boolean }>();
  const openLogs = new Set<OpenLog>();
  const refusals: Refusal[] = [];
  const requests: RecordedRequest[] = [];
  const problems: string[] = [];
  const observers = new Set<(change: StoreChange) => void>();
  /** The grace of the DELETE being served, told to observers with its DELETED events. */
  let deleting: number | undefined;
  const key = (resource: Resource, namespace: string, name: string) => `${resource}/${namespace}/${name}`;
  const list = (resource: Resource, namespace: string) =>
    [...store.entries()].filter(([k]) => k.startsWith(`${resource}/${namespace}/`)).map(([, object]) => object);

  function sendEvent(watch: OpenWatch, type: string, object: unknown): void {
    watch.response.write(`${JSON.stringify({ type, object })}\n`);
  }

  function record(type: StoredEvent['type'], resource: Resource, namespace: string, object: KubeObject): void {
    const event = { type, resource, namespace, object: structuredClone(object), resourceVersion };
    history.push(event);
    for (const watch of watches)
      if (
        watch.resource === resource &&
        watch.namespace === namespace &&
        matchesSelector(object.metadata.labels, watch.selector)
      )
        sendEvent(watch, type, event.object);
    const change: StoreChange = {
      type,
      resource,
      namespace,
      object: structuredClone(object),
      ...(type === 'DELETED' && deleting !== undefined ? { gracePeriodSeconds: deleting } : {}),
    };
    // After the reply is on its way: an observer's own changes come after the one it reacts to.
    queueMicrotask(() => {
      for (const observer of observers) observer(change);
    });
  }

  function save(resource: Resource, namespace: string, object: KubeObject, type: 'ADDED' | 'MODIFIED'): KubeObject {
    resourceVersion += 1;
    object.metadata.resourceVersion = String(resourceVersion);
    store.set(key(resource, namespace, object.metadata.name), object);
    record(type, resource, namespace, object);
    return object;
  }

  function create(resource: Resource, namespace: string, body: KubeObject): KubeObject {
    const object: KubeObject = structuredClone(body);
    object.apiVersion = GROUP[resource].apiVersion;
    object.kind = GROUP[resource].kind;
    object.metadata = {
      ...object.metadata,
      namespace,
      uid: `uid-${resourceVersion + 1}`,
      creationTimestamp: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
    };
    if (resource === 'jobs') object.status = {};
    return save(resource, namespace, object, 'ADDED');
  }

  function remove(resource: Resource, namespace: string, name: string): KubeObject | undefined {
    const object = store.get(key(resource, namespace, name));
    if (!object) return undefined;
    store.delete(key(resource, namespace, name));
    resourceVersion += 1;
    object.metadata.resourceVersion = String(resourceVersion);
    record('DELETED', resource, namespace, object);
    return object;
  }

  function serveWatch(
    response: http.ServerResponse,
    resource: Resource,
    namespace: string,
    query: Record<string, string>,
  ): void {
    response.writeHead(200, { 'content-type': 'application/json', 'transfer-encoding': 'chunked' });
    // The client's request resolves on the headers: send them now, as the API server does.
    response.flushHeaders();
    const from = Number(query.resourceVersion ?? '0');
    const watch: OpenWatch = {
      resource,
      namespace,
      selector: query.labelSelector ?? '',
      bookmarks: query.allowWatchBookmarks === 'true',
      response,
    };
    if (query.resourceVersion && from < compactedAt) {
      sendEvent(watch, 'ERROR', status(410, 'Expired', `too old resource version: ${from} (${compactedAt})`));
      response.end();
      return;
    }
    for (const event of history)
      if (
        event.resourceVersion > from &&
        event.resource === resource &&
        event.namespace === namespace &&
        matchesSelector(event.object.metadata.labels, watch.selector)
      )
        sendEvent(watch, event.type, event.object);
    watches.add(watch);
    response.on('close', () => watches.delete(watch));
  }

  function logKey(namespace: string, pod: string, container: string): string {
    return `${namespace}/${pod}/${container}`;
  }

  function pumpLog(open: OpenLog, since: number): void {
    const log = logs.get(open.key);
    if (!log) return;
    const lines = log.lines.filter((line) => wholeSeconds(line.time) >= since);
    for (; open.written < lines.length; open.written += 1) {
      const line = lines[open.written]!;
      open.response.write(`${line.time} ${line.text}\n`);
    }
    if (log.ended) open.response.end();
  }
  const logSince = new Map<OpenLog, number>();

  function serveLog(response: http.ServerResponse, namespace: string, pod: string, query: Record<string, string>) {
    const container = query.container ?? '';
    const k = logKey(namespace, pod, container);
    if (!store.has(key('pods', namespace, pod))) {
      answer(response, 404, refusalStatus(404, 'get', 'pods', namespace, pod));
      return;
    }
    response.writeHead(200, { 'content-type': 'text/plain', 'transfer-encoding': 'chunked' });
    response.flushHeaders();
    if (query.timestamps !== 'true') problems.push(`GET pods/${pod}/log without timestamps=true`);
    const open: OpenLog = { key: k, response, written: 0 };
    const since = query.sinceTime ? wholeSeconds(query.sinceTime) : 0;
    logSince.set(open, since);
    pumpLog(open, since);
    if (query.follow !== 'true') {
      response.end();
      return;
    }
    if (!response.writableEnded) {
      openLogs.add(open);
      response.on('close', () => {
        openLogs.delete(open);
        logSince.delete(open);
      });
    }
  }

  function answer(response: http.ServerResponse, code: number, body: unknown): void {
    response.writeHead(code, { 'content-type': 'application/json' });
    response.end(JSON.stringify(body));
  }

  async function readBody(request: http.IncomingMessage): Promise<unknown> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    return text ? (JSON.parse(text) as unknown) : undefined;
  }

  function schemaProblems(body: KubeObject): string[] {
    try {
      new Job(body as ConstructorParameters<typeof Job>[0]).validate();
      return [];
    } catch (error) {
      return [error instanceof Error ? error.message : String(error)];
    }
  }

  const server = http.createServer((request, response) => {
    void (async () => {
      const url = new URL(request.url ?? '/', 'http://fake');
      const query = Object.fromEntries(url.searchParams);
      const method = request.method ?? 'GET';
      const body = method === 'POST' || method === 'DELETE' || method === 'PUT' ? await readBody(request) : undefined;
      let code = 200;
      const reply = (c: number, b: unknown) => {
        code = c;
        answer(response, c, b);
      };
      try {
        if (request.headers.authorization !== `Bearer ${token}`) {
          reply(401, status(401, 'Unauthorized', 'Unauthorized'));
          return;
        }
        const route = ROUTE.exec(url.pathname);
        if (!route) {
          reply(404, status(404, 'NotFound', 'the server could not find the requested resource'));
          return;
        }
        const [, namespace = '', resourceName = '', name, isLog] = route;
        const resource = resourceName as Resource;
        const refusal = refusals.find((r) => r.method === method && r.path.test(url.pathname));
        if (refusal) {
          refusal.times = (refusal.times ?? 1) - 1;
          if (refusal.times <= 0) refusals.splice(refusals.indexOf(refusal), 1);
          const verb = { GET: name ? 'get' : 'list', POST: 'create', DELETE: 'delete' }[method] ?? method;
          const objectName = name ?? (body as KubeObject | undefined)?.metadata?.name;
          const answerBody =
            refusal.status === 422
              ? status(422, 'Invalid', `${GROUP[resource].kind}.${GROUP[resource].group} "${objectName}" is invalid`)
              : refusalStatus(refusal.status, verb, resource, namespace, objectName);
          reply(refusal.status, answerBody);
          return;
        }
        if (isLog && name && method === 'GET') {
          serveLog(response, namespace, name, query);
          return;
        }
        if (method === 'GET' && !name && query.watch === 'true') {
          serveWatch(response, resource, namespace, query);
          return;
        }
        if (method === 'GET' && !name) {
          const items = list(resource, namespace).filter((o) =>
            matchesSelector(o.metadata.labels, query.labelSelector ?? ''),
          );
          reply(200, {
            kind: `${GROUP[resource].kind}List`,
            apiVersion: GROUP[resource].apiVersion,
            metadata: { resourceVersion: String(resourceVersion) },
            items,
          });
          return;
        }
        if (method === 'GET' && name) {
          const object = store.get(key(resource, namespace, name));
          if (object) reply(200, object);
          else reply(404, refusalStatus(404, 'get', resource, namespace, name));
          return;
        }
        if (method === 'POST' && !name) {
          const object = body as KubeObject;
          const objectName = object?.metadata?.name;
          if (!objectName) {
            reply(422, status(422, 'Invalid', `${GROUP[resource].kind} "" is invalid: metadata.name: Required value`));
            return;
          }
          if (resource === 'jobs') {
            const found = schemaProblems(object);
            if (found.length) {
              problems.push(...found);
              reply(
                422,
                status(422, 'Invalid', `Job.batch "${objectName}" is invalid: ${found.join('; ')}`, {
                  name: objectName,
                  group: 'batch',
                  kind: 'Job',
                }),
              );
              return;
            }
          }
          if (store.has(key(resource, namespace, objectName))) {
            reply(409, refusalStatus(409, 'create', resource, namespace, objectName));
            return;
          }
          reply(201, create(resource, namespace, object));
          return;
        }
        if (method === 'DELETE' && name) {
          const grace =
            query.gracePeriodSeconds ?? (body as { gracePeriodSeconds?: unknown } | undefined)?.gracePeriodSeconds;
          deleting = grace === undefined ? undefined : Number(grace);
          const removed = remove(resource, namespace, name);
          if (!removed) {
            reply(404, refusalStatus(404, 'delete', resource, namespace, name));
            return;
          }
          // Background propagation: the Job goes now, the garbage collector takes its pods after.
          if (resource === 'jobs')
            for (const pod of list('pods', namespace))
              if (pod.metadata.labels?.['job-name'] === name) remove('pods', namespace, pod.metadata.name);
          deleting = undefined;
          reply(
            200,
            resource === 'jobs' ? removed : { kind: 'Status', apiVersion: 'v1', status: 'Success', code: 200 },
          );
          return;
        }
        reply(405, status(405, 'MethodNotAllowed', `${method} is not supported on ${url.pathname}`));
      } finally {
        requests.push({ method, path: url.pathname, query, body, status: code });
      }
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const kubeconfig = path.join(dir, 'kubeconfig');
  writeFileSync(
    kubeconfig,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      // The client refuses plain http unless told to skip TLS verification; the fake has no TLS.
      clusters: [{ name: 'fake', cluster: { server: url, 'insecure-skip-tls-verify': true } }],
      users: [{ name: 'runner', user: { token } }],
      contexts: [{ name: 'fake', context: { cluster: 'fake', user: 'runner', namespace: 'agents' } }],
      'current-context': 'fake',
    }),
    { mode: 0o600 },
  );

  const api: FakeKubeApi = {
    url,
    token,
    kubeconfig,
    requests,
    problems,
    job: (namespace, name) => store.get(key('jobs', namespace, name)),
    jobs: (namespace) => list('jobs', namespace),
    secrets: (namespace) => list('secrets', namespace),
    pods: (namespace) => list('pods', namespace),
    put(resource, namespace, object) {
      const exists = store.has(key(resource, namespace, object.metadata.name));
      if (exists) return save(resource, namespace, structuredClone(object), 'MODIFIED');
      return create(resource, namespace, object);
    },
    setJobStatus(namespace, name, jobStatus) {
      const job = store.get(key('jobs', namespace, name));
      if (!job) throw new Error(`fake kube: no job ${namespace}/${name}`);
      save('jobs', namespace, { ...structuredClone(job), status: jobStatus }, 'MODIFIED');
    },
    setPod(namespace, jobName, podName, podStatus) {
      const existing = store.get(key('pods', namespace, podName));
      if (existing) {
        save('pods', namespace, { ...structuredClone(existing), status: podStatus }, 'MODIFIED');
        return;
      }
      const job = store.get(key('jobs', namespace, jobName));
      if (!job) throw new Error(`fake kube: no job ${namespace}/${jobName} for pod ${podName}`);
      create('pods', namespace, {
        metadata: {
          name: podName,
          labels: {
            ...(job.spec?.template?.metadata?.labels ?? {}),
            'batch.kubernetes.io/controller-uid': job.metadata.uid ?? '',
            'batch.kubernetes.io/job-name': jobName,
            'controller-uid': job.metadata.uid ?? '',
            'job-name': jobName,
          },
        },
        spec: structuredClone((job.spec?.template as { spec?: Record<string, unknown> } | undefined)?.spec ?? {}),
        status: podStatus,
      });
    },
    writeLog(namespace, pod, container, time, text) {
      const k = logKey(namespace, pod, container);
      const log = logs.get(k) ?? { lines: [], ended: false };
      logs.set(k, log);
      log.lines.push({ time, text });
      for (const open of openLogs) if (open.key === k) pumpLog(open, logSince.get(open) ?? 0);
    },
    endLog(namespace, pod, container) {
      const k = logKey(namespace, pod, container);
      const log = logs.get(k) ?? { lines: [], ended: false };
      logs.set(k, log);
      log.ended = true;
      for (const open of openLogs) if (open.key === k) pumpLog(open, logSince.get(open) ?? 0);
    },
    dropLogStreams() {
      for (const open of openLogs) open.response.destroy();
      openLogs.clear();
    },
    closeWatches() {
      for (const watch of watches) watch.response.end();
      watches.clear();
    },
    compact() {
      compactedAt = resourceVersion;
      history.length = 0;
    },
    bookmark() {
      for (const watch of watches)
        if (watch.bookmarks)
          sendEvent(watch, 'BOOKMARK', {
            kind: GROUP[watch.resource].kind,
            apiVersion: GROUP[watch.resource].apiVersion,
            metadata: { resourceVersion: String(resourceVersion) },
          });
    },
    refuse(refusal) {
      refusals.push(refusal);
    },
    observe(listener) {
      observers.add(listener);
      return () => observers.delete(listener);
    },
    openWatches: () => watches.size,
    openLogs: () => openLogs.size,
    async close() {
      for (const watch of watches) watch.response.destroy();
      for (const open of openLogs) open.response.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  t.teardown(() => api.close());
  return api;
}
