// The registry: root's list of repos and what each may do. Read -> validate
// (pure, every problem at once, each at its file:line) -> use. The per-key
// rules are the table in keys.ts; the rules across repos are here and in
// rules.ts.
import { parse, TomlError } from 'smol-toml';
import type { FsPort, ScheduleCheck } from '../../ports.js';
import type { ConfigProblem, Registry, RegistryRepo, RepoKubernetes } from '../../types.js';
import { configValueError, formatProblems, UsageError } from '../../errors.js';
import { loopbackPortClashes } from './rules.js';
import { resolveRunLimits } from './limits.js';
import { resolveSpend } from './spend.js';
import {
  DEFAULT_REMOTE_POLL_SEC,
  isTable,
  KEY_RULES,
  keysFor,
  suggestKey,
  type Fields,
  type KeyContext,
  type Scope,
} from './keys.js';
import { LineIndex } from './locate.js';
import {
  declaresBroker,
  inlineKeyRefusal,
  looksLikeInlineKeyName,
  missingBrokerPort,
  providerHostProblem,
  providerHostsAllowed,
  resolveBroker,
  resolvedBrokerProblems,
} from './broker.js';
import { MAX_PROXY_PORTS_BELOW, PRIVILEGED_PORT_LIMIT, PROXY_PORTS_BELOW_KEY, REPO_PORT_KINDS } from './proxy-ports.js';
import { USER_PATH } from '../../system-path.js';
import { resolveNotify } from './notify.js';
import { resolveWebhook, webhookPortClash } from './webhook.js';
import { namespaceClashes, resolveKubernetes } from './kubernetes.js';

/** Repo names become user names, unit instance names and directory names. */
export const REPO_NAME_PATTERN = /^[a-z][a-z0-9-]{0,23}$/;

const REGISTRY_DEFAULTS = {
  base: 'main',
  schedule: '* * * * *',
  remotePollSec: DEFAULT_REMOTE_POLL_SEC,
  maxParallel: 2,
  toolchainPath: USER_PATH,
  enabled: true,
} as const;

/** The default Linux user of a repo: `agent-<name>` (at most 30 characters). */
export function defaultUserFor(repoName: string): string {
  return `agent-${repoName}`.slice(0, 32);
}

interface Collected {
  readonly problems: ConfigProblem[];
  /** Built on the first problem: a clean registry never scans its lines. */
  index: LineIndex | undefined;
  readonly text: string;
  readonly file: string;
  readonly schedules: ScheduleCheck;
  proxyPortsBelow: number;
}

/** Reports a problem at `key`'s line in `table`; `label` names the key when it is another's (a default's line). */
function report(
  c: Collected,
  table: string,
  key: string | undefined,
  problem: string,
  fix: string,
  label?: string,
): void {
  c.index ??= new LineIndex(c.text);
  c.problems.push({
    file: c.index.locate(c.file, table, key),
    key: label ?? (key === undefined ? table : `${table}.${key}`),
    problem,
    fix,
  });
}

/** Checks one table's keys by the key table; returns the valid fields, reporting every bad one. */
function readFields(c: Collected, table: string, scope: Scope, raw: Record<string, unknown>): Fields {
  const fields: Fields = {};
  const allowedHere = keysFor(scope);
  for (const [key, value] of Object.entries(raw)) {
    const rule = Object.hasOwn(KEY_RULES, key) ? KEY_RULES[key] : undefined;
    if (!rule && looksLikeInlineKeyName(key)) {
      const refusal = inlineKeyRefusal(table);
      report(c, table, key, refusal.problem, refusal.fix);
      continue;
    }
    if (!rule || !rule.scopes.includes(scope)) {
      const near = suggestKey(key, allowedHere);
      const why = !rule
        ? 'unknown key'
        : scope === 'defaults'
          ? `"${key}" belongs in [repos.NAME], not in [defaults]`
          : `"${key}" belongs in [defaults], not in [repos.NAME] (one for the host)`;
      report(
        c,
        table,
        key,
        why,
        near && !rule
          ? `did you mean "${near}"? (see control/registry.example.toml)`
          : `remove it; allowed keys here: ${allowedHere.join(', ')}`,
      );
      continue;
    }
    const at: KeyContext = {
      table,
      fields,
      schedules: c.schedules,
      proxyPortsBelow: c.proxyPortsBelow,
      bad: (problem, fix) => report(c, table, key, problem, fix),
      badEntry: (entry, problem, fix) => report(c, table, `${key}.${entry}`, problem, fix),
    };
    rule.read(value, at);
  }
  return fields;
}

/** A repo from its valid fields and [defaults]. */
function resolveRepo(
  name: string,
  fields: Fields & { path: string; proxyPort: number },
  defaults: Fields,
): RegistryRepo {
  const broker =
    fields.brokerPort === undefined ? undefined : resolveBroker(fields.brokerPort, fields.broker, defaults.broker);
  return {
    name,
    path: fields.path,
    user: fields.user ?? defaultUserFor(name),
    baseBranch: fields.base ?? defaults.base ?? REGISTRY_DEFAULTS.base,
    proxyPort: fields.proxyPort,
    ...(fields.runnerProxyPort === undefined ? {} : { runnerProxyPort: fields.runnerProxyPort }),
    anonymousFetch: fields.anonymousFetch ?? defaults.anonymousFetch ?? false,
    gateEgress: fields.gateEgress ?? defaults.gateEgress ?? 'none',
    schedule: fields.schedule ?? defaults.schedule ?? REGISTRY_DEFAULTS.schedule,
    remotePollSec: fields.remotePollSec ?? defaults.remotePollSec ?? REGISTRY_DEFAULTS.remotePollSec,
    maxParallel: fields.maxParallel ?? defaults.maxParallel ?? REGISTRY_DEFAULTS.maxParallel,
    allow: [...new Set([...(defaults.allow ?? []), ...(fields.allow ?? [])])],
    loopbackPorts: [...new Set([...(defaults.loopbackPorts ?? []), ...(fields.loopbackPorts ?? [])])],
    toolchainPath: fields.toolchainPath ?? defaults.toolchainPath ?? REGISTRY_DEFAULTS.toolchainPath,
    env: { ...(defaults.env ?? {}), ...(fields.env ?? {}) },
    enabled: fields.enabled ?? defaults.enabled ?? REGISTRY_DEFAULTS.enabled,
    url: fields.url,
    authorName: fields.authorName ?? defaults.authorName,
    authorEmail: fields.authorEmail ?? defaults.authorEmail,
    limits: resolveRunLimits(fields.limits ?? {}, defaults.limits ?? {}),
    // Only a registry that says something about promoting gets the settings: no key means push.
    ...([
      fields.promote,
      defaults.promote,
      fields.autoMerge,
      defaults.autoMerge,
      fields.githubApiUrl,
      defaults.githubApiUrl,
    ].some((value) => value !== undefined)
      ? {
          promote: {
            mode: fields.promote ?? defaults.promote ?? 'push',
            autoMerge: fields.autoMerge ?? defaults.autoMerge ?? false,
            githubApiUrl: fields.githubApiUrl ?? defaults.githubApiUrl,
          },
        }
      : {}),
    ...retentionOf(fields, defaults),
    // Only "required" is carried: "optional" leaves review to the repo's config, as no key does.
    ...((fields.review ?? defaults.review) === 'required' ? { review: 'required' as const } : {}),
    spend: resolveSpend(fields.spend ?? {}, defaults.spend ?? {}),
    ...(broker === undefined ? {} : { broker }),
    ...notifyOf(fields, defaults),
    ...(fields.metricsPort === undefined ? {} : { metricsPort: fields.metricsPort }),
  };
}

/** The repo's webhooks, only when it has some (most repos have none). */
function notifyOf(fields: Fields, defaults: Fields): { notify?: RegistryRepo['notify'] } {
  const hooks = resolveNotify(fields.notify, defaults.notify);
  return hooks.length ? { notify: hooks } : {};
}

/** retention_days only when the registry sets it (control/retention/policy.ts has the default). */
function retentionOf(fields: Fields, defaults: Fields): { retentionDays?: number } {
  const days = fields.retentionDays ?? defaults.retentionDays;
  return days === undefined ? {} : { retentionDays: days };
}

/**
 * Every proxy port once in the whole registry, of either kind: an agent's port shared with the runner's (of its own
 * or another repo) would hand the agent the git host, or another repo's list.
 */
function reportPortClashes(c: Collected, repos: readonly RegistryRepo[]): void {
  const seen = new Map<number, { repo: string; label: string }>();
  for (const repo of repos) {
    for (const kind of REPO_PORT_KINDS) {
      const port = kind.pick(repo);
      if (port === undefined) continue;
      const other = seen.get(port);
      if (other === undefined) {
        seen.set(port, { repo: repo.name, label: kind.label });
        continue;
      }
      const as = other.label === kind.label ? '' : ` as its ${other.label}`;
      const fix =
        kind.key === 'proxy_port'
          ? 'give every repo its own proxy_port'
          : kind.key === 'runner_proxy_port'
            ? `give every repo its own runner_proxy_port, apart from every proxy_port (or remove repos.${repo.name}.runner_proxy_port: provision allocates a free one)`
            : kind.key === 'broker_port'
              ? `give every repo its own broker_port, apart from every proxy_port and runner_proxy_port (or remove repos.${repo.name}.broker_port: provision allocates a free one)`
              : `give every repo its own metrics_port, apart from every proxy, runner proxy and broker port`;
      report(
        c,
        `repos.${repo.name}`,
        kind.key,
        `${kind.label} ${port} is already used by repo "${other.repo}"${as}`,
        fix,
      );
    }
  }
}

/** Across repos: one proxy port, one user, one checkout each; no loopback port that is a proxy port. */
function reportClashes(c: Collected, repos: readonly RegistryRepo[]): void {
  const clash = (label: string, pick: (repo: RegistryRepo) => string | number, key: string, fix: string) => {
    const seen = new Map<string | number, string>();
    for (const repo of repos) {
      const value = pick(repo);
      const other = seen.get(value);
      if (other !== undefined)
        report(
          c,
          `repos.${repo.name}`,
          key,
          `${label} ${JSON.stringify(value)} is already used by repo "${other}"`,
          fix,
        );
      else seen.set(value, repo.name);
    }
  };
  reportPortClashes(c, repos);
  clash('user', (repo) => repo.user, 'user', 'give every repo its own user: isolation between repos is per user');
  clash('path', (repo) => repo.path, 'path', 'register each checkout once');
  for (const found of loopbackPortClashes(repos))
    report(c, `repos.${found.repo}`, 'loopback_ports', found.problem, found.fix);
  for (const found of namespaceClashes(repos))
    report(c, `repos.${found.repo}`, 'kubernetes.namespace', found.problem, found.fix);
}

/**
 * A repo's Kubernetes settings when its backend (or [defaults]') is "kubernetes"; undefined for the host backend;
 * null when a key it needs is missing (reported).
 */
function kubernetesOf(c: Collected, name: string, fields: Fields, defaults: Fields): RepoKubernetes | undefined | null {
  if ((fields.backend ?? defaults.backend ?? 'host') === 'host') return undefined;
  const resolved = resolveKubernetes(name, fields.kubernetes, defaults.kubernetes);
  if ('kubernetes' in resolved) return resolved.kubernetes;
  const table = `repos.${name}`;
  for (const found of resolved.problems) {
    // At the kubernetes section's header when the repo has one, else at its backend line.
    const at = fields.kubernetes === undefined ? 'backend' : `kubernetes.${found.key}`;
    report(c, table, at, found.problem, found.fix, `${table}.kubernetes.${found.key}`);
  }
  return null;
}

/**
 * A repo with a broker: no allow entry of its own or of [defaults] reaches a brokered provider's host, and the broker's
 * own rules hold for the resolved settings.
 */
function reportBrokerRules(c: Collected, repo: RegistryRepo, fields: Fields): void {
  if (repo.broker === undefined) return;
  for (const found of providerHostsAllowed(repo)) {
    const own = fields.allow?.includes(found.entry) ?? false;
    const { problem, fix } = providerHostProblem(repo.name, repo.broker.port, found, !own);
    report(c, own ? `repos.${repo.name}` : 'defaults', 'allow', problem, fix, `repos.${repo.name}.allow`);
  }
  for (const problem of resolvedBrokerProblems(repo.name, repo.broker))
    report(c, `repos.${repo.name}`, 'broker', problem, 'fix the key it names in the broker table');
}

/**
 * Parses and validates registry.toml. Pure: the text in, every problem out.
 * `schedules` is the scheduler's own check of a cron expression (the
 * Scheduler port), so the registry accepts exactly what watch can run.
 */
export interface RegistryParse {
  readonly registry: Registry;
  readonly problems: ConfigProblem[];
  /**
   * Every [repos.NAME] table in the file, valid or not, in file order: a
   * repo with a typo is still a repo the operator registered, and views
   * (fleet, the dashboard) show it with its problems instead of hiding it.
   */
  readonly declared: readonly string[];
}

export function parseRegistry(text: string, file: string, schedules: ScheduleCheck): RegistryParse {
  const problems: ConfigProblem[] = [];
  let document: Record<string, unknown>;
  try {
    document = parse(text, { unsafeKeyBehaviour: 'throw' }) as Record<string, unknown>;
  } catch (error) {
    const where = error instanceof TomlError ? `${file}:${error.line}` : file;
    const message = error instanceof Error ? error.message.split('\n')[0]! : String(error);
    problems.push({
      file: where,
      key: '(syntax)',
      problem: `not valid TOML: ${message}`,
      fix: 'fix the syntax at that line (see control/registry.example.toml)',
    });
    return { registry: { repos: [] }, problems, declared: [] };
  }
  const c: Collected = { problems, index: undefined, text, file, schedules, proxyPortsBelow: PRIVILEGED_PORT_LIMIT };
  for (const key of Object.keys(document)) {
    if (key !== 'defaults' && key !== 'repos' && key !== PROXY_PORTS_BELOW_KEY) {
      c.index ??= new LineIndex(text);
      const line = c.index.lineOf(key) ?? c.index.lineOf('', key);
      problems.push({
        file: line === undefined ? file : `${file}:${line}`,
        key,
        problem: 'unknown top-level key',
        fix: `only ${PROXY_PORTS_BELOW_KEY}, [defaults] and [repos.NAME] tables belong here`,
      });
    }
  }
  const below = readProxyPortsBelow(c, document[PROXY_PORTS_BELOW_KEY]);
  if (below !== undefined) c.proxyPortsBelow = below;
  let defaults: Fields = {};
  if (document.defaults !== undefined) {
    if (isTable(document.defaults)) defaults = readFields(c, 'defaults', 'defaults', document.defaults);
    else report(c, '', 'defaults', 'must be a table', 'write it as a [defaults] section');
  }
  const repos: RegistryRepo[] = [];
  const reposRaw = document.repos ?? {};
  if (!isTable(reposRaw)) {
    report(c, '', 'repos', 'must be a table of repos', 'write one [repos.NAME] section per repo');
    return { registry: { repos: [] }, problems, declared: [] };
  }
  for (const [name, raw] of Object.entries(reposRaw)) {
    const table = `repos.${name}`;
    if (!REPO_NAME_PATTERN.test(name)) {
      report(
        c,
        table,
        undefined,
        `repo name "${name}" is not allowed`,
        'use lowercase letters, digits and "-", starting with a letter, at most 24 characters',
      );
      continue;
    }
    if (!isTable(raw)) {
      report(c, table, undefined, 'must be a table', `write it as a [${table}] section`);
      continue;
    }
    const before = problems.length;
    const fields = readFields(c, table, 'repo', raw);
    if (raw.path === undefined)
      report(c, table, undefined, 'path is missing', 'add path = "/absolute/path/of/the/checkout"');
    if (raw.proxy_port === undefined)
      report(c, table, undefined, 'proxy_port is missing', 'add proxy_port = <a free port, one per repo>');
    if (raw.broker_port === undefined && declaresBroker(fields.broker, defaults.broker)) {
      const missing = missingBrokerPort(name);
      report(c, table, 'broker_port', missing.problem, missing.fix);
    }
    const { path, proxyPort } = fields;
    if (problems.length > before || path === undefined || proxyPort === undefined) continue;
    const kubernetes = kubernetesOf(c, name, fields, defaults);
    if (kubernetes === null) continue;
    const repo = resolveRepo(name, { ...fields, path, proxyPort }, defaults);
    reportBrokerRules(c, repo, fields);
    repos.push(kubernetes === undefined ? repo : { ...repo, kubernetes });
  }
  reportClashes(c, repos);
  // A bad value of either key is reported already: the pair is judged from the values given.
  const rawDefaults = isTable(document.defaults) ? document.defaults : {};
  const hook = resolveWebhook(
    rawDefaults.webhook_port === undefined ? undefined : (defaults.webhookPort ?? -1),
    rawDefaults.webhook_secret_file === undefined ? undefined : (defaults.webhookSecretFile ?? ''),
  );
  const hookBad = defaults.webhookPort === undefined || defaults.webhookSecretFile === undefined;
  const hookProblem =
    hook.problem ?? (hook.webhook && !hookBad ? webhookPortClash(hook.webhook.port, repos) : undefined);
  if (hookProblem) report(c, 'defaults', hookProblem.key, hookProblem.problem, hookProblem.fix);
  // One pass over the problems, not one per repo.
  const broken = new Set(problems.filter((p) => p.key.startsWith('repos.')).map((p) => p.key.split('.')[1]));
  const valid = repos.filter((repo) => !broken.has(repo.name));
  return {
    registry: {
      repos: valid,
      ...(below === undefined ? {} : { proxyPortsBelow: below }),
      ...(hook.webhook === undefined || hookBad || hookProblem ? {} : { webhook: hook.webhook }),
    },
    problems,
    declared: Object.keys(reposRaw),
  };
}

/** The top-level proxy_ports_below: undefined when absent (1024) or bad (reported). */
function readProxyPortsBelow(c: Collected, value: unknown): number | undefined {
  if (value === undefined) return undefined;
  if (
    typeof value !== 'number' ||
    !Number.isInteger(value) ||
    value < PRIVILEGED_PORT_LIMIT ||
    value > MAX_PROXY_PORTS_BELOW
  ) {
    c.index ??= new LineIndex(c.text);
    const line = c.index.lineOf('', PROXY_PORTS_BELOW_KEY);
    c.problems.push({
      file: line === undefined ? c.file : `${c.file}:${line}`,
      key: PROXY_PORTS_BELOW_KEY,
      problem: `must be an integer ${PRIVILEGED_PORT_LIMIT}-${MAX_PROXY_PORTS_BELOW}, got ${JSON.stringify(value)}`,
      fix: `set it to the host's net.ipv4.ip_unprivileged_port_start once you raised it (sysctl -n net.ipv4.ip_unprivileged_port_start), or remove it (${PRIVILEGED_PORT_LIMIT})`,
    });
    return undefined;
  }
  return value;
}

/** The registry's proxy port limit: proxy_ports_below, else the kernel's default 1024. */
export function proxyPortsBelowOf(registry: Registry): number {
  return registry.proxyPortsBelow ?? PRIVILEGED_PORT_LIMIT;
}

/** Reads and validates the registry; throws UsageError naming every problem. */
export async function readRegistry(
  deps: { readonly fs: Pick<FsPort, 'readTextIfExists'>; readonly scheduler: ScheduleCheck },
  file: string,
): Promise<Registry> {
  return registryFromText(await deps.fs.readTextIfExists(file), file, deps.scheduler);
}

/** Pure: the registry from its text (undefined: the file does not exist); throws UsageError naming every problem. */
export function registryFromText(text: string | undefined, file: string, schedules: ScheduleCheck): Registry {
  if (text === undefined)
    throw new UsageError(
      configValueError(
        file,
        '(file)',
        'the registry does not exist',
        'create it (see control/registry.example.toml) or set AGENT_RUNNER_CONFIG',
      ),
    );
  const { registry, problems } = parseRegistry(text, file, schedules);
  if (problems.length)
    throw new UsageError(
      `the registry has ${problems.length} problem${problems.length === 1 ? '' : 's'}:\n${formatProblems(problems)}`,
    );
  return registry;
}

/** The repo named `name`, or a UsageError listing the registered ones. */
export function findRepo(registry: Registry, name: string, file: string): RegistryRepo {
  const repo = registry.repos.find((candidate) => candidate.name === name);
  if (!repo) {
    const known = registry.repos.map((candidate) => candidate.name);
    throw new UsageError(
      configValueError(
        file,
        `repos.${name}`,
        'no such repo',
        known.length ? `registered repos: ${known.join(', ')}` : 'register it first (agent-runner provision repo ...)',
      ),
    );
  }
  return repo;
}
