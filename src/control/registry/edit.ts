// Editing the registry as text: upsert and remove one [repos.NAME] section,
// keeping the rest of the file (the operator's comments and layout) byte for
// byte. Pure; the caller validates the result with parseRegistry before
// writing it.
import { parse } from 'smol-toml';
import { UsageError } from '../../errors.js';
import type { GateEgress } from '../../types.js';
import { FIRST_PROXY_PORT } from './proxy-ports.js';
import { renderRunLimitLines, type RawRunLimits } from './limits.js';
import { renderSpendLines, type RawSpend } from './spend.js';
import { isTable } from './keys.js';
import { BROKER_TABLE_KEYS, rawBroker, type RawBroker } from './broker.js';
import { sectionRange } from './locate.js';
import { rawKubernetesOf, type RawKubernetes } from './kubernetes.js';
import { REPO_NAME_PATTERN } from './parse.js';

/** A repo as the operator (or provisioning) asks for it; unset fields take the defaults. */
export interface RegistryRepoInput {
  readonly name: string;
  readonly path: string;
  readonly user?: string;
  readonly baseBranch?: string;
  /** Omitted: the lowest port from FIRST_PROXY_PORT up that no other repo uses. */
  readonly proxyPort?: number;
  /** Omitted: kept as the registry has it (provision allocates a missing one, host-aware). */
  readonly runnerProxyPort?: number;
  /** Omitted: kept as the registry has it (provision allocates a missing one for a repo with a broker). */
  readonly brokerPort?: number;
  /** The watcher's Prometheus port (metrics_port); omitted: none. */
  readonly metricsPort?: number;
  readonly anonymousFetch?: boolean;
  readonly gateEgress?: GateEgress;
  readonly schedule?: string;
  readonly maxParallel?: number;
  readonly allow?: readonly string[];
  readonly loopbackPorts?: readonly number[];
  readonly toolchainPath?: string;
  readonly env?: Readonly<Record<string, string>>;
  readonly enabled?: boolean;
  readonly url?: string;
  readonly authorName?: string;
  readonly authorEmail?: string;
  /** tasks_max, memory_max, cpu_weight as written (limits.ts). */
  readonly limits?: RawRunLimits;
  /** Budgets and rate-limit waits as written (spend.ts). */
  readonly spend?: RawSpend;
  /** The [repos.NAME.broker] table as written (broker.ts). Omitted: kept as the registry has it. */
  readonly broker?: RawBroker;
  /** backend as written (kubernetes.ts). Omitted: kept as the registry has it. */
  readonly backend?: string;
  /** The [repos.NAME.kubernetes] table as written. Omitted: kept as the registry has it. */
  readonly kubernetes?: RawKubernetes;
}

function tomlString(value: string): string {
  return JSON.stringify(value).replace(/[\u007f]/g, (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

function tomlKey(key: string): string {
  return /^[A-Za-z0-9_-]+$/.test(key) ? key : tomlString(key);
}

/** The [repos.NAME] section for an entry, as text. */
function renderRepoSection(entry: RegistryRepoInput & { proxyPort: number }): string {
  const lines = [`[repos.${entry.name}]`, `path = ${tomlString(entry.path)}`];
  const add = (key: string, value: string | undefined) => {
    if (value !== undefined) lines.push(`${key} = ${value}`);
  };
  add('user', entry.user === undefined ? undefined : tomlString(entry.user));
  add('base', entry.baseBranch === undefined ? undefined : tomlString(entry.baseBranch));
  add('proxy_port', String(entry.proxyPort));
  add('runner_proxy_port', entry.runnerProxyPort === undefined ? undefined : String(entry.runnerProxyPort));
  add('broker_port', entry.brokerPort === undefined ? undefined : String(entry.brokerPort));
  add('metrics_port', entry.metricsPort === undefined ? undefined : String(entry.metricsPort));
  add('anonymous_fetch', entry.anonymousFetch === undefined ? undefined : String(entry.anonymousFetch));
  add('gate_egress', entry.gateEgress === undefined ? undefined : tomlString(entry.gateEgress));
  add('schedule', entry.schedule === undefined ? undefined : tomlString(entry.schedule));
  add('max_parallel', entry.maxParallel === undefined ? undefined : String(entry.maxParallel));
  add('allow', entry.allow === undefined ? undefined : `[${entry.allow.map(tomlString).join(', ')}]`);
  add('loopback_ports', entry.loopbackPorts === undefined ? undefined : `[${entry.loopbackPorts.join(', ')}]`);
  add('toolchain_path', entry.toolchainPath === undefined ? undefined : tomlString(entry.toolchainPath));
  add(
    'env',
    entry.env === undefined
      ? undefined
      : `{ ${Object.entries(entry.env)
          .map(([k, v]) => `${tomlKey(k)} = ${tomlString(v)}`)
          .join(', ')} }`.replace('{  }', '{}'),
  );
  add('enabled', entry.enabled === undefined ? undefined : String(entry.enabled));
  add('url', entry.url === undefined ? undefined : tomlString(entry.url));
  add('author_name', entry.authorName === undefined ? undefined : tomlString(entry.authorName));
  add('author_email', entry.authorEmail === undefined ? undefined : tomlString(entry.authorEmail));
  add('backend', entry.backend === undefined ? undefined : tomlString(entry.backend));
  lines.push(...renderRunLimitLines(entry.limits));
  lines.push(...renderSpendLines(entry.spend));
  lines.push(...renderBrokerTable(entry.name, entry.broker));
  lines.push(...renderKubernetesTable(entry.name, entry.kubernetes));
  return `${lines.join('\n')}\n`;
}

/** The [repos.NAME.broker] section, last: every key after it would belong to it. Known keys first, in table order. */
function renderBrokerTable(name: string, broker: RawBroker | undefined): string[] {
  if (broker === undefined || Object.keys(broker).length === 0) return [];
  const keys = Object.keys(broker).sort((a, b) => rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0));
  const value = (item: string | number) => (typeof item === 'number' ? String(item) : tomlString(item));
  return ['', `[repos.${name}.broker]`, ...keys.map((key) => `${tomlKey(key)} = ${value(broker[key]!)}`)];
}

/** The [repos.NAME.kubernetes] section, after the broker's, its keys as written. */
function renderKubernetesTable(name: string, table: RawKubernetes | undefined): string[] {
  if (table === undefined || Object.keys(table).length === 0) return [];
  const value = (item: string | number | boolean) => (typeof item === 'string' ? tomlString(item) : String(item));
  return [
    '',
    `[repos.${name}.kubernetes]`,
    ...Object.entries(table).map(([key, item]) => `${tomlKey(key)} = ${value(item)}`),
  ];
}

/** The repo's backend key and kubernetes table as the text has them; empty when none or the text is not TOML. */
function kubernetesOfText(text: string, name: string): ReturnType<typeof rawKubernetesOf> {
  try {
    const repos = (parse(text) as Record<string, unknown>).repos;
    const repo = isTable(repos) ? repos[name] : undefined;
    return isTable(repo) ? rawKubernetesOf(repo) : {};
  } catch {
    return {};
  }
}

function rank(key: string): number {
  const at = BROKER_TABLE_KEYS.indexOf(key);
  return at < 0 ? BROKER_TABLE_KEYS.length : at;
}

type HeldPorts = { proxy?: number; runner?: number; broker?: number };

/** proxy_port, runner_proxy_port and broker_port of every repo in the text, by repo name; empty when not TOML. */
function proxyPortsByRepo(text: string): Map<string, HeldPorts> {
  const port = (value: unknown) => (typeof value === 'number' && Number.isInteger(value) ? value : undefined);
  try {
    const document = parse(text) as Record<string, unknown>;
    const repos = isTable(document.repos) ? document.repos : {};
    const ports = new Map<string, HeldPorts>();
    for (const [name, repo] of Object.entries(repos)) {
      if (!isTable(repo)) continue;
      const proxy = port(repo.proxy_port);
      const runner = port(repo.runner_proxy_port);
      const broker = port(repo.broker_port);
      ports.set(name, {
        ...(proxy === undefined ? {} : { proxy }),
        ...(runner === undefined ? {} : { runner }),
        ...(broker === undefined ? {} : { broker }),
      });
    }
    return ports;
  } catch {
    return new Map();
  }
}

/**
 * The ports an entry gets: its own, else the ones it has; a missing proxy_port is the lowest port from
 * FIRST_PROXY_PORT no port of either kind uses.
 */
function portsFor(
  text: string,
  entry: RegistryRepoInput,
): { proxyPort: number; runnerProxyPort?: number; brokerPort?: number } {
  const ports = proxyPortsByRepo(text);
  const current = ports.get(entry.name);
  const runnerProxyPort = entry.runnerProxyPort ?? current?.runner;
  const brokerPort = entry.brokerPort ?? current?.broker;
  const runner = {
    ...(runnerProxyPort === undefined ? {} : { runnerProxyPort }),
    ...(brokerPort === undefined ? {} : { brokerPort }),
  };
  const proxyPort = entry.proxyPort ?? current?.proxy;
  if (proxyPort !== undefined) return { proxyPort, ...runner };
  const used = new Set(
    [...ports]
      .filter(([name]) => name !== entry.name)
      .flatMap(([, held]) => [held.proxy, held.runner, held.broker])
      .concat(runnerProxyPort, brokerPort),
  );
  let port = FIRST_PROXY_PORT;
  while (used.has(port)) port++;
  return { proxyPort: port, ...runner };
}

/** The repo's broker table as the text has it; undefined when it has none or the text is not TOML. */
function brokerTableOf(text: string, name: string): RawBroker | undefined {
  try {
    const repos = (parse(text) as Record<string, unknown>).repos;
    const repo = isTable(repos) ? repos[name] : undefined;
    return isTable(repo) ? rawBroker(repo) : undefined;
  } catch {
    return undefined;
  }
}

/** The registry text with repo `entry.name` added or replaced (its broker_port and broker table kept unless given). */
export function upsertRepo(text: string, entry: RegistryRepoInput): string {
  if (!REPO_NAME_PATTERN.test(entry.name)) {
    throw new UsageError(
      `repo name "${entry.name}" is not allowed; use lowercase letters, digits and "-", starting with a letter, at most 24 characters`,
    );
  }
  const broker = entry.broker ?? brokerTableOf(text, entry.name);
  const kept = kubernetesOfText(text, entry.name);
  const section = renderRepoSection({
    ...kept,
    ...entry,
    ...portsFor(text, entry),
    ...(broker ? { broker } : {}),
  });
  const lines = text.split('\n');
  const range = sectionRange(lines, entry.name);
  if (!range) {
    const body = text.replace(/\n*$/, '');
    return body === '' ? section : `${body}\n\n${section}`;
  }
  const replaced = [
    ...lines.slice(0, range.start),
    ...section.replace(/\n$/, '').split('\n'),
    ...notifyBlocks(lines.slice(range.start, range.end), entry.name),
    ...lines.slice(range.end),
  ];
  return replaced.join('\n');
}

/**
 * The repo's [[repos.NAME.notify]] sections among its section's lines, as written: a rewrite of the section keeps its
 * webhooks.
 */
function notifyBlocks(lines: readonly string[], name: string): string[] {
  const header = new RegExp(`^\\[\\[\\s*repos\\s*\\.\\s*"?${name}"?\\s*\\.\\s*notify\\s*\\]\\]`);
  const kept: string[] = [];
  let inside = false;
  for (const line of lines) {
    const trimmed = line.trim();
    if (trimmed.startsWith('[')) {
      inside = header.test(trimmed);
      if (inside) kept.push('');
    }
    if (inside) kept.push(line);
  }
  while (kept.length && kept.at(-1)!.trim() === '') kept.pop();
  return kept;
}

/** The registry text without repo `name` (unchanged when it is not there). */
export function removeRepo(text: string, name: string): string {
  const lines = text.split('\n');
  const range = sectionRange(lines, name);
  if (!range) return text;
  const kept = [...lines.slice(0, range.start), ...lines.slice(range.end)];
  return kept.join('\n').replace(/\n{3,}/g, '\n\n');
}
