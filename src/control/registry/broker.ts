// The registry's broker keys: broker_port (in [repos.NAME], from the proxy
// port pool) and the [repos.NAME.broker] table over [defaults.broker], key by
// key. A repo has a broker when a key file applies to it. The registry names
// key files, never keys: a key written here would be readable by whoever
// reads the registry and would end up in its backups. The broker's own rules
// (src/broker/config.ts, providers.ts) decide what a setting may be; this
// file only reads the table and points each problem at its key. Pure.
import * as path from 'node:path';
import type { RegistryRepo, RepoBroker, RepoBrokerProvider } from '../../types.js';
import {
  brokerRepoProblems,
  DEFAULT_MAX_BODY_BYTES,
  MAX_BODY_BYTES,
  MIN_BODY_BYTES,
  originProblem,
} from '../../broker/config.js';
import { DEFAULT_ORIGINS, type KeyKind } from '../../broker/providers.js';
import type { Provider } from '../../broker/types.js';
import { BROKER_ACCOUNT } from '../broker/index.js';
import { entryMatches } from './egress.js';

/** The valid keys of one broker table ([defaults.broker] or [repos.NAME.broker]). */
export type BrokerFields = {
  anthropicKeyFile?: string;
  anthropicKeyKind?: KeyKind;
  anthropicOrigin?: string;
  openaiKeyFile?: string;
  openaiOrigin?: string;
  maxBodyBytes?: number;
  proxy?: string;
};

/** What a broker table reads into and reports through (one key, or the table itself). */
export interface BrokerTableContext {
  /** "repos.web" or "defaults": the table the broker table sits in. */
  readonly table: string;
  /** A problem with the table itself (not a table). */
  bad(problem: string, fix: string): void;
  /** A problem with one key of the broker table, reported at that key's line. */
  badKey(key: string, problem: string, fix: string): void;
}

const KEY_KINDS: readonly KeyKind[] = ['api-key', 'subscription-token'];

/** Where the docs and messages suggest putting key files. */
export const EXAMPLE_KEY_DIR = '/etc/agent-runner/keys';

/**
 * A key name that would hold a key itself (anthropic_key, api_key, openai_api_key, auth_token, ...), not a file's path:
 * refused wherever it is written in the registry.
 */
export function looksLikeInlineKeyName(name: string): boolean {
  return !name.endsWith('_file') && /(^|_)(api_?key|key|token|secret|password|passwd|credential)s?$/i.test(name);
}

/** A value that is a provider key rather than a path: sk-..., or one long word with no "/". */
function looksLikeKey(value: string): boolean {
  return /^(sk-|sk_|sess-|arcap_)/.test(value) || (!value.includes('/') && /^[A-Za-z0-9_.+=-]{32,}$/.test(value));
}

/** The refusal of a key written into the registry; its text never repeats the value. */
export function inlineKeyRefusal(table: string): { problem: string; fix: string } {
  const name = table === 'defaults' ? 'NAME' : table.replace(/^repos\./, '');
  return {
    problem: 'keys are never written in the registry',
    fix: `put the key in a file owned by ${BROKER_ACCOUNT}, mode 0600 (e.g. ${EXAMPLE_KEY_DIR}/${name}-anthropic), and name it with anthropic_key_file or openai_key_file in [${table}.broker]; remove this line`,
  };
}

function readKeyFile(value: unknown, key: string, provider: string, at: BrokerTableContext): string | undefined {
  const name = at.table === 'defaults' ? 'NAME' : at.table.replace(/^repos\./, '');
  if (typeof value !== 'string' || value.trim() === '') {
    at.badKey(key, 'must be the path of a key file', `e.g. ${key} = "${EXAMPLE_KEY_DIR}/${name}-${provider}"`);
    return undefined;
  }
  if (looksLikeKey(value)) {
    const refusal = inlineKeyRefusal(at.table);
    at.badKey(key, `holds what looks like a key, not a path: ${refusal.problem}`, refusal.fix);
    return undefined;
  }
  if (!path.isAbsolute(value)) {
    at.badKey(
      key,
      `must be an absolute path, got ${JSON.stringify(value)}`,
      `write the full path of the key file, e.g. ${key} = "${EXAMPLE_KEY_DIR}/${name}-${provider}"`,
    );
    return undefined;
  }
  return path.normalize(value);
}

function readUrl(value: unknown, key: string, fix: string, at: BrokerTableContext): string | undefined {
  const problem = typeof value === 'string' ? originProblem(value, key) : `${key} must be a string`;
  if (problem === undefined) return value as string;
  at.badKey(key, problem, fix);
  return undefined;
}

/** A provider's origin: scheme://host[:port]. */
const readOrigin = (value: unknown, provider: Provider, at: BrokerTableContext) =>
  readUrl(
    value,
    `${provider}_origin`,
    `write scheme://host[:port], e.g. ${provider}_origin = "${DEFAULT_ORIGINS[provider]}" (the default: remove the key)`,
    at,
  );

/** The keys of a broker table, each with the rule that reads it. */
const BROKER_KEYS: Readonly<Record<string, (value: unknown, fields: BrokerFields, at: BrokerTableContext) => void>> = {
  anthropic_key_file(value, fields, at) {
    const file = readKeyFile(value, 'anthropic_key_file', 'anthropic', at);
    if (file !== undefined) fields.anthropicKeyFile = file;
  },
  anthropic_key_kind(value, fields, at) {
    if (typeof value === 'string' && (KEY_KINDS as readonly string[]).includes(value))
      fields.anthropicKeyKind = value as KeyKind;
    else
      at.badKey(
        'anthropic_key_kind',
        `must be "api-key" or "subscription-token", got ${JSON.stringify(value)}`,
        'write anthropic_key_kind = "api-key" (an API key, the documented path and the default) or "subscription-token" (a claude setup-token, opt-in)',
      );
  },
  anthropic_origin(value, fields, at) {
    const origin = readOrigin(value, 'anthropic', at);
    if (origin !== undefined) fields.anthropicOrigin = origin;
  },
  openai_key_file(value, fields, at) {
    const file = readKeyFile(value, 'openai_key_file', 'openai', at);
    if (file !== undefined) fields.openaiKeyFile = file;
  },
  openai_origin(value, fields, at) {
    const origin = readOrigin(value, 'openai', at);
    if (origin !== undefined) fields.openaiOrigin = origin;
  },
  max_body_bytes(value, fields, at) {
    if (typeof value === 'number' && Number.isInteger(value) && value >= MIN_BODY_BYTES && value <= MAX_BODY_BYTES)
      fields.maxBodyBytes = value;
    else
      at.badKey(
        'max_body_bytes',
        `must be a whole number of bytes ${MIN_BODY_BYTES}-${MAX_BODY_BYTES}, got ${JSON.stringify(value)}`,
        `e.g. max_body_bytes = ${DEFAULT_MAX_BODY_BYTES} (the default, Anthropic's own limit: remove the key)`,
      );
  },
  proxy(value, fields, at) {
    const proxy = readUrl(
      value,
      'proxy',
      "write the broker's egress proxy as http://127.0.0.1:PORT, or remove the key (the broker then connects to each origin directly)",
      at,
    );
    if (proxy !== undefined) fields.proxy = proxy;
  },
};

/** The keys a broker table may hold, in table order. */
export const BROKER_TABLE_KEYS: readonly string[] = Object.keys(BROKER_KEYS);

/** Reads one broker table, reporting every bad key at its line; returns the valid fields. */
export function readBrokerTable(value: unknown, at: BrokerTableContext): BrokerFields | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value) || value instanceof Date) {
    at.bad('must be a table', `write it as a [${at.table}.broker] section`);
    return undefined;
  }
  const fields: BrokerFields = {};
  for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
    const rule = Object.hasOwn(BROKER_KEYS, key) ? BROKER_KEYS[key] : undefined;
    if (rule) rule(item, fields, at);
    else if (looksLikeInlineKeyName(key)) {
      const refusal = inlineKeyRefusal(at.table);
      at.badKey(key, refusal.problem, refusal.fix);
    } else
      at.badKey(key, 'unknown key', `remove it; allowed keys in [${at.table}.broker]: ${BROKER_TABLE_KEYS.join(', ')}`);
  }
  return fields;
}

/** Whether a key file applies to a repo: its own broker table's, or [defaults.broker]'s. */
export function declaresBroker(own: BrokerFields | undefined, defaults: BrokerFields | undefined): boolean {
  const merged = { ...defaults, ...own };
  return merged.anthropicKeyFile !== undefined || merged.openaiKeyFile !== undefined;
}

/** The repo's broker from broker_port and its table over [defaults.broker]; undefined when no key file applies. */
export function resolveBroker(
  port: number,
  own: BrokerFields | undefined,
  defaults: BrokerFields | undefined,
): RepoBroker | undefined {
  const merged: BrokerFields = { ...defaults, ...own };
  const providers: { anthropic?: RepoBrokerProvider; openai?: RepoBrokerProvider } = {};
  if (merged.anthropicKeyFile !== undefined)
    providers.anthropic = {
      origin: merged.anthropicOrigin ?? DEFAULT_ORIGINS.anthropic,
      keyFile: merged.anthropicKeyFile,
      keyKind: merged.anthropicKeyKind ?? 'api-key',
    };
  if (merged.openaiKeyFile !== undefined)
    providers.openai = {
      origin: merged.openaiOrigin ?? DEFAULT_ORIGINS.openai,
      keyFile: merged.openaiKeyFile,
      keyKind: 'api-key',
    };
  if (providers.anthropic === undefined && providers.openai === undefined) return undefined;
  return {
    port,
    providers,
    maxBodyBytes: merged.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES,
    ...(merged.proxy === undefined ? {} : { proxy: merged.proxy }),
  };
}

/**
 * The broker's own rules over the resolved settings (src/broker/config.ts): what a broker would refuse at its start,
 * the registry refuses first. The key checks above catch each of these at its line; this is the rule of record.
 */
export function resolvedBrokerProblems(repo: string, broker: RepoBroker): string[] {
  return brokerRepoProblems({ repo, providers: broker.providers, maxBodyBytes: broker.maxBodyBytes, brokerUid: 0 });
}

/** The missing broker_port of a repo with a broker. */
export function missingBrokerPort(repo: string): { problem: string; fix: string } {
  return {
    problem:
      'broker_port is missing: a key file applies to this repo, so its agents reach their model through a broker',
    fix: `run agent-runner provision repo ${repo} (it allocates a free privileged port), or add broker_port = <a free port below the proxy port limit, one per repo>`,
  };
}

/** One allow entry of a repo with a broker that lets its agents reach a provider directly. */
export interface ProviderHostEntry {
  readonly entry: string;
  readonly host: string;
  readonly provider: string;
  readonly origin: string;
}

/** Pure: the allow entries of a repo with a broker that cover a host of its brokered providers' origins. */
export function providerHostsAllowed(repo: Pick<RegistryRepo, 'allow' | 'broker'>): ProviderHostEntry[] {
  if (repo.broker === undefined) return [];
  const hosts = Object.entries(repo.broker.providers).flatMap(([provider, settings]) =>
    settings === undefined ? [] : [{ provider, origin: settings.origin, host: new URL(settings.origin).hostname }],
  );
  return repo.allow.flatMap((entry) =>
    hosts.filter((host) => entryMatches(entry, host.host)).map((host) => ({ entry, ...host })),
  );
}

/** The problem and fix for such an entry; `inDefaults`: the entry comes from [defaults] allow. */
export function providerHostProblem(
  repo: string,
  port: number,
  found: ProviderHostEntry,
  inDefaults: boolean,
): { problem: string; fix: string } {
  const covers = found.entry === found.host ? '' : ` covers ${found.host}, which`;
  return {
    problem: `"${found.entry}"${covers} is the host of the ${found.provider} origin ${found.origin}, and repo "${repo}" has a broker: its agents reach their model through the broker on 127.0.0.1:${port}, never directly`,
    fix: inDefaults
      ? `remove "${found.entry}" from allow in [defaults] (list it in the [repos.NAME] allow of repos without a broker, whose agents use their own logins)`
      : `remove "${found.entry}" from repos.${repo}.allow`,
  };
}

/** A broker table as written, kept by provisioning when it rewrites the repo's section. */
export type RawBroker = Readonly<Record<string, string | number>>;

export function rawBroker(raw: Readonly<Record<string, unknown>>): RawBroker | undefined {
  const table = raw.broker;
  if (typeof table !== 'object' || table === null || Array.isArray(table)) return undefined;
  const kept: Record<string, string | number> = {};
  for (const [key, value] of Object.entries(table as Record<string, unknown>))
    if (typeof value === 'string' || typeof value === 'number') kept[key] = value;
  return Object.keys(kept).length ? kept : undefined;
}

/** Whether the raw text's repo (or [defaults]) names a key file: provisioning allocates broker_port for it. */
export function rawDeclaresBroker(
  repo: Readonly<Record<string, unknown>> | undefined,
  defaults: Readonly<Record<string, unknown>> | undefined,
): boolean {
  const named = (table: unknown) =>
    typeof table === 'object' &&
    table !== null &&
    ['anthropic_key_file', 'openai_key_file'].some(
      (key) => typeof (table as Record<string, unknown>)[key] === 'string',
    );
  return named(repo?.broker) || named(defaults?.broker);
}
