// The registry's keys as a table: where each may appear, what it means, and
// the rule that reads it (schema -> normalize). A rule either sets its field
// or reports what is wrong with the fix; it never stops at the first problem.
import { USER_NAME_PATTERN } from '../repo-user/index.js';
import { SECRET_NAME } from '../../agent/secrets.js';
import { MAX_PARALLEL_CEILING } from '../../repo/config.js';
import type { RegistryReview } from '../../repo/review-config.js';
import * as path from 'node:path';
import type { ScheduleCheck } from '../../ports.js';
import type { GateEgress } from '../../types.js';
import { FIRST_PROXY_PORT, PRIVILEGED_PORT_LIMIT, PROXY_PORTS_BELOW_KEY, proxyPortProblem } from './proxy-ports.js';
import { apiUrlProblem } from '../../github/origin.js';
import { DEFAULT_RETENTION_DAYS, MAX_RETENTION_DAYS } from '../retention/index.js';
import { readRunLimit, RUN_LIMIT_KEYS, type RunLimitFields, type RunLimitKey } from './limits.js';
import { readSpendKey, SPEND_KEYS, type SpendFields, type SpendKey } from './spend.js';
import { readBrokerTable, type BrokerFields } from './broker.js';
import { readNotifyList } from './notify.js';
import type { NotifyHook } from '../../types.js';
import { readWebhookPort, readWebhookSecretFile } from './webhook.js';
import { readKubernetesTable, type Backend, type KubernetesFields } from './kubernetes.js';

/**
 * How often an idle watcher asks origin whether its base branch moved (one ls-remote, as the repo user, through its
 * proxy).
 */
export const DEFAULT_REMOTE_POLL_SEC = 15;
export const MAX_REMOTE_POLL_SEC = 3600;

/** Variables agent-runner sets itself; the registry may not override them. */
const RESERVED_ENV = new Set([
  'HOME',
  'USER',
  'LOGNAME',
  'PATH',
  'SHELL',
  'AGENT_RUNNER_STATE',
  'AGENT_RUNNER_CONFIG',
  'http_proxy',
  'https_proxy',
  'HTTP_PROXY',
  'HTTPS_PROXY',
  'no_proxy',
  'NO_PROXY',
]);
const DOMAIN = /^\.?(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/;
const BRANCH = /^(?!-)(?!.*\.\.)(?!.*\/\/)(?!.*\.lock$)[A-Za-z0-9._/-]{1,200}(?<![/.])$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** The valid fields of one table ([defaults] or [repos.NAME]). */
export type Fields = {
  base?: string;
  schedule?: string;
  remotePollSec?: number;
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
  runnerProxyPort?: number;
  anonymousFetch?: boolean;
  gateEgress?: GateEgress;
  url?: string;
  limits?: RunLimitFields;
  promote?: 'push' | 'pr';
  autoMerge?: boolean;
  githubApiUrl?: string;
  retentionDays?: number;
  spend?: SpendFields;
  review?: RegistryReview;
  brokerPort?: number;
  broker?: BrokerFields;
  notify?: NotifyHook[];
  webhookPort?: number;
  webhookSecretFile?: string;
  backend?: Backend;
  kubernetes?: KubernetesFields;
  metricsPort?: number;
};

export type Scope = 'repo' | 'defaults';

/** What a rule reads into and reports through. */
export interface KeyContext {
  /** "repos.web" or "defaults". */
  readonly table: string;
  readonly fields: Fields;
  readonly schedules: ScheduleCheck;
  /** The registry's proxy port limit (its top-level proxy_ports_below, default 1024). */
  readonly proxyPortsBelow: number;
  /** Reports a problem with this key. */
  bad(problem: string, fix: string): void;
  /** Reports a problem with one entry of this key's table (env.NAME). */
  badEntry(entry: string, problem: string, fix: string): void;
}

export interface KeyRule {
  readonly scopes: readonly Scope[];
  readonly describe: string;
  read(value: unknown, at: KeyContext): void;
}

export function isTable(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Date);
}

const BOTH: readonly Scope[] = ['repo', 'defaults'];
const REPO: readonly Scope[] = ['repo'];
const DEFAULTS: readonly Scope[] = ['defaults'];

function readEnv(value: unknown, at: KeyContext): void {
  if (!isTable(value))
    return at.bad('must be a table of strings', 'e.g. env = { NODE_OPTIONS = "--max-old-space-size=4096" }');
  const env: Record<string, string> = {};
  let ok = true;
  for (const [name, item] of Object.entries(value)) {
    const bad = (problem: string, fix: string) => {
      ok = false;
      at.badEntry(name, problem, fix);
    };
    if (!ENV_NAME.test(name))
      bad('not a valid variable name', 'use letters, digits and "_", not starting with a digit');
    else if (SECRET_NAME.test(name))
      bad(
        'looks like a secret; the registry is not a secret store',
        "put secrets in the repo user's home (mode 0600), never in the registry",
      );
    else if (RESERVED_ENV.has(name))
      bad('is set by agent-runner itself', name === 'PATH' ? 'use toolchain_path instead' : 'remove it');
    else if (typeof item !== 'string') bad(`must be a string, got ${JSON.stringify(item)}`, 'quote the value');
    else env[name] = item;
  }
  if (ok) at.fields.env = env;
}

function readAllow(value: unknown, at: KeyContext): void {
  if (!Array.isArray(value) || value.some((item) => typeof item !== 'string'))
    return at.bad('must be an array of domain names', 'e.g. allow = ["registry.npmjs.org", ".pythonhosted.org"]');
  const wrong = value.filter((item) => !DOMAIN.test(String(item).toLowerCase()));
  if (wrong.length)
    at.bad(
      `not domain names: ${wrong.map((item) => JSON.stringify(item)).join(', ')}`,
      'write bare domains (no scheme, port or path); a leading "." also allows subdomains',
    );
  else at.fields.allow = value.map((item) => String(item).toLowerCase());
}

/** proxy_port, runner_proxy_port and broker_port: privileged under the registry's limit. */
function readProxyPort(
  value: unknown,
  at: KeyContext,
  set: (port: number) => void,
  squatted = 'cut the repo off from its proxy',
): void {
  const below = at.proxyPortsBelow;
  if (typeof value !== 'number' || proxyPortProblem(value, below) !== undefined) {
    const raised = below === PRIVILEGED_PORT_LIMIT ? '' : ` (${PROXY_PORTS_BELOW_KEY} = ${below})`;
    at.bad(
      `must be a privileged port 1-${below - 1}${raised}, got ${JSON.stringify(value)}: any user, an agent too, can bind a port from ${below} up and ${squatted}`,
      `run agent-runner provision repo ${at.table.replace(/^repos\./, '')}: it moves the repo to a free port from ${FIRST_PROXY_PORT} up (or set one below ${below} yourself, one per repo)`,
    );
  } else set(value);
}

/**
 * metrics_port: any TCP port but the pool provision hands proxy and broker ports out from, where a repo provisioned
 * later could be given it.
 */
function readMetricsPort(value: unknown, at: KeyContext): void {
  const below = at.proxyPortsBelow;
  const pooled = typeof value === 'number' && value >= FIRST_PROXY_PORT && value < below;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > 65535 || pooled)
    at.bad(
      `must be a TCP port outside ${FIRST_PROXY_PORT}-${below - 1} (where provision hands out proxy and broker ports), got ${JSON.stringify(value)}`,
      `pick a free port from ${below} up, one per repo, e.g. metrics_port = ${Math.max(below, 9470)}; Prometheus scrapes 127.0.0.1:PORT`,
    );
  else at.fields.metricsPort = value;
}

function runLimitRule(key: RunLimitKey, describe: string): KeyRule {
  return { scopes: BOTH, describe, read: (value, at) => readRunLimit(key, value, (at.fields.limits ??= {}), at.bad) };
}

function spendRule(key: SpendKey, describe: string): KeyRule {
  return { scopes: BOTH, describe, read: (value, at) => readSpendKey(key, value, (at.fields.spend ??= {}), at.bad) };
}

export const KEY_RULES: Readonly<Record<string, KeyRule>> = {
  path: {
    scopes: REPO,
    describe: 'absolute path of the repo checkout',
    read(value, at) {
      if (typeof value !== 'string' || !path.isAbsolute(value))
        at.bad(
          `must be an absolute path, got ${JSON.stringify(value)}`,
          'write the full path of the checkout, e.g. "/srv/repos/web"',
        );
      else at.fields.path = path.normalize(value).replace(/(.)\/$/, '$1');
    },
  },
  user: {
    scopes: REPO,
    describe: 'Linux user the agents run as',
    read(value, at) {
      if (typeof value !== 'string' || !USER_NAME_PATTERN.test(value))
        at.bad(
          `not a valid Linux user name: ${JSON.stringify(value)}`,
          'use lowercase letters, digits, "-" or "_", at most 32 characters, starting with a letter',
        );
      else if (value === 'root') at.bad('agents never run as root', 'name the repo\'s own user, e.g. "agent-NAME"');
      else at.fields.user = value;
    },
  },
  proxy_port: {
    scopes: REPO,
    describe: "loopback port of the agent's proxy (the repo's allow list)",
    read: (value, at) => readProxyPort(value, at, (port) => (at.fields.proxyPort = port)),
  },
  runner_proxy_port: {
    scopes: REPO,
    describe: "loopback port of the runner's proxy (the git host alone)",
    read: (value, at) => readProxyPort(value, at, (port) => (at.fields.runnerProxyPort = port)),
  },
  broker_port: {
    scopes: REPO,
    describe:
      "loopback port of the repo's provider broker (with a key file in [repos.NAME.broker] or [defaults.broker])",
    read: (value, at) =>
      readProxyPort(
        value,
        at,
        (port) => (at.fields.brokerPort = port),
        "pose as the repo's broker, collecting its agents' capability tokens",
      ),
  },
  metrics_port: {
    scopes: REPO,
    describe: "loopback port the repo's watcher serves Prometheus metrics on (docs/operations.md, Metrics)",
    read: (value, at) => readMetricsPort(value, at),
  },
  broker: {
    scopes: BOTH,
    describe: 'the provider broker: key files (never keys), key kind, origins, body cap, its egress proxy',
    read(value, at) {
      const fields = readBrokerTable(value, {
        table: at.table,
        bad: at.bad,
        badKey: (key, problem, fix) => at.badEntry(key, problem, fix),
      });
      if (fields !== undefined) at.fields.broker = fields;
    },
  },
  notify: {
    scopes: BOTH,
    describe:
      'webhooks told of parked tasks, drain ends, budgets and more ([[repos.NAME.notify]], [[defaults.notify]])',
    read(value, at) {
      const hooks = readNotifyList(value, { table: at.table, bad: at.bad, badEntry: at.badEntry });
      if (hooks !== undefined) at.fields.notify = hooks;
    },
  },
  anonymous_fetch: {
    scopes: BOTH,
    describe: "the agent may reach the git host too (a public repo fetched without the runner's token)",
    read(value, at) {
      if (typeof value !== 'boolean')
        at.bad(
          `must be true or false, got ${JSON.stringify(value)}`,
          'write anonymous_fetch = true or anonymous_fetch = false',
        );
      else at.fields.anonymousFetch = value;
    },
  },
  gate_egress: {
    scopes: BOTH,
    describe: 'what the gate may reach: "none" (default) or "agent" (the same as the agent)',
    read(value, at) {
      if (value !== 'none' && value !== 'agent')
        at.bad(
          `must be "none" or "agent", got ${JSON.stringify(value)}`,
          'write gate_egress = "none" (the gate reaches nothing) or gate_egress = "agent" (what the agent reaches)',
        );
      else at.fields.gateEgress = value;
    },
  },
  url: {
    scopes: REPO,
    describe: 'clone URL',
    read(value, at) {
      if (typeof value !== 'string' || value.trim() === '')
        at.bad('must be a non-empty string', 'write the clone URL, or remove the key');
      else at.fields.url = value;
    },
  },
  base: {
    scopes: BOTH,
    describe: 'base branch',
    read(value, at) {
      if (typeof value !== 'string' || !BRANCH.test(value))
        at.bad(`not a valid branch name: ${JSON.stringify(value)}`, 'write the base branch, e.g. "main"');
      else at.fields.base = value;
    },
  },
  schedule: {
    scopes: BOTH,
    describe: 'cron expression of the watch tick',
    read(value, at) {
      if (typeof value !== 'string' || !at.schedules.isValid(value))
        at.bad(
          `not a valid cron expression: ${JSON.stringify(value)}`,
          'use five fields (minute hour day month weekday), e.g. "*/5 * * * *"',
        );
      else at.fields.schedule = value;
    },
  },
  remote_poll_sec: {
    scopes: BOTH,
    describe: 'seconds between checks of origin for new commits on the base branch (0: off)',
    read(value, at) {
      if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > MAX_REMOTE_POLL_SEC) {
        at.bad(
          `must be an integer 0-${MAX_REMOTE_POLL_SEC}, got ${JSON.stringify(value)}`,
          `set how often (seconds) the watcher asks origin for new work, e.g. remote_poll_sec = ${DEFAULT_REMOTE_POLL_SEC}; 0 turns it off`,
        );
      } else at.fields.remotePollSec = value;
    },
  },
  max_parallel: {
    scopes: BOTH,
    describe: 'cap on parallel agents',
    read(value, at) {
      if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > MAX_PARALLEL_CEILING)
        at.bad(
          `must be an integer 1-${MAX_PARALLEL_CEILING}, got ${JSON.stringify(value)}`,
          'set how many agents may run at once for this repo',
        );
      else at.fields.maxParallel = value;
    },
  },
  allow: { scopes: BOTH, describe: 'extra allowlisted domains', read: readAllow },
  loopback_ports: {
    scopes: BOTH,
    describe: 'loopback ports the agent may reach',
    read(value, at) {
      if (
        !Array.isArray(value) ||
        value.some((item) => typeof item !== 'number' || !Number.isInteger(item) || item < 1 || item > 65535)
      )
        at.bad(`must be an array of ports 1-65535, got ${JSON.stringify(value)}`, 'e.g. loopback_ports = [5432]');
      else at.fields.loopbackPorts = value as number[];
    },
  },
  toolchain_path: {
    scopes: BOTH,
    describe: 'PATH for the agent user',
    read(value, at) {
      if (typeof value !== 'string' || value.split(':').some((dir) => !path.isAbsolute(dir)))
        at.bad(
          `must be a ":"-separated list of absolute directories, got ${JSON.stringify(value)}`,
          'e.g. "/opt/node/bin:/usr/local/bin:/usr/bin:/bin"',
        );
      else at.fields.toolchainPath = value;
    },
  },
  env: { scopes: BOTH, describe: 'non-secret environment', read: readEnv },
  enabled: {
    scopes: BOTH,
    describe: 'whether watch runs the repo',
    read(value, at) {
      if (typeof value !== 'boolean')
        at.bad(`must be true or false, got ${JSON.stringify(value)}`, 'write enabled = true or enabled = false');
      else at.fields.enabled = value;
    },
  },
  author_name: {
    scopes: BOTH,
    describe: 'commit author name',
    read(value, at) {
      if (typeof value !== 'string' || value.trim() === '' || /[<>\n]/.test(value))
        at.bad('must be a name without <, > or newlines', 'e.g. author_name = "Release Bot"');
      else at.fields.authorName = value;
    },
  },
  author_email: {
    scopes: BOTH,
    describe: 'commit author email',
    read(value, at) {
      if (typeof value !== 'string' || !/^[^\s@<>]+@[^\s@<>]+$/.test(value))
        at.bad(`not an email address: ${JSON.stringify(value)}`, 'e.g. author_email = "bot@example.com"');
      else at.fields.authorEmail = value;
    },
  },
  promote: {
    scopes: BOTH,
    describe: 'how promote reaches the base: "push" it, or through a GitHub pull request ("pr")',
    read(value, at) {
      if (value !== 'push' && value !== 'pr')
        at.bad(
          `must be "push" or "pr", got ${JSON.stringify(value)}`,
          'write promote = "pr" for a protected base (docs/github.md), or promote = "push"',
        );
      else at.fields.promote = value;
    },
  },
  auto_merge: {
    scopes: BOTH,
    describe: 'with promote = "pr": the watcher merges the PR once every check is green',
    read(value, at) {
      if (typeof value !== 'boolean')
        at.bad(`must be true or false, got ${JSON.stringify(value)}`, 'write auto_merge = true or auto_merge = false');
      else at.fields.autoMerge = value;
    },
  },
  github_api_url: {
    scopes: BOTH,
    describe: 'GitHub Enterprise API root, e.g. https://ghe.example.com/api/v3',
    read(value, at) {
      const problem = typeof value === 'string' ? apiUrlProblem(value) : 'must be a string';
      if (problem)
        at.bad(
          `${problem}: ${JSON.stringify(value)}`,
          'write the API root, e.g. github_api_url = "https://ghe.example.com/api/v3" (github.com needs none)',
        );
      else at.fields.githubApiUrl = (value as string).replace(/\/+$/, '');
    },
  },
  retention_days: {
    scopes: BOTH,
    describe: 'days transcripts, run records and finished jobs are kept',
    read(value, at) {
      if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > MAX_RETENTION_DAYS)
        at.bad(
          `must be a whole number of days 1-${MAX_RETENTION_DAYS}, got ${JSON.stringify(value)}`,
          `e.g. retention_days = ${DEFAULT_RETENTION_DAYS}`,
        );
      else at.fields.retentionDays = value;
    },
  },
  review: {
    scopes: BOTH,
    describe: 'whether every task is reviewed before it lands: "required", or "optional" (the repo\'s config decides)',
    read(value, at) {
      if (value !== 'required' && value !== 'optional')
        at.bad(
          `must be "required" or "optional", got ${JSON.stringify(value)}`,
          'write review = "required" (every task is reviewed, whatever the repo\'s .agent/config.json says) or review = "optional" (the repo decides)',
        );
      else at.fields.review = value;
    },
  },
  webhook_port: {
    scopes: DEFAULTS,
    describe: 'loopback port of the GitHub push webhook receiver (agent-runner webhook serve)',
    read: (value, at) => readWebhookPort(value, at.proxyPortsBelow, at.bad, (port) => (at.fields.webhookPort = port)),
  },
  webhook_secret_file: {
    scopes: DEFAULTS,
    describe: "root-owned file (mode 0600) holding the push webhook's secret; never the secret itself",
    read: (value, at) => readWebhookSecretFile(value, at.bad, (file) => (at.fields.webhookSecretFile = file)),
  },
  backend: {
    scopes: BOTH,
    describe: 'where task workers run: "host" (default) or "kubernetes" (a Job per task attempt)',
    read(value, at) {
      if (value !== 'host' && value !== 'kubernetes')
        at.bad(
          `must be "host" or "kubernetes", got ${JSON.stringify(value)}`,
          'write backend = "host" (task workers on this host, the default) or backend = "kubernetes" (with a [repos.NAME.kubernetes] table)',
        );
      else at.fields.backend = value;
    },
  },
  kubernetes: {
    scopes: BOTH,
    describe: 'with backend = "kubernetes": the cluster, namespace, image by digest, the endpoints the pods use',
    read(value, at) {
      const fields = readKubernetesTable(value, {
        table: at.table,
        bad: at.bad,
        badKey: (key, problem, fix) => at.badEntry(key, problem, fix),
      });
      if (fields !== undefined) at.fields.kubernetes = fields;
    },
  },
  ...Object.fromEntries(
    (Object.entries(RUN_LIMIT_KEYS) as [RunLimitKey, string][]).map(([key, describe]) => [
      key,
      runLimitRule(key, describe),
    ]),
  ),
  ...Object.fromEntries(
    (Object.entries(SPEND_KEYS) as [SpendKey, string][]).map(([key, describe]) => [key, spendRule(key, describe)]),
  ),
};

/** The keys allowed in a table of `scope`, in table order. */
export function keysFor(scope: Scope): string[] {
  return Object.entries(KEY_RULES)
    .filter(([, rule]) => rule.scopes.includes(scope))
    .map(([name]) => name);
}

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

/** The nearest allowed key (at most two edits away), for "did you mean". */
export function suggestKey(key: string, candidates: readonly string[]): string | undefined {
  let best: { name: string; distance: number } | undefined;
  for (const name of candidates) {
    const distance = editDistance(key.toLowerCase(), name);
    if (distance <= 2 && (!best || distance < best.distance)) best = { name, distance };
  }
  return best?.name;
}
