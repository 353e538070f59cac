// The registry's webhooks: [[defaults.notify]] and [[repos.NAME.notify]],
// each with url, events and format. A repo's own list replaces the
// defaults' (notify = [] turns them off for it). The URL is root's alone:
// it lives in the registry (0600) and root's outbox, is never handed to a
// drain, and no message here repeats more of it than its host. The event
// names and what a webhook URL may be are ruled here, where the registry
// checks them; control/notify uses them from here. Pure.
import type { NotifyFormat, NotifyHook } from '../../types.js';

/** The events a webhook may be sent (control/notify derives them; docs/operations.md, "Notifications"). */
export const NOTIFY_EVENT_KINDS = [
  'task-parked',
  'task-blocked',
  'drain-ended',
  'staging-ready',
  'budget-hit',
  'rate-limit-wait',
  'isolation-failed',
  'repo-skipped',
] as const;

export type NotifyEventKind = (typeof NOTIFY_EVENT_KINDS)[number];

export function isNotifyEventKind(name: string): name is NotifyEventKind {
  return (NOTIFY_EVENT_KINDS as readonly string[]).includes(name);
}

/** Hosts an http:// webhook may name: root's own loopback, where no network sees the body. */
const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]', '::1']);

function isLoopback(hostname: string): boolean {
  return LOOPBACK_HOSTS.has(hostname) || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname);
}

/** The URL as it may be shown: scheme://host[:port]/… (path, query, user and password hidden). */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    const hidden = parsed.pathname !== '/' || parsed.search !== '' || parsed.username !== '' || parsed.hash !== '';
    return `${parsed.protocol}//${parsed.host}/${hidden ? '…' : ''}`;
  } catch {
    return '(not a URL)';
  }
}

/** Why `url` cannot be a webhook, or undefined when it can: https anywhere, or http to loopback only. */
export function webhookUrlProblem(url: string): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'is not a URL';
  }
  if (parsed.username !== '' || parsed.password !== '')
    return `carries a user or password (${redactUrl(url)}): put a token in the path or query instead`;
  if (parsed.protocol === 'https:') return undefined;
  if (parsed.protocol === 'http:')
    return isLoopback(parsed.hostname)
      ? undefined
      : `is plain http to ${parsed.host}: the body and the URL's token would cross the network readable`;
  return `has scheme ${parsed.protocol.replace(/:$/, '')}, not https`;
}

function isTable(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Date);
}

/** What a notify list reads into and reports through. */
export interface NotifyContext {
  /** "repos.web" or "defaults". */
  readonly table: string;
  /** A problem with the list itself. */
  bad(problem: string, fix: string): void;
  /** A problem with one key of one entry ("1.url": the first [[…notify]]'s url). */
  badEntry(entry: string, problem: string, fix: string): void;
}

const FORMATS: readonly NotifyFormat[] = ['json', 'slack'];
const ENTRY_KEYS = ['url', 'events', 'format'] as const;

function readUrl(value: unknown, number: number, at: NotifyContext): string | undefined {
  const problem = typeof value === 'string' ? webhookUrlProblem(value) : 'must be a string';
  if (problem === undefined) return value as string;
  at.badEntry(
    `${number}.url`,
    problem,
    'write the webhook\'s https URL, e.g. url = "https://hooks.slack.com/services/…" (http only to 127.0.0.1 or localhost)',
  );
  return undefined;
}

function readEvents(value: unknown, number: number, at: NotifyContext): string[] | undefined {
  const fix = `list some of: ${NOTIFY_EVENT_KINDS.join(', ')} (or remove events: every one is sent)`;
  if (!Array.isArray(value) || value.some((item) => typeof item !== 'string')) {
    at.badEntry(`${number}.events`, 'must be a list of event names', fix);
    return undefined;
  }
  const unknown = (value as string[]).filter((name) => !isNotifyEventKind(name));
  if (unknown.length) {
    at.badEntry(`${number}.events`, `unknown events: ${unknown.map((name) => JSON.stringify(name)).join(', ')}`, fix);
    return undefined;
  }
  if (!value.length) {
    at.badEntry(`${number}.events`, 'is empty: this webhook would never be sent anything', fix);
    return undefined;
  }
  return [...new Set(value as string[])];
}

function readFormat(value: unknown, number: number, at: NotifyContext): NotifyFormat | undefined {
  if (typeof value === 'string' && (FORMATS as readonly string[]).includes(value)) return value as NotifyFormat;
  at.badEntry(
    `${number}.format`,
    `must be "json" or "slack", got ${JSON.stringify(value)}`,
    'write format = "slack" for a Slack-compatible incoming webhook ({"text": …}), or format = "json" (the default)',
  );
  return undefined;
}

function readEntry(raw: unknown, number: number, at: NotifyContext): NotifyHook | undefined {
  if (!isTable(raw)) {
    at.badEntry(String(number), 'must be a table', `write each webhook as its own [[${at.table}.notify]] section`);
    return undefined;
  }
  let ok = true;
  for (const key of Object.keys(raw))
    if (!(ENTRY_KEYS as readonly string[]).includes(key)) {
      ok = false;
      at.badEntry(`${number}.${key}`, 'unknown key', `remove it; allowed keys: ${ENTRY_KEYS.join(', ')}`);
    }
  if (raw.url === undefined) {
    at.badEntry(`${number}.url`, 'url is missing', `add url = "https://…" to this [[${at.table}.notify]]`);
    return undefined;
  }
  const url = readUrl(raw.url, number, at);
  const events = raw.events === undefined ? [...NOTIFY_EVENT_KINDS] : readEvents(raw.events, number, at);
  const format = raw.format === undefined ? 'json' : readFormat(raw.format, number, at);
  if (!ok || url === undefined || events === undefined || format === undefined) return undefined;
  return { url, events, format };
}

/** Reads one notify list, reporting every bad entry and key; undefined when any is bad. */
export function readNotifyList(value: unknown, at: NotifyContext): NotifyHook[] | undefined {
  if (!Array.isArray(value)) {
    at.bad(
      'must be a list of webhooks',
      `write each webhook as its own [[${at.table}.notify]] section with url = "https://…"`,
    );
    return undefined;
  }
  const hooks = value.map((raw, index) => readEntry(raw, index + 1, at));
  if (hooks.some((hook) => hook === undefined)) return undefined;
  const seen = new Set<string>();
  for (const [index, hook] of (hooks as NotifyHook[]).entries()) {
    if (seen.has(hook.url)) {
      at.badEntry(
        `${index + 1}.url`,
        `names the same webhook (${redactUrl(hook.url)}) as an entry before it`,
        'merge the two entries: list every event once in one of them',
      );
      return undefined;
    }
    seen.add(hook.url);
  }
  return hooks as NotifyHook[];
}

/** A repo's webhooks: its own list when it has one, else [defaults]'s. */
export function resolveNotify(
  own: readonly NotifyHook[] | undefined,
  defaults: readonly NotifyHook[] | undefined,
): readonly NotifyHook[] {
  return own ?? defaults ?? [];
}
