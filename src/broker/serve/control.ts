// The control channel between root's dispatch and the broker process of one run: JSON lines over the broker's fd 3,
// a socket only root and the broker hold. Root sends the run's settings once, then asks for a capability per agent
// command and revokes it when that command ends; the broker answers grants and reports every metered response and
// provider 429. Pure: what each line is, how it is written, and the checks each side makes of the other's lines
// (the broker parses HTTP from agents, so root believes nothing of its lines beyond their shape and bounds).
import { isSafeTaskId } from '../../board/parse.js';
import { PROVIDERS } from '../providers.js';
import { TOKEN_SHAPE } from '../capabilities.js';
import type { RateLimitRecord, UsageRecord } from '../types.js';

/** Bytes of one control line either way: a config or a usage record is a few KiB. */
export const CONTROL_LINE_BYTES = 64 * 1024;
/** The task of a grant whose command named none (a setup command, a local run). */
export const NO_TASK = '-';
/** Longest capability a run may ask for: a day (a run's wall limit is shorter). */
export const MAX_GRANT_TTL_SEC = 24 * 3600;

export type RootMessage =
  | { readonly op: 'config'; readonly config: unknown }
  | { readonly op: 'grant'; readonly id: number; readonly task: string; readonly uid: number; readonly ttlSec: number }
  | { readonly op: 'revoke'; readonly id: number }
  /** The run is over: stop taking requests, report what the last ones cost, then close the channel. */
  | { readonly op: 'end' };

export type BrokerMessage =
  | { readonly event: 'ready'; readonly port: number }
  | { readonly event: 'failed'; readonly reason: string }
  | { readonly event: 'granted'; readonly id: number; readonly token: string }
  | { readonly event: 'refused'; readonly id: number; readonly reason: string }
  | { readonly event: 'usage'; readonly record: UsageRecord }
  | { readonly event: 'rate-limited'; readonly record: RateLimitRecord };

export type Parsed<T> = { readonly ok: true; readonly message: T } | { readonly ok: false; readonly reason: string };

export function encodeControl(message: RootMessage | BrokerMessage): string {
  return JSON.stringify(message);
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const isId = (value: unknown): value is number => Number.isSafeInteger(value) && (value as number) > 0;
const isCount = (value: unknown) => value === null || (Number.isSafeInteger(value) && (value as number) >= 0);
const isTime = (value: unknown) => typeof value === 'string' && value.length <= 40 && !Number.isNaN(Date.parse(value));
const shortText = (value: unknown, max: number) => typeof value === 'string' && value.length <= max;
const nullableText = (value: unknown, max: number) => value === null || shortText(value, max);

function fieldsProblem(message: Record<string, unknown>, fields: readonly string[]): string | undefined {
  const extra = Object.keys(message).find((key) => !fields.includes(key));
  if (extra !== undefined) return `unknown field ${JSON.stringify(extra.slice(0, 64))}`;
  const missing = fields.find((key) => !(key in message));
  return missing === undefined ? undefined : `${missing} is missing`;
}

function readLine(line: string): Record<string, unknown> | string {
  if (Buffer.byteLength(line, 'utf8') > CONTROL_LINE_BYTES)
    return `the line is longer than ${CONTROL_LINE_BYTES} bytes`;
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return 'the line is not JSON';
  }
  return isRecord(value) ? value : 'the message is not an object';
}

/** The broker's check of a line from root. */
export function parseRootMessage(line: string): Parsed<RootMessage> {
  const message = readLine(line);
  if (typeof message === 'string') return { ok: false, reason: message };
  const refuse = (reason: string): Parsed<RootMessage> => ({ ok: false, reason });
  switch (message.op) {
    case 'config': {
      const problem = fieldsProblem(message, ['op', 'config']);
      return problem ? refuse(problem) : { ok: true, message: { op: 'config', config: message.config } };
    }
    case 'grant': {
      const problem = fieldsProblem(message, ['op', 'id', 'task', 'uid', 'ttlSec']);
      if (problem) return refuse(problem);
      if (!isId(message.id)) return refuse('id is not a positive integer');
      if (typeof message.task !== 'string' || (message.task !== NO_TASK && !isSafeTaskId(message.task)))
        return refuse(`task ${JSON.stringify(String(message.task).slice(0, 64))} is not a task id`);
      if (!Number.isSafeInteger(message.uid) || (message.uid as number) < 1)
        return refuse('uid is not a user id (root never holds a capability)');
      if (!isId(message.ttlSec) || (message.ttlSec as number) > MAX_GRANT_TTL_SEC)
        return refuse(`ttlSec is not between 1 and ${MAX_GRANT_TTL_SEC}`);
      return { ok: true, message: message as unknown as RootMessage };
    }
    case 'revoke': {
      const problem = fieldsProblem(message, ['op', 'id']);
      if (problem) return refuse(problem);
      return isId(message.id) ? { ok: true, message: { op: 'revoke', id: message.id } } : refuse('id is not an id');
    }
    case 'end': {
      const problem = fieldsProblem(message, ['op']);
      return problem ? refuse(problem) : { ok: true, message: { op: 'end' } };
    }
    default:
      return refuse(`unknown op ${JSON.stringify(String(message.op).slice(0, 64))}`);
  }
}

const USAGE_FIELDS = [
  'v',
  'repo',
  'run',
  'task',
  'session',
  'provider',
  'path',
  'status',
  'stream',
  'model',
  'responseId',
  'inputTokens',
  'outputTokens',
  'cacheReadTokens',
  'cacheWriteTokens',
  'usage',
  'startedAt',
  'endedAt',
] as const;
const RATE_LIMIT_FIELDS = ['v', 'repo', 'run', 'task', 'grant', 'provider', 'retryAfterSec', 'resetAt', 'at'] as const;

function grantedPart(record: Record<string, unknown>): string | undefined {
  if (record.v !== 1) return 'v is not 1';
  if (!shortText(record.repo, 64) || !shortText(record.run, 128)) return 'repo or run is malformed';
  if (typeof record.task !== 'string' || (record.task !== NO_TASK && !isSafeTaskId(record.task)))
    return 'task is not a task id';
  if (!PROVIDERS.includes(record.provider as never)) return 'provider is unknown';
  return undefined;
}

function usageProblem(record: unknown): string | undefined {
  if (!isRecord(record)) return 'record is not an object';
  const problem = fieldsProblem(record, USAGE_FIELDS) ?? grantedPart(record);
  if (problem) return problem;
  if (!nullableText(record.session, 128) || !shortText(record.path, 256)) return 'session or path is malformed';
  if (!Number.isSafeInteger(record.status) || (record.status as number) < 100 || (record.status as number) > 599)
    return 'status is not an HTTP status';
  if (typeof record.stream !== 'boolean') return 'stream is not a boolean';
  if (!nullableText(record.model, 200) || !nullableText(record.responseId, 200)) return 'model or responseId malformed';
  for (const field of ['inputTokens', 'outputTokens', 'cacheReadTokens', 'cacheWriteTokens'] as const)
    if (!isCount(record[field])) return `${field} is not a count`;
  if (!['read', 'partial', 'none'].includes(record.usage as string)) return 'usage is not read, partial or none';
  if (!isTime(record.startedAt) || !isTime(record.endedAt)) return 'startedAt or endedAt is not a time';
  return undefined;
}

function rateLimitProblem(record: unknown): string | undefined {
  if (!isRecord(record)) return 'record is not an object';
  const problem = fieldsProblem(record, RATE_LIMIT_FIELDS) ?? grantedPart(record);
  if (problem) return problem;
  if (record.grant !== null && !isId(record.grant)) return 'grant is not an id';
  if (record.retryAfterSec !== null && !(typeof record.retryAfterSec === 'number' && record.retryAfterSec >= 0))
    return 'retryAfterSec is not a number of seconds';
  if (!(record.resetAt === null || isTime(record.resetAt)) || !isTime(record.at)) return 'resetAt or at is not a time';
  return undefined;
}

/** Root's check of a line from the broker. */
export function parseBrokerMessage(line: string): Parsed<BrokerMessage> {
  const message = readLine(line);
  if (typeof message === 'string') return { ok: false, reason: message };
  const check = (fields: readonly string[], problem: () => string | undefined): Parsed<BrokerMessage> => {
    const reason = fieldsProblem(message, fields) ?? problem();
    return reason ? { ok: false, reason } : { ok: true, message: message as unknown as BrokerMessage };
  };
  switch (message.event) {
    case 'ready':
      return check(['event', 'port'], () =>
        Number.isSafeInteger(message.port) && (message.port as number) > 0 && (message.port as number) < 65536
          ? undefined
          : 'port is not a TCP port',
      );
    case 'failed':
      return check(['event', 'reason'], () => (shortText(message.reason, 4096) ? undefined : 'reason is not text'));
    case 'granted':
      return check(['event', 'id', 'token'], () =>
        !isId(message.id)
          ? 'id is not an id'
          : TOKEN_SHAPE.test(String(message.token))
            ? undefined
            : 'token is malformed',
      );
    case 'refused':
      return check(['event', 'id', 'reason'], () =>
        !isId(message.id) ? 'id is not an id' : shortText(message.reason, 4096) ? undefined : 'reason is not text',
      );
    case 'usage':
      return check(['event', 'record'], () => usageProblem(message.record));
    case 'rate-limited':
      return check(['event', 'record'], () => rateLimitProblem(message.record));
    default:
      return { ok: false, reason: `unknown event ${JSON.stringify(String(message.event).slice(0, 64))}` };
  }
}
