// The registry's Kubernetes keys: backend ("host", the default, or
// "kubernetes") and the [repos.NAME.kubernetes] table over
// [defaults.kubernetes], key by key, each problem at its own line. The pods
// get no DNS, so every endpoint they use is written by IP; the image is
// pinned by digest, so what runs is what the operator reviewed. The resolved
// settings are what backends/kubernetes/ builds its manifests from. Pure.
import * as path from 'node:path';
import type { RepoKubernetes } from '../../types.js';
import { formatSize, parseSize } from './limits.js';

export type Backend = 'host' | 'kubernetes';

/** The valid keys of one kubernetes table ([defaults.kubernetes] or [repos.NAME.kubernetes]). */
export type KubernetesFields = {
  context?: string;
  inCluster?: boolean;
  kubeconfig?: string;
  namespace?: string;
  image?: string;
  proxy?: { ip: string; port: number };
  gitFetchUrl?: string;
  gitPushUrl?: string;
  workspaceBytes?: number;
  tmpBytes?: number;
  ttlSec?: number;
  cpuMax?: string;
  serviceAccount?: string;
  agentSecret?: string;
  agentSecretKeys?: string[];
};

/** What a kubernetes table reads into and reports through. */
export interface KubernetesTableContext {
  /** "repos.web" or "defaults": the table the kubernetes table sits in. */
  readonly table: string;
  /** A problem with the table itself (not a table). */
  bad(problem: string, fix: string): void;
  /** A problem with one key of the kubernetes table, reported at that key's line. */
  badKey(key: string, problem: string, fix: string): void;
}

export const KUBERNETES_DEFAULTS = {
  workspaceBytes: 10 * 1024 ** 3,
  tmpBytes: 1024 ** 3,
  ttlSec: 3600,
} as const;

const MIN_VOLUME_BYTES = 64 * 1024 ** 2;
const MAX_VOLUME_BYTES = 1024 ** 4;
/** A week: finished Jobs are the runner's to read once, not an archive. */
export const MAX_TTL_SEC = 7 * 24 * 3600;

/** A DNS-1123 label: what a namespace name must be. */
export const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
/** A DNS-1123 subdomain: what a service account name must be. */
const DNS_SUBDOMAIN = /^(?=.{1,253}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
/** An image reference pinned by digest: a repository name, no tag, @sha256: and 64 lowercase hex digits. */
export const IMAGE_BY_DIGEST = /^[a-z0-9][a-z0-9._\-/:]*[a-z0-9]@sha256:[0-9a-f]{64}$/;
const IPV4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;
/** A CPU quantity: cores ("2", "0.5") or millicores ("1500m"). */
const CPU_QUANTITY = /^(\d+(\.\d{1,3})?|\d+m)$/;

/** Pure: a namespace name's problem, or undefined when it is a DNS-1123 label. */
export function namespaceProblem(value: string): string | undefined {
  if (value.length > 63) return `is ${value.length} characters; a namespace has at most 63`;
  if (!DNS_LABEL.test(value)) return 'is not a DNS-1123 label (lowercase letters, digits and "-", alphanumeric ends)';
  return undefined;
}

/** Pure: an image reference's problem, or undefined when it is pinned by digest. */
export function imageProblem(value: string): string | undefined {
  // A ":" after the last "/" is a tag (one before it is a registry's port): refused even beside a digest.
  const name = value.split('@')[0]!;
  if (name.slice(name.lastIndexOf('/') + 1).includes(':'))
    return 'names a tag: a tag can be moved to other contents after review, so the image is named by digest alone';
  if (IMAGE_BY_DIGEST.test(value)) return undefined;
  if (/@sha256:/.test(value)) return 'has a malformed digest (sha256: and 64 lowercase hex digits)';
  return 'is not pinned by digest: a tag can be moved to other contents after review';
}

/** Pure: the host of a URL or endpoint when it is an IP literal (IPv6 without brackets), else undefined. */
function ipOf(hostname: string): string | undefined {
  if (IPV4.test(hostname)) return hostname;
  if (hostname.startsWith('[') && hostname.endsWith(']')) return hostname.slice(1, -1);
  return undefined;
}

/** Pure: "IP:port" (IPv6 as "[::1]:3128") read, or the problem. */
export function readEndpoint(value: string): { ip: string; port: number } | string {
  let url: URL;
  try {
    url = new URL(`http://${value}`);
  } catch {
    return 'is not IP:port';
  }
  const ip = ipOf(url.hostname);
  if (ip === undefined) return 'names a host, not an IP: the pods get no DNS';
  if (url.port === '') return 'has no port';
  if (`${url.hostname}:${url.port}` !== value) return 'is not written as IP:port alone (no scheme, path or user)';
  return { ip, port: Number(url.port) };
}

/** Pure: a git endpoint URL's problem, or undefined; `schemes` are the ones this endpoint may use. */
export function gitUrlProblem(value: string, schemes: readonly string[]): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'is not a URL';
  }
  const scheme = url.protocol.replace(/:$/, '');
  if (!schemes.includes(scheme)) return `has the scheme ${scheme}; this endpoint takes ${schemes.join(' or ')}`;
  if (url.username !== '' || url.password !== '')
    return 'carries credentials: the per-task token is given to the pod, never written in the registry';
  if (ipOf(url.hostname) === undefined) return 'names a host, not an IP: the pods get no DNS';
  if (url.search !== '' || url.hash !== '') return 'has a query or fragment';
  return undefined;
}

/** Pure: the cluster address of a URL the problems above accepted: its IP and port (the scheme's default port). */
export function urlEndpoint(value: string): { ip: string; port: number } {
  const url = new URL(value);
  const defaults: Readonly<Record<string, number>> = { 'git:': 9418, 'http:': 80, 'https:': 443 };
  return { ip: ipOf(url.hostname)!, port: url.port === '' ? defaults[url.protocol]! : Number(url.port) };
}

type KeyRead = (value: unknown, fields: KubernetesFields, at: KubernetesTableContext) => void;

function stringKey(key: string, problemOf: (value: string) => string | undefined, fix: string, set: KeyRead): KeyRead {
  return (value, fields, at) => {
    const problem = typeof value === 'string' ? problemOf(value) : 'must be a string';
    if (problem === undefined) set(value, fields, at);
    else at.badKey(key, `${JSON.stringify(value)} ${problem}`, fix);
  };
}

function sizeKey(key: string, set: (fields: KubernetesFields, bytes: number) => void, example: string): KeyRead {
  return (value, fields, at) => {
    const bytes = parseSize(value);
    if (bytes === undefined || bytes < MIN_VOLUME_BYTES || bytes > MAX_VOLUME_BYTES)
      at.badKey(
        key,
        `must be a size ${formatSize(MIN_VOLUME_BYTES)}-${formatSize(MAX_VOLUME_BYTES)}, got ${JSON.stringify(value)}`,
        `write bytes or a size with K, M, G or T (base 1024), e.g. ${key} = "${example}"`,
      );
    else set(fields, bytes);
  };
}

/** The keys of a kubernetes table, each with the rule that reads it. */
const KUBERNETES_KEYS: Readonly<Record<string, KeyRead>> = {
  context: stringKey(
    'context',
    (value) => (/^[^\s\p{Cc}]{1,253}$/u.test(value) ? undefined : 'is not a context name'),
    'write the name of a context in the kubeconfig, e.g. context = "prod-cluster" (kubectl config get-contexts)',
    (value, fields) => (fields.context = value as string),
  ),
  in_cluster(value, fields, at) {
    if (typeof value === 'boolean') fields.inCluster = value;
    else
      at.badKey(
        'in_cluster',
        `must be true or false, got ${JSON.stringify(value)}`,
        "write in_cluster = true when the runner runs in a pod and uses that pod's service account, else remove it",
      );
  },
  kubeconfig: stringKey(
    'kubeconfig',
    (value) => (path.isAbsolute(value) ? undefined : 'is not an absolute path'),
    'write the full path of a kubeconfig file the runner reads, e.g. kubeconfig = "/etc/agent-runner/kube/web.yaml"',
    (value, fields) => (fields.kubeconfig = path.normalize(value as string)),
  ),
  namespace: stringKey(
    'namespace',
    namespaceProblem,
    'write the repo\'s own namespace, e.g. namespace = "agent-runner-web"',
    (value, fields) => (fields.namespace = value as string),
  ),
  image: stringKey(
    'image',
    imageProblem,
    'pin the image by digest: image = "registry.example.com/agent-runner/worker@sha256:<64 hex>" (docker buildx imagetools inspect NAME:TAG shows the digest)',
    (value, fields) => (fields.image = value as string),
  ),
  proxy(value, fields, at) {
    const read = typeof value === 'string' ? readEndpoint(value) : 'must be a string';
    if (typeof read === 'string')
      at.badKey(
        'proxy',
        `${JSON.stringify(value)} ${read}`,
        'write the agent proxy\'s address as the pods reach it, by IP: proxy = "10.0.0.5:3128" (IPv6: "[fd00::5]:3128")',
      );
    else fields.proxy = read;
  },
  git_fetch_url: stringKey(
    'git_fetch_url',
    (value) => gitUrlProblem(value, ['git', 'http', 'https']),
    'write the runner\'s read-only git endpoint by IP, e.g. git_fetch_url = "git://10.0.0.5:9418/web.git"',
    (value, fields) => (fields.gitFetchUrl = value as string),
  ),
  git_push_url: stringKey(
    'git_push_url',
    (value) => gitUrlProblem(value, ['http', 'https']),
    'write the runner\'s git endpoint for results by IP, e.g. git_push_url = "https://10.0.0.5:8443/web.git"',
    (value, fields) => (fields.gitPushUrl = value as string),
  ),
  workspace_size: sizeKey('workspace_size', (fields, bytes) => (fields.workspaceBytes = bytes), '10G'),
  tmp_size: sizeKey('tmp_size', (fields, bytes) => (fields.tmpBytes = bytes), '1G'),
  ttl_sec(value, fields, at) {
    if (typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= MAX_TTL_SEC)
      fields.ttlSec = value;
    else
      at.badKey(
        'ttl_sec',
        `must be a whole number of seconds 0-${MAX_TTL_SEC}, got ${JSON.stringify(value)}`,
        `e.g. ttl_sec = ${KUBERNETES_DEFAULTS.ttlSec} (how long Kubernetes keeps a finished Job; the default: remove the key)`,
      );
  },
  cpu_max: stringKey(
    'cpu_max',
    (value) => (CPU_QUANTITY.test(value) && !/^0+(\.0+)?m?$/.test(value) ? undefined : 'is not a CPU quantity'),
    'write cores or millicores as a string, e.g. cpu_max = "2" or cpu_max = "1500m"; remove it for no limit',
    (value, fields) => (fields.cpuMax = value as string),
  ),
  service_account: stringKey(
    'service_account',
    (value) => (DNS_SUBDOMAIN.test(value) ? undefined : 'is not a DNS-1123 subdomain'),
    "write the name of a service account in the repo's namespace, or remove the key (its token is never mounted)",
    (value, fields) => (fields.serviceAccount = value as string),
  ),
  agent_secret: stringKey(
    'agent_secret',
    (value) => (DNS_SUBDOMAIN.test(value) ? undefined : 'is not a Secret name (a DNS-1123 subdomain)'),
    'write the name of a Secret in the repo\'s namespace that holds the agent\'s credential, e.g. agent_secret = "claude-login"',
    (value, fields) => (fields.agentSecret = value as string),
  ),
  agent_secret_keys(value, fields, at) {
    const bad = Array.isArray(value)
      ? value.find((key) => typeof key !== 'string' || agentSecretKeyProblem(key) !== undefined)
      : value;
    if (Array.isArray(value) && value.length > 0 && bad === undefined)
      fields.agentSecretKeys = [...(value as string[])];
    else
      at.badKey(
        'agent_secret_keys',
        Array.isArray(value) && value.length > 0
          ? `${JSON.stringify(bad)} ${typeof bad === 'string' ? agentSecretKeyProblem(bad) : 'is not a string'}`
          : `must be a list of variable names, got ${JSON.stringify(value)}`,
        'list the keys of agent_secret the agent needs, each a variable name, e.g. agent_secret_keys = ["ANTHROPIC_API_KEY"]',
      );
  },
};

/** Variables the Job sets itself (manifests/job.ts): an agent secret's key may not take their place. */
const JOB_SET_VARIABLES = new Set([
  'HOME',
  'TMPDIR',
  'PATH',
  'http_proxy',
  'https_proxy',
  'HTTP_PROXY',
  'HTTPS_PROXY',
  'no_proxy',
  'NO_PROXY',
  'GIT_TERMINAL_PROMPT',
]);

/** Why a key of agent_secret cannot be a variable of the agent's, or undefined. */
function agentSecretKeyProblem(key: string): string | undefined {
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(key)) return 'is not a variable name';
  if (key.startsWith('AGENT_RUNNER_') || JOB_SET_VARIABLES.has(key)) return 'is a variable the Job sets itself';
  return undefined;
}

/** Keys that belong to one repo: a namespace shared through [defaults] would put two repos' Jobs and Secrets in one. */
const REPO_ONLY_KEYS: ReadonlySet<string> = new Set(['namespace']);

/** The keys a kubernetes table may hold, in table order. */
export const KUBERNETES_TABLE_KEYS: readonly string[] = Object.keys(KUBERNETES_KEYS);

/** Reads one kubernetes table, reporting every bad key at its line; returns the valid fields. */
export function readKubernetesTable(value: unknown, at: KubernetesTableContext): KubernetesFields | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value) || value instanceof Date) {
    at.bad('must be a table', `write it as a [${at.table}.kubernetes] section`);
    return undefined;
  }
  const raw = value as Record<string, unknown>;
  const fields: KubernetesFields = {};
  for (const [key, item] of Object.entries(raw)) {
    const rule = Object.hasOwn(KUBERNETES_KEYS, key) ? KUBERNETES_KEYS[key] : undefined;
    if (rule === undefined)
      at.badKey(
        key,
        'unknown key',
        `remove it; allowed keys in [${at.table}.kubernetes]: ${KUBERNETES_TABLE_KEYS.join(', ')}`,
      );
    else if (at.table === 'defaults' && REPO_ONLY_KEYS.has(key))
      at.badKey(
        key,
        "belongs to one repo: repos sharing a namespace would see and delete each other's Jobs and Secrets",
        'move it to each [repos.NAME.kubernetes], one namespace per repo',
      );
    else rule(item, fields, at);
  }
  if (raw.context !== undefined && raw.in_cluster === true)
    at.badKey(
      'in_cluster',
      'context and in_cluster = true both say how to reach the cluster',
      'keep one: context (with kubeconfig) for a runner outside the cluster, in_cluster = true for one in a pod',
    );
  return fields;
}

/** A problem of a repo's resolved settings, at a key of its kubernetes table ('' for the table itself). */
export interface KubernetesProblem {
  readonly key: string;
  readonly problem: string;
  readonly fix: string;
}

/** Which table says how to reach the cluster: the repo's own when it says anything about it, else [defaults]. */
function clusterOf(own: KubernetesFields, defaults: KubernetesFields): RepoKubernetes['cluster'] | undefined {
  const says = (fields: KubernetesFields) => fields.context !== undefined || fields.inCluster !== undefined;
  const from = says(own) ? own : defaults;
  if (from.inCluster === true) return { kind: 'in-cluster' };
  if (from.context === undefined) return undefined;
  const kubeconfig = own.kubeconfig ?? defaults.kubeconfig;
  return { kind: 'context', context: from.context, ...(kubeconfig === undefined ? {} : { kubeconfig }) };
}

/**
 * Pure: a repo's Kubernetes settings, its table over [defaults.kubernetes] key by key, or what is missing. Called
 * only for a repo whose backend is "kubernetes".
 */
export function resolveKubernetes(
  repo: string,
  own: KubernetesFields | undefined,
  defaults: KubernetesFields | undefined,
): { kubernetes: RepoKubernetes } | { problems: KubernetesProblem[] } {
  const mine = own ?? {};
  const shared = defaults ?? {};
  const merged: KubernetesFields = { ...shared, ...mine };
  const cluster = clusterOf(mine, shared);
  const table = `[repos.${repo}.kubernetes]`;
  const problems: KubernetesProblem[] = [];
  const need = (key: string, present: boolean, fix: string) => {
    if (!present) problems.push({ key, problem: `backend = "kubernetes" needs ${key} in ${table}`, fix });
  };
  need(
    'context',
    cluster !== undefined,
    `add context = "NAME" (a context of the runner's kubeconfig) or in_cluster = true to ${table} or [defaults.kubernetes]`,
  );
  need('namespace', merged.namespace !== undefined, `add namespace = "agent-runner-${repo}" (one per repo)`);
  need('image', merged.image !== undefined, 'add image = "REGISTRY/NAME@sha256:<64 hex>" (pinned by digest)');
  need('proxy', merged.proxy !== undefined, 'add proxy = "IP:PORT", the agent proxy as the pods reach it');
  need('git_fetch_url', merged.gitFetchUrl !== undefined, 'add git_fetch_url = "git://IP:PORT/PATH"');
  need('git_push_url', merged.gitPushUrl !== undefined, 'add git_push_url = "https://IP:PORT/PATH"');
  if ((merged.agentSecret === undefined) !== (merged.agentSecretKeys === undefined))
    problems.push(
      merged.agentSecret === undefined
        ? {
            key: 'agent_secret_keys',
            problem: `agent_secret_keys needs agent_secret in ${table}`,
            fix: 'add agent_secret = "NAME", the Secret in the namespace the keys are read from',
          }
        : {
            key: 'agent_secret',
            problem: `agent_secret needs agent_secret_keys in ${table}`,
            fix: 'add agent_secret_keys = ["KEY", ...], the keys the agent gets as variables of those names',
          },
    );
  if (problems.length) return { problems };
  return {
    kubernetes: {
      cluster: cluster!,
      namespace: merged.namespace!,
      image: merged.image!,
      proxy: merged.proxy!,
      gitFetchUrl: merged.gitFetchUrl!,
      gitPushUrl: merged.gitPushUrl!,
      workspaceBytes: merged.workspaceBytes ?? KUBERNETES_DEFAULTS.workspaceBytes,
      tmpBytes: merged.tmpBytes ?? KUBERNETES_DEFAULTS.tmpBytes,
      ttlSec: merged.ttlSec ?? KUBERNETES_DEFAULTS.ttlSec,
      ...(merged.cpuMax === undefined ? {} : { cpuMax: merged.cpuMax }),
      ...(merged.serviceAccount === undefined ? {} : { serviceAccount: merged.serviceAccount }),
      ...(merged.agentSecret === undefined || merged.agentSecretKeys === undefined
        ? {}
        : { agentSecret: { name: merged.agentSecret, keys: merged.agentSecretKeys } }),
    },
  };
}

/** Pure: every namespace once in the registry; a clash names the repo that has it first. */
export function namespaceClashes(
  repos: readonly { readonly name: string; readonly kubernetes?: RepoKubernetes }[],
): { repo: string; problem: string; fix: string }[] {
  const seen = new Map<string, string>();
  const found: { repo: string; problem: string; fix: string }[] = [];
  for (const repo of repos) {
    const namespace = repo.kubernetes?.namespace;
    if (namespace === undefined) continue;
    const other = seen.get(namespace);
    if (other === undefined) seen.set(namespace, repo.name);
    else
      found.push({
        repo: repo.name,
        problem: `namespace "${namespace}" is already used by repo "${other}": each would see and delete the other's Jobs and Secrets`,
        fix: `give every repo its own namespace, e.g. namespace = "agent-runner-${repo.name}"`,
      });
  }
  return found;
}

/** A kubernetes table as written, kept when provisioning rewrites the repo's section. */
export type RawKubernetes = Readonly<Record<string, string | number | boolean>>;

/** The backend key and kubernetes table of a raw [repos.NAME] table, as written; undefined parts are absent. */
export function rawKubernetesOf(raw: Readonly<Record<string, unknown>>): {
  backend?: string;
  kubernetes?: RawKubernetes;
} {
  const table = raw.kubernetes;
  const kept: Record<string, string | number | boolean> = {};
  if (typeof table === 'object' && table !== null && !Array.isArray(table))
    for (const [key, value] of Object.entries(table as Record<string, unknown>))
      if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') kept[key] = value;
  return {
    ...(typeof raw.backend === 'string' ? { backend: raw.backend } : {}),
    ...(Object.keys(kept).length ? { kubernetes: kept } : {}),
  };
}
