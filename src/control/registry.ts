// The registry: root's list of repos and what each may do. Read -> validate
// (pure, every problem at once) -> use. Edits (upsert/remove) work on the text
// so the operator's comments and layout elsewhere in the file survive.
import { parse, TomlError } from 'smol-toml';
import { validate as validateCron } from 'node-cron';
import * as path from 'node:path';
import type { FsPort } from '../ports.js';
import type { ConfigProblem, Registry, RegistryRepo } from '../types.js';
import { configValueError, formatProblems, UsageError } from '../errors.js';
import { FIRST_PROXY_PORT, PRIVILEGED_PORT_LIMIT, proxyPortProblem } from './proxy-ports.js';
import { loopbackPortClashes } from './registry-rules.js';
import { SECRET_NAME } from '../agent/secrets.js';
import { MAX_PARALLEL_CEILING } from '../repo/config.js';
import { isRunLimitKey, readRunLimit, renderRunLimitLines, resolveRunLimits, RUN_LIMIT_KEYS, type RawRunLimits, type RunLimitFields } from './registry-limits.js';

/** Repo names become user names, unit instance names and directory names. */
export const REPO_NAME_PATTERN = /^[a-z][a-z0-9-]{0,23}$/;

/** What useradd accepts (and what privdrop's lookupUser will look up). */
export const USER_NAME_PATTERN = /^[a-z_][a-z0-9_-]{0,31}$/;

export const REGISTRY_DEFAULTS = {
  base: 'main',
  schedule: '* * * * *',
  maxParallel: 2,
  toolchainPath: '/usr/local/bin:/usr/bin:/bin',
  enabled: true,
} as const;

/** The first proxy port upsertRepo hands out when the caller does not pick one (src/control/proxy-ports.ts). */
export { FIRST_PROXY_PORT } from './proxy-ports.js';

/** Variables agent-runner sets itself; the registry may not override them. */
const RESERVED_ENV = new Set(['HOME', 'USER', 'LOGNAME', 'PATH', 'SHELL', 'AGENT_RUNNER_STATE', 'AGENT_RUNNER_CONFIG', 'http_proxy', 'https_proxy', 'HTTP_PROXY', 'HTTPS_PROXY', 'no_proxy', 'NO_PROXY']);

/** A repo as the operator (or provisioning) asks for it; unset fields take the defaults. */
export interface RegistryRepoInput {
  readonly name: string;
  readonly path: string;
  readonly user?: string;
  readonly baseBranch?: string;
  /** Omitted: the lowest port from FIRST_PROXY_PORT up that no other repo uses. */
  readonly proxyPort?: number;
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
  /** tasks_max, memory_max, cpu_weight as written (registry-limits.ts). */
  readonly limits?: RawRunLimits;
}

/** The default Linux user of a repo: `agent-<name>` (at most 30 characters). */
export function defaultUserFor(repoName: string): string {
  return `agent-${repoName}`.slice(0, 32);
}

// ------------------------------------------------------------------ keys

type Scope = 'repo' | 'defaults';
interface KeySpec {
  readonly scopes: readonly Scope[];
  readonly describe: string;
}

const KEYS: Readonly<Record<string, KeySpec>> = {
  path: { scopes: ['repo'], describe: 'absolute path of the repo checkout' },
  user: { scopes: ['repo'], describe: 'Linux user the agents run as' },
  proxy_port: { scopes: ['repo'], describe: 'loopback port of the repo proxy' },
  url: { scopes: ['repo'], describe: 'clone URL' },
  base: { scopes: ['repo', 'defaults'], describe: 'base branch' },
  schedule: { scopes: ['repo', 'defaults'], describe: 'cron expression of the watch tick' },
  max_parallel: { scopes: ['repo', 'defaults'], describe: 'cap on parallel agents' },
  allow: { scopes: ['repo', 'defaults'], describe: 'extra allowlisted domains' },
  loopback_ports: { scopes: ['repo', 'defaults'], describe: 'loopback ports the agent may reach' },
  toolchain_path: { scopes: ['repo', 'defaults'], describe: 'PATH for the agent user' },
  env: { scopes: ['repo', 'defaults'], describe: 'non-secret environment' },
  enabled: { scopes: ['repo', 'defaults'], describe: 'whether watch runs the repo' },
  author_name: { scopes: ['repo', 'defaults'], describe: 'commit author name' },
  author_email: { scopes: ['repo', 'defaults'], describe: 'commit author email' },
  ...Object.fromEntries(Object.entries(RUN_LIMIT_KEYS).map(([key, describe]) => [key, { scopes: ['repo', 'defaults'], describe }])),
};

function editDistance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let previous = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const current = row[j]!;
      row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, previous + (a[i - 1] === b[j - 1] ? 0 : 1));
      previous = current;
    }
  }
  return row[b.length]!;
}

function suggest(key: string, candidates: readonly string[]): string | undefined {
  let best: { name: string; distance: number } | undefined;
  for (const name of candidates) {
    const distance = editDistance(key.toLowerCase(), name);
    if (distance <= 2 && (!best || distance < best.distance)) best = { name, distance };
  }
  return best?.name;
}

// ------------------------------------------------------------------ locating lines

/**
 * The line (1-based) of `key` inside table `table` ("repos.web", "defaults"),
 * or of the table header when key is undefined. A plain scan: good enough to
 * point the operator at the spot, never used for meaning.
 */
export function lineOf(text: string, table: string, key?: string): number | undefined {
  const lines = text.split('\n');
  let current = '';
  let headerLine: number | undefined;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trim();
    const header = /^\[\s*([^\]]+?)\s*\]/.exec(line);
    if (header && !line.startsWith('[[')) {
      current = header[1]!.replace(/\s*\.\s*/g, '.').replace(/"/g, '');
      if (current === table && headerLine === undefined) headerLine = i + 1;
      continue;
    }
    if (key !== undefined && current === table) {
      const assignment = /^"?([A-Za-z0-9_-]+)"?\s*=/.exec(line);
      if (assignment && assignment[1] === key) return i + 1;
    }
  }
  return headerLine;
}

// ------------------------------------------------------------------ validation

interface Collected {
  readonly problems: ConfigProblem[];
  readonly text: string;
  readonly file: string;
}

function report(c: Collected, table: string, key: string | undefined, problem: string, fix: string): void {
  const line = lineOf(c.text, table, key?.split('.')[0]);
  c.problems.push({
    file: line === undefined ? c.file : `${c.file}:${line}`,
    key: key === undefined ? table : `${table}.${key}`,
    problem,
    fix,
  });
}

function isTable(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Date);
}

const DOMAIN = /^\.?(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/;
const BRANCH = /^(?!-)(?!.*\.\.)(?!.*\/\/)(?!.*\.lock$)[A-Za-z0-9._/-]{1,200}(?<![/.])$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

type Fields = {
  base?: string;
  schedule?: string;
  maxParallel?: number;
  allow?: string[];
  loopbackPorts?: number[];
  toolchainPath?: string;
  env?: Record<string, string>;
  enabled?: boolean;
  authorName?: string;
  authorEmail?: string;
  path?: string;
  user?: string;
  proxyPort?: number;
  url?: string;
  limits?: RunLimitFields;
};

/** Checks one table's keys; returns the valid fields, reporting every bad one. */
function readFields(c: Collected, table: string, scope: Scope, raw: Record<string, unknown>): Fields {
  const fields: Fields = {};
  const allowedHere = Object.entries(KEYS)
    .filter(([, spec]) => spec.scopes.includes(scope))
    .map(([name]) => name);
  for (const [key, value] of Object.entries(raw)) {
    const spec = KEYS[key];
    if (!spec || !spec.scopes.includes(scope)) {
      const near = suggest(key, allowedHere);
      const why = spec ? `"${key}" belongs in [repos.NAME], not in [defaults]` : 'unknown key';
      report(c, table, key, why, near && !spec ? `did you mean "${near}"? (see control/registry.example.toml)` : `remove it; allowed keys here: ${allowedHere.join(', ')}`);
      continue;
    }
    const bad = (problem: string, fix: string) => report(c, table, key, problem, fix);
    switch (key) {
      case 'path':
        if (typeof value !== 'string' || !path.isAbsolute(value)) bad(`must be an absolute path, got ${JSON.stringify(value)}`, 'write the full path of the checkout, e.g. "/srv/repos/web"');
        else fields.path = path.normalize(value).replace(/(.)\/$/, '$1');
        break;
      case 'user':
        if (typeof value !== 'string' || !USER_NAME_PATTERN.test(value)) bad(`not a valid Linux user name: ${JSON.stringify(value)}`, 'use lowercase letters, digits, "-" or "_", at most 32 characters, starting with a letter');
        else if (value === 'root') bad('agents never run as root', 'name the repo\'s own user, e.g. "agent-NAME"');
        else fields.user = value;
        break;
      case 'proxy_port':
        if (proxyPortProblem(value as number) !== undefined) bad(`must be a privileged port 1-${PRIVILEGED_PORT_LIMIT - 1}, got ${JSON.stringify(value)}: any user, an agent too, can bind a port from ${PRIVILEGED_PORT_LIMIT} up and cut the repo off from its proxy`, `run agent-runner provision repo ${table.replace(/^repos\./, '')}: it moves the repo to a free port from ${FIRST_PROXY_PORT} up (or set one below ${PRIVILEGED_PORT_LIMIT} yourself, one per repo)`);
        else fields.proxyPort = value as number;
        break;
      case 'url':
        if (typeof value !== 'string' || value.trim() === '') bad('must be a non-empty string', 'write the clone URL, or remove the key');
        else fields.url = value;
        break;
      case 'base':
        if (typeof value !== 'string' || !BRANCH.test(value)) bad(`not a valid branch name: ${JSON.stringify(value)}`, 'write the base branch, e.g. "main"');
        else fields.base = value;
        break;
      case 'schedule':
        if (typeof value !== 'string' || !validateCron(value)) bad(`not a valid cron expression: ${JSON.stringify(value)}`, 'use five fields (minute hour day month weekday), e.g. "*/5 * * * *"');
        else fields.schedule = value;
        break;
      case 'max_parallel':
        if (!Number.isInteger(value) || (value as number) < 1 || (value as number) > MAX_PARALLEL_CEILING) bad(`must be an integer 1-${MAX_PARALLEL_CEILING}, got ${JSON.stringify(value)}`, 'set how many agents may run at once for this repo');
        else fields.maxParallel = value as number;
        break;
      case 'allow':
        if (!Array.isArray(value) || value.some((item) => typeof item !== 'string')) {
          bad('must be an array of domain names', 'e.g. allow = ["registry.npmjs.org", ".pythonhosted.org"]');
        } else {
          const wrong = value.filter((item) => !DOMAIN.test(String(item).toLowerCase()));
          if (wrong.length) bad(`not domain names: ${wrong.map((item) => JSON.stringify(item)).join(', ')}`, 'write bare domains (no scheme, port or path); a leading "." also allows subdomains');
          else fields.allow = value.map((item) => String(item).toLowerCase());
        }
        break;
      case 'loopback_ports':
        if (!Array.isArray(value) || value.some((item) => !Number.isInteger(item) || item < 1 || item > 65535)) bad(`must be an array of ports 1-65535, got ${JSON.stringify(value)}`, 'e.g. loopback_ports = [5432]');
        else fields.loopbackPorts = value as number[];
        break;
      case 'toolchain_path':
        if (typeof value !== 'string' || value.split(':').some((dir) => !path.isAbsolute(dir))) bad(`must be a ":"-separated list of absolute directories, got ${JSON.stringify(value)}`, 'e.g. "/opt/node/bin:/usr/local/bin:/usr/bin:/bin"');
        else fields.toolchainPath = value;
        break;
      case 'env':
        if (!isTable(value)) {
          bad('must be a table of strings', 'e.g. env = { NODE_OPTIONS = "--max-old-space-size=4096" }');
        } else {
          const env: Record<string, string> = {};
          let ok = true;
          for (const [name, item] of Object.entries(value)) {
            const at = (problem: string, fix: string) => {
              ok = false;
              report(c, table, `env.${name}`, problem, fix);
            };
            if (!ENV_NAME.test(name)) at('not a valid variable name', 'use letters, digits and "_", not starting with a digit');
            else if (SECRET_NAME.test(name)) at('looks like a secret; the registry is not a secret store', "put secrets in the repo user's home (mode 0600), never in the registry");
            else if (RESERVED_ENV.has(name)) at('is set by agent-runner itself', name === 'PATH' ? 'use toolchain_path instead' : 'remove it');
            else if (typeof item !== 'string') at(`must be a string, got ${JSON.stringify(item)}`, 'quote the value');
            else env[name] = item;
          }
          if (ok) fields.env = env;
        }
        break;
      case 'enabled':
        if (typeof value !== 'boolean') bad(`must be true or false, got ${JSON.stringify(value)}`, 'write enabled = true or enabled = false');
        else fields.enabled = value;
        break;
      case 'author_name':
        if (typeof value !== 'string' || value.trim() === '' || /[<>\n]/.test(value)) bad('must be a name without <, > or newlines', 'e.g. author_name = "Release Bot"');
        else fields.authorName = value;
        break;
      case 'author_email':
        if (typeof value !== 'string' || !/^[^\s@<>]+@[^\s@<>]+$/.test(value)) bad(`not an email address: ${JSON.stringify(value)}`, 'e.g. author_email = "bot@example.com"');
        else fields.authorEmail = value;
        break;
      default:
        if (isRunLimitKey(key)) readRunLimit(key, value, (fields.limits ??= {}), bad);
    }
  }
  return fields;
}

/** Parses and validates registry.toml. Pure: the text in, every problem out. */
export function parseRegistry(text: string, file: string): { registry: Registry; problems: ConfigProblem[] } {
  const problems: ConfigProblem[] = [];
  let document: Record<string, unknown>;
  try {
    document = parse(text, { unsafeKeyBehaviour: 'throw' }) as Record<string, unknown>;
  } catch (error) {
    const where = error instanceof TomlError ? `${file}:${error.line}` : file;
    const message = error instanceof Error ? error.message.split('\n')[0]! : String(error);
    problems.push({ file: where, key: '(syntax)', problem: `not valid TOML: ${message}`, fix: 'fix the syntax at that line (see control/registry.example.toml)' });
    return { registry: { repos: [] }, problems };
  }
  const c: Collected = { problems, text, file };
  for (const key of Object.keys(document)) {
    if (key !== 'defaults' && key !== 'repos') {
      const line = lineOf(text, key) ?? lineOf(text, '', key);
      problems.push({ file: line === undefined ? file : `${file}:${line}`, key, problem: 'unknown top-level key', fix: 'only [defaults] and [repos.NAME] tables belong here' });
    }
  }
  let defaults: Fields = {};
  if (document.defaults !== undefined) {
    if (isTable(document.defaults)) defaults = readFields(c, 'defaults', 'defaults', document.defaults);
    else report(c, '', 'defaults', 'must be a table', 'write it as a [defaults] section');
  }
  const repos: RegistryRepo[] = [];
  const reposRaw = document.repos ?? {};
  if (!isTable(reposRaw)) {
    report(c, '', 'repos', 'must be a table of repos', 'write one [repos.NAME] section per repo');
    return { registry: { repos: [] }, problems };
  }
  for (const [name, raw] of Object.entries(reposRaw)) {
    const table = `repos.${name}`;
    if (!REPO_NAME_PATTERN.test(name)) {
      report(c, table, undefined, `repo name "${name}" is not allowed`, 'use lowercase letters, digits and "-", starting with a letter, at most 24 characters');
      continue;
    }
    if (!isTable(raw)) {
      report(c, table, undefined, 'must be a table', `write it as a [${table}] section`);
      continue;
    }
    const before = problems.length;
    const fields = readFields(c, table, 'repo', raw);
    if (raw.path === undefined) report(c, table, undefined, 'path is missing', 'add path = "/absolute/path/of/the/checkout"');
    if (raw.proxy_port === undefined) report(c, table, undefined, 'proxy_port is missing', 'add proxy_port = <a free port, one per repo>');
    if (problems.length > before || fields.path === undefined || fields.proxyPort === undefined) continue;
    repos.push({
      name,
      path: fields.path,
      user: fields.user ?? defaultUserFor(name),
      baseBranch: fields.base ?? defaults.base ?? REGISTRY_DEFAULTS.base,
      proxyPort: fields.proxyPort,
      schedule: fields.schedule ?? defaults.schedule ?? REGISTRY_DEFAULTS.schedule,
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
    });
  }
  // Across repos: one proxy port, one user, one checkout each.
  const clash = (label: string, pick: (repo: RegistryRepo) => string | number, key: string, fix: string) => {
    const seen = new Map<string | number, string>();
    for (const repo of repos) {
      const value = pick(repo);
      const other = seen.get(value);
      if (other !== undefined) report(c, `repos.${repo.name}`, key, `${label} ${JSON.stringify(value)} is already used by repo "${other}"`, fix);
      else seen.set(value, repo.name);
    }
  };
  clash('proxy port', (repo) => repo.proxyPort, 'proxy_port', 'give every repo its own proxy_port');
  clash('user', (repo) => repo.user, 'user', 'give every repo its own user: isolation between repos is per user');
  clash('path', (repo) => repo.path, 'path', 'register each checkout once');
  for (const found of loopbackPortClashes(repos)) report(c, `repos.${found.repo}`, 'loopback_ports', found.problem, found.fix);
  const valid = problems.length === 0 ? repos : repos.filter((repo) => !problems.some((p) => p.key.startsWith(`repos.${repo.name}.`) || p.key === `repos.${repo.name}`));
  return { registry: { repos: valid }, problems };
}

export { formatProblems } from '../errors.js';

/** Reads and validates the registry; throws UsageError naming every problem. */
export async function readRegistry(fs: FsPort, file: string): Promise<Registry> {
  const text = await fs.readTextIfExists(file);
  if (text === undefined) throw new UsageError(configValueError(file, '(file)', 'the registry does not exist', 'create it (see control/registry.example.toml) or set AGENT_RUNNER_CONFIG'));
  const { registry, problems } = parseRegistry(text, file);
  if (problems.length) throw new UsageError(`the registry has ${problems.length} problem${problems.length === 1 ? '' : 's'}:\n${formatProblems(problems)}`);
  return registry;
}

/** The repo named `name`, or a UsageError listing the registered ones. */
export function findRepo(registry: Registry, name: string, file: string): RegistryRepo {
  const repo = registry.repos.find((candidate) => candidate.name === name);
  if (!repo) {
    const known = registry.repos.map((candidate) => candidate.name);
    throw new UsageError(configValueError(file, `repos.${name}`, 'no such repo', known.length ? `registered repos: ${known.join(', ')}` : 'register it first (agent-runner provision repo ...)'));
  }
  return repo;
}

// ------------------------------------------------------------------ editing

function tomlString(value: string): string {
  return JSON.stringify(value).replace(/[\u007f]/g, (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

function tomlKey(key: string): string {
  return /^[A-Za-z0-9_-]+$/.test(key) ? key : tomlString(key);
}

/** The [repos.NAME] section for an entry, as text. */
export function renderRepoSection(entry: RegistryRepoInput & { proxyPort: number }): string {
  const lines = [`[repos.${entry.name}]`, `path = ${tomlString(entry.path)}`];
  const add = (key: string, value: string | undefined) => {
    if (value !== undefined) lines.push(`${key} = ${value}`);
  };
  add('user', entry.user === undefined ? undefined : tomlString(entry.user));
  add('base', entry.baseBranch === undefined ? undefined : tomlString(entry.baseBranch));
  add('proxy_port', String(entry.proxyPort));
  add('schedule', entry.schedule === undefined ? undefined : tomlString(entry.schedule));
  add('max_parallel', entry.maxParallel === undefined ? undefined : String(entry.maxParallel));
  add('allow', entry.allow === undefined ? undefined : `[${entry.allow.map(tomlString).join(', ')}]`);
  add('loopback_ports', entry.loopbackPorts === undefined ? undefined : `[${entry.loopbackPorts.join(', ')}]`);
  add('toolchain_path', entry.toolchainPath === undefined ? undefined : tomlString(entry.toolchainPath));
  add('env', entry.env === undefined ? undefined : `{ ${Object.entries(entry.env).map(([k, v]) => `${tomlKey(k)} = ${tomlString(v)}`).join(', ')} }`.replace('{  }', '{}'));
  add('enabled', entry.enabled === undefined ? undefined : String(entry.enabled));
  add('url', entry.url === undefined ? undefined : tomlString(entry.url));
  add('author_name', entry.authorName === undefined ? undefined : tomlString(entry.authorName));
  add('author_email', entry.authorEmail === undefined ? undefined : tomlString(entry.authorEmail));
  lines.push(...renderRunLimitLines(entry.limits));
  return `${lines.join('\n')}\n`;
}

/** [start, end) line indexes of repo `name`'s section and its sub-tables, or undefined. */
function sectionRange(lines: readonly string[], name: string): { start: number; end: number } | undefined {
  const ownHeader = (line: string) => {
    const match = /^\s*\[\s*([^\]]+?)\s*\]/.exec(line);
    if (!match || line.trim().startsWith('[[')) return undefined;
    const table = match[1]!.replace(/\s*\.\s*/g, '.').replace(/"/g, '');
    return table === `repos.${name}` || table.startsWith(`repos.${name}.`) ? 'own' : 'other';
  };
  let start = -1;
  for (let i = 0; i < lines.length; i++) {
    if (ownHeader(lines[i]!) === 'own') {
      start = i;
      break;
    }
  }
  if (start < 0) return undefined;
  let end = lines.length;
  for (let i = start + 1; i < lines.length; i++) {
    if (ownHeader(lines[i]!) === 'other') {
      end = i;
      break;
    }
  }
  // Leave comments that introduce the next section with that section.
  while (end > start + 1 && /^\s*(#.*)?$/.test(lines[end - 1]!)) end--;
  return { start, end };
}

function usedProxyPorts(text: string, except: string): Set<number> {
  try {
    const document = parse(text) as Record<string, unknown>;
    const repos = isTable(document.repos) ? document.repos : {};
    return new Set(
      Object.entries(repos)
        .filter(([name, repo]) => name !== except && isTable(repo) && Number.isInteger(repo.proxy_port))
        .map(([, repo]) => (repo as Record<string, number>).proxy_port!),
    );
  } catch {
    return new Set();
  }
}

/**
 * The registry text with repo `entry.name` added or replaced. Pure. The rest
 * of the file (comments included) is kept byte for byte. The caller validates
 * the result with parseRegistry before writing it.
 */
export function upsertRepo(text: string, entry: RegistryRepoInput): string {
  if (!REPO_NAME_PATTERN.test(entry.name)) {
    throw new UsageError(`repo name "${entry.name}" is not allowed; use lowercase letters, digits and "-", starting with a letter, at most 24 characters`);
  }
  let proxyPort = entry.proxyPort;
  if (proxyPort === undefined) {
    const used = usedProxyPorts(text, entry.name);
    const current = (() => {
      try {
        const repo = ((parse(text) as Record<string, unknown>).repos as Record<string, Record<string, unknown>> | undefined)?.[entry.name];
        return Number.isInteger(repo?.proxy_port) ? (repo!.proxy_port as number) : undefined;
      } catch {
        return undefined;
      }
    })();
    proxyPort = current ?? FIRST_PROXY_PORT;
    while (current === undefined && used.has(proxyPort)) proxyPort++;
  }
  const section = renderRepoSection({ ...entry, proxyPort });
  const lines = text.split('\n');
  const range = sectionRange(lines, entry.name);
  if (!range) {
    const body = text.replace(/\n*$/, '');
    return body === '' ? section : `${body}\n\n${section}`;
  }
  const replaced = [...lines.slice(0, range.start), ...section.replace(/\n$/, '').split('\n'), ...lines.slice(range.end)];
  return replaced.join('\n');
}

/** The registry text without repo `name` (unchanged when it is not there). Pure. */
export function removeRepo(text: string, name: string): string {
  const lines = text.split('\n');
  const range = sectionRange(lines, name);
  if (!range) return text;
  const kept = [...lines.slice(0, range.start), ...lines.slice(range.end)];
  return kept.join('\n').replace(/\n{3,}/g, '\n\n');
}
