// The broker's records in the ledger: one per metered provider response,
// appended by root the moment the run's broker reports it, so a run killed
// mid-way still has what it spent. The broker parses agents' HTTP, so root
// believes only the bounded shape its control channel checked; here every
// field is checked again: a count out of range or a name of odd characters is
// unknown (null), a time is held inside the grant's possible life (at most a
// day before root sealed it, never after), and a record naming another repo,
// a run id that is not one, or an unknown provider is refused whole.
// USD is root's arithmetic from the price table, never the broker's word, and
// unknown (null) for a model without a price, never zero. Pure.
import type { Provider, UsageReading, UsageRecord } from '../../broker/types.js';
import type { PriceOf } from '../../broker/budget.js';
import { PROVIDERS } from '../../broker/providers.js';
import { RUN_ID } from '../../broker/serve/config.js';
import { MAX_GRANT_TTL_SEC, NO_TASK } from '../../broker/serve/control.js';
import { isSafeTaskId } from '../../board/parse.js';
import { REPO_NAME_PATTERN } from '../registry/index.js';
import { count, isLedgerTime, MAX_RECORD_USD, MAX_TOKENS, NAME, nameOrNull } from './bounds.js';

/** One metered provider response as root sealed it into the ledger. */
export interface BrokerLedgerRecord {
  readonly v: 1;
  /** Records without a source are the drain's session reports. */
  readonly source: 'broker';
  readonly repo: string;
  readonly run: string;
  /** The grant's task; null for a command that named none. */
  readonly task: string | null;
  /** The session header the runner set; informational (an agent could change it). */
  readonly session: string | null;
  readonly provider: Provider;
  readonly model: string | null;
  /** The provider's HTTP status; null when the broker sent none that is one. */
  readonly status: number | null;
  /** How far the response's usage could be read (a cut stream is partial). */
  readonly usage: UsageReading;
  readonly startedAt: string;
  readonly endedAt: string;
  readonly inputTokens: number | null;
  readonly outputTokens: number | null;
  readonly cacheReadTokens: number | null;
  readonly cacheWriteTokens: number | null;
  /** List-price USD of the tokens above; null when the model has no known price or the usage could not be read. */
  readonly costUsd: number | null;
  /** When root wrote it. */
  readonly sealedAt: string;
}

export type BrokerLedgerResult =
  { readonly ok: true; readonly record: BrokerLedgerRecord } | { readonly ok: false; readonly reason: string };

const USAGE_READINGS: readonly UsageReading[] = ['read', 'partial', 'none'];
const GRANT_LIFE_MS = MAX_GRANT_TTL_SEC * 1000;
const quoted = (value: unknown) => JSON.stringify(String(value).slice(0, 64));

/** An ISO time no later than `latest` and no earlier than a grant could have lived before it; else `fallback`. */
function timeBefore(value: unknown, latest: string, fallback: string): string {
  const at = typeof value === 'string' && value.length <= 40 ? Date.parse(value) : Number.NaN;
  const end = Date.parse(latest);
  if (Number.isNaN(at) || at > end || at < end - GRANT_LIFE_MS) return fallback;
  return new Date(at).toISOString();
}

/** Pure: one usage record from a run's broker, checked, as root records it; or why it is not recorded. */
export function brokerLedgerRecord(record: UsageRecord, sealedAt: string, priceOf: PriceOf): BrokerLedgerResult {
  const raw = record as unknown as Partial<Record<keyof UsageRecord, unknown>>;
  if (typeof raw.repo !== 'string' || !REPO_NAME_PATTERN.test(raw.repo))
    return { ok: false, reason: `repo ${quoted(raw.repo)} is not a repo name` };
  if (typeof raw.run !== 'string' || !RUN_ID.test(raw.run))
    return { ok: false, reason: `run ${quoted(raw.run)} is not a run id` };
  if (!PROVIDERS.includes(raw.provider as Provider))
    return { ok: false, reason: `provider ${quoted(raw.provider)} is not one the broker serves` };
  const endedAt = timeBefore(raw.endedAt, sealedAt, sealedAt);
  const startedAt = timeBefore(raw.startedAt, endedAt, endedAt);
  const model = nameOrNull(raw.model);
  const usage = USAGE_READINGS.includes(raw.usage as UsageReading) ? (raw.usage as UsageReading) : 'none';
  const status = Number.isSafeInteger(raw.status) && (raw.status as number) >= 100 && (raw.status as number) <= 599;
  // A provider's error answer (a 429, a 400, a 500) that said no usage generated nothing and is not billed: zero,
  // not unknown. A successful answer without usage stays unknown.
  const unbilled = status && (raw.status as number) >= 400 && usage === 'none';
  const tokens = {
    inputTokens: unbilled ? 0 : count(raw.inputTokens, MAX_TOKENS),
    outputTokens: unbilled ? 0 : count(raw.outputTokens, MAX_TOKENS),
    cacheReadTokens: unbilled ? 0 : count(raw.cacheReadTokens, MAX_TOKENS),
    cacheWriteTokens: unbilled ? 0 : count(raw.cacheWriteTokens, MAX_TOKENS),
  };
  // Priced from the checked figures only: an absurd count is unknown, not billed; no count at all, no known cost.
  const counted = Object.values(tokens).some((value) => value !== null);
  const usd = unbilled ? 0 : counted ? priceOf({ ...record, ...tokens, model, usage }) : undefined;
  return {
    ok: true,
    record: {
      v: 1,
      source: 'broker',
      repo: raw.repo,
      run: raw.run,
      task: typeof raw.task === 'string' && raw.task !== NO_TASK && isSafeTaskId(raw.task) ? raw.task : null,
      session: nameOrNull(raw.session),
      provider: raw.provider as Provider,
      model,
      status: status ? (raw.status as number) : null,
      usage,
      startedAt,
      endedAt,
      ...tokens,
      costUsd: usd === undefined ? null : count(Math.round(usd * 1e9) / 1e9, MAX_RECORD_USD),
      sealedAt,
    },
  };
}

const FIELDS: readonly (keyof BrokerLedgerRecord)[] = [
  'v',
  'source',
  'repo',
  'run',
  'task',
  'session',
  'provider',
  'model',
  'status',
  'usage',
  'startedAt',
  'endedAt',
  'inputTokens',
  'outputTokens',
  'cacheReadTokens',
  'cacheWriteTokens',
  'costUsd',
  'sealedAt',
];

const nullable = (value: unknown, ok: (value: unknown) => boolean) => value === null || ok(value);
const isName = (value: unknown) => typeof value === 'string' && NAME.test(value);

/** Pure: what is wrong with a broker line read back from a day file, or undefined when it is one root wrote. */
export function brokerLineProblem(value: Record<string, unknown>): string | undefined {
  const extra = Object.keys(value).find((key) => !(FIELDS as readonly string[]).includes(key));
  if (extra !== undefined) return `unknown field ${quoted(extra)}`;
  const missing = FIELDS.find((key) => !(key in value));
  if (missing !== undefined) return `${missing} is missing`;
  if (typeof value.repo !== 'string' || !REPO_NAME_PATTERN.test(value.repo)) return 'repo is not a repo name';
  if (typeof value.run !== 'string' || !RUN_ID.test(value.run)) return 'run is not a run id';
  if (!nullable(value.task, (task) => typeof task === 'string' && isSafeTaskId(task))) return 'task is not a task id';
  if (!nullable(value.session, isName) || !nullable(value.model, isName)) return 'session or model is malformed';
  if (!PROVIDERS.includes(value.provider as Provider)) return 'provider is unknown';
  if (!nullable(value.status, (status) => Number.isSafeInteger(status) && (status as number) >= 100))
    return 'status is not an HTTP status';
  if (!USAGE_READINGS.includes(value.usage as UsageReading)) return 'usage is not read, partial or none';
  if (![value.startedAt, value.endedAt, value.sealedAt].every(isLedgerTime)) return 'a time is not an ISO time';
  for (const field of ['inputTokens', 'outputTokens', 'cacheReadTokens', 'cacheWriteTokens'] as const)
    if (!nullable(value[field], (tokens) => count(tokens, MAX_TOKENS) !== null)) return `${field} is not a count`;
  if (!nullable(value.costUsd, (usd) => count(usd, MAX_RECORD_USD) !== null)) return 'costUsd is not an amount';
  return undefined;
}
