// The scripted agent's model call through the run's broker, when its
// environment names one: where it goes (claude's ANTHROPIC_BASE_URL and
// ANTHROPIC_AUTH_TOKEN; codex's and a command agent's AGENT_RUNNER_BROKER_URL
// and AGENT_RUNNER_BROKER_TOKEN), the request each CLI sends (claude: POST
// /v1/messages?beta=true, codex: POST /v1/responses, both streamed, with the
// session header the runner set), and what the answer says: the model and its
// usage as the stream reports it, or the error the CLI would end on. The HTTP
// itself is src/io/scripted-model.ts. Pure.
import { BROKER_SESSION_VARIABLE, BROKER_TOKEN_VARIABLE, BROKER_URL_VARIABLE } from '../agent/broker-env.js';
import { SESSION_HEADER } from '../broker/headers.js';
import { OVER_BUDGET_MESSAGE_PREFIX } from '../broker/providers.js';
import { modelPrice } from '../broker/prices.js';
import type { SessionUsage } from './claude-stream.js';
import type { Pose } from './pose.js';

/** What each pose asks for when its argv names no model: models the broker's price table knows. */
export const DEFAULT_MODELS = { anthropic: 'claude-sonnet-4-5', openai: 'gpt-5-codex' } as const;

export type ModelApi = keyof typeof DEFAULT_MODELS;

/**
 * Asks the local fake provider (src/io/broker/fake-provider.ts) for a given answer: `rate-limit` is its 429. The
 * broker passes it on like any header that carries no credential; a real provider ignores it.
 */
export const FAKE_ANSWER_HEADER = 'x-fake-provider-answer';

export interface ModelTarget {
  readonly api: ModelApi;
  /** http://127.0.0.1:PORT, the broker. */
  readonly url: string;
  readonly token: string;
  /** X-Agent-Runner-Session, when the runner named the session. */
  readonly session: string | undefined;
  readonly model: string;
}

/** The broker this session reaches its model through, or undefined: no broker, the agent invents its figures. */
export function modelTargetOf(pose: Pose, env: Readonly<Record<string, string | undefined>>): ModelTarget | undefined {
  if (pose.cli === 'claude') {
    const url = env.ANTHROPIC_BASE_URL;
    const token = env.ANTHROPIC_AUTH_TOKEN;
    if (!url || !token) return undefined;
    const session = headerValue(env.ANTHROPIC_CUSTOM_HEADERS ?? '', SESSION_HEADER);
    return { api: 'anthropic', url, token, session, model: pose.argv.model ?? DEFAULT_MODELS.anthropic };
  }
  const url = env[BROKER_URL_VARIABLE];
  const token = env[BROKER_TOKEN_VARIABLE];
  if (!url || !token) return undefined;
  if (pose.cli === 'codex')
    return {
      api: 'openai',
      url,
      token,
      session: codexSessionHeader(pose.argv.configs),
      model: pose.argv.model ?? DEFAULT_MODELS.openai,
    };
  return {
    api: 'anthropic',
    url,
    token,
    session: env[BROKER_SESSION_VARIABLE] || undefined,
    model: DEFAULT_MODELS.anthropic,
  };
}

/** A header's value from claude's ANTHROPIC_CUSTOM_HEADERS: `Name: value` lines. */
function headerValue(lines: string, name: string): string | undefined {
  for (const line of lines.split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon > 0 && line.slice(0, colon).trim().toLowerCase() === name)
      return line.slice(colon + 1).trim() || undefined;
  }
  return undefined;
}

/** The session from codex's `-c model_providers.NAME.http_headers={ "X-Agent-Runner-Session" = "ID" }`. */
function codexSessionHeader(configs: readonly string[]): string | undefined {
  for (const config of configs) {
    const table = /^model_providers\.[^=]+\.http_headers\s*=\s*\{(.*)\}\s*$/.exec(config)?.[1];
    if (table === undefined) continue;
    for (const entry of table.split(',')) {
      const pair = /^\s*"([^"]+)"\s*=\s*"([^"]*)"\s*$/.exec(entry);
      if (pair && pair[1]!.toLowerCase() === SESSION_HEADER) return pair[2] || undefined;
    }
  }
  return undefined;
}

export interface ModelRequest {
  /** The path and query after the broker's URL. */
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

/**
 * The request each CLI sends for one turn, streamed, with the capability as its Bearer token. `ask: 'rate-limit'`:
 * a session the task's instructions rate-limit asks the fake provider for its 429.
 */
export function modelRequest(target: ModelTarget, prompt: string, ask?: 'rate-limit'): ModelRequest {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'text/event-stream',
    authorization: `Bearer ${target.token}`,
    ...(target.session ? { [SESSION_HEADER]: target.session } : {}),
    ...(ask ? { [FAKE_ANSWER_HEADER]: ask } : {}),
  };
  if (target.api === 'anthropic')
    return {
      path: '/v1/messages?beta=true',
      headers: { ...headers, 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({
        model: target.model,
        max_tokens: 1024,
        stream: true,
        messages: [{ role: 'user', content: prompt }],
      }),
    };
  return {
    path: '/v1/responses',
    headers,
    body: JSON.stringify({ model: target.model, stream: true, input: prompt }),
  };
}

/** Tokens as Anthropic counts them: input excludes the cache (an OpenAI answer's cached tokens are moved apart). */
export interface ModelUsage {
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly cacheReadTokens: number;
  readonly cacheWriteTokens: number;
}

export type ModelAnswer =
  | { readonly kind: 'answered'; readonly model: string; readonly usage: ModelUsage }
  /** The broker's over-budget refusal: a 400 whose message starts OVER_BUDGET_MESSAGE_PREFIX. */
  | { readonly kind: 'over-budget'; readonly status: number; readonly message: string; readonly body: string }
  | { readonly kind: 'rate-limited'; readonly status: number; readonly message: string; readonly body: string }
  /** A 401: the capability is unknown, expired or revoked (the CLI's login failure). */
  | { readonly kind: 'unauthorized'; readonly status: number; readonly message: string; readonly body: string }
  | { readonly kind: 'failed'; readonly status: number; readonly message: string; readonly body: string };

/** The error JSON's message, either provider's shape, or the body itself. */
function errorMessage(body: string): string {
  try {
    const parsed = JSON.parse(body) as { error?: { message?: unknown } };
    if (typeof parsed.error?.message === 'string') return parsed.error.message;
  } catch {
    // not JSON: the body says it
  }
  return body.trim() || '(no body)';
}

/** What an answer means for the session: its status and its whole body (an event stream when it is a 200). */
export function readModelAnswer(api: ModelApi, status: number, body: string): ModelAnswer {
  if (status !== 200) {
    const message = errorMessage(body);
    const kind =
      status === 400 && message.startsWith(OVER_BUDGET_MESSAGE_PREFIX)
        ? 'over-budget'
        : status === 429
          ? 'rate-limited'
          : status === 401
            ? 'unauthorized'
            : 'failed';
    return { kind, status, message, body };
  }
  const read = api === 'anthropic' ? anthropicStreamUsage(body) : openaiStreamUsage(body);
  if (read) return { kind: 'answered', ...read };
  return {
    kind: 'failed',
    status,
    message: 'the answer ended without its usage (a stream cut short)',
    body: '',
  };
}

/** The `data:` of each server-sent event, parsed; an event that is not JSON is skipped. */
function streamEvents(body: string): Record<string, unknown>[] {
  const events: Record<string, unknown>[] = [];
  for (const block of body.split(/\r?\n\r?\n/)) {
    const data = block
      .split(/\r?\n/)
      .filter((line) => line.startsWith('data:'))
      .map((line) => line.slice(5).trimStart())
      .join('\n');
    if (!data) continue;
    try {
      const event = JSON.parse(data) as unknown;
      if (typeof event === 'object' && event !== null) events.push(event as Record<string, unknown>);
    } catch {
      // a keep-alive or a line of another kind
    }
  }
  return events;
}

const count = (value: unknown) => (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : 0);

/** message_start's usage, then each message_delta's (cumulative: the last value wins); none without a message_delta. */
function anthropicStreamUsage(body: string): { model: string; usage: ModelUsage } | undefined {
  let model: string | undefined;
  let usage: Record<string, unknown> = {};
  let ended = false;
  for (const event of streamEvents(body)) {
    if (event.type === 'message_start') {
      const message = event.message as { model?: unknown; usage?: Record<string, unknown> } | undefined;
      if (typeof message?.model === 'string') model = message.model;
      usage = { ...usage, ...(message?.usage ?? {}) };
    } else if (event.type === 'message_delta') {
      usage = { ...usage, ...((event.usage as Record<string, unknown> | undefined) ?? {}) };
      ended = true;
    }
  }
  if (!ended || model === undefined) return undefined;
  return {
    model,
    usage: {
      inputTokens: count(usage.input_tokens),
      outputTokens: count(usage.output_tokens),
      cacheReadTokens: count(usage.cache_read_input_tokens),
      cacheWriteTokens: count(usage.cache_creation_input_tokens),
    },
  };
}

/** response.completed's usage: input_tokens counts the cached ones, which are taken apart here. */
function openaiStreamUsage(body: string): { model: string; usage: ModelUsage } | undefined {
  for (const event of streamEvents(body)) {
    if (event.type !== 'response.completed') continue;
    const response = event.response as
      | {
          model?: unknown;
          usage?: {
            input_tokens?: unknown;
            output_tokens?: unknown;
            input_tokens_details?: { cached_tokens?: unknown };
          };
        }
      | undefined;
    if (typeof response?.model !== 'string' || !response.usage) return undefined;
    const cached = count(response.usage.input_tokens_details?.cached_tokens);
    return {
      model: response.model,
      usage: {
        inputTokens: Math.max(0, count(response.usage.input_tokens) - cached),
        outputTokens: count(response.usage.output_tokens),
        cacheReadTokens: cached,
        cacheWriteTokens: 0,
      },
    };
  }
  return undefined;
}

/**
 * What the session reports of its model's answer: its tokens, and as claude's total_cost_usd their list price (0 for
 * a model without one, rounded to micro-dollars); or nothing at all when told to under-report (`usage: report-zero`).
 */
export function reportedUsage(model: string, usage: ModelUsage, underReport: boolean): SessionUsage {
  if (underReport) return { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, costUsd: 0 };
  const price = modelPrice(model);
  const micro = price
    ? usage.inputTokens * price.input +
      usage.outputTokens * price.output +
      usage.cacheReadTokens * price.cacheRead +
      usage.cacheWriteTokens * price.cacheWrite
    : 0;
  return { ...usage, costUsd: Math.round(micro) / 1_000_000 };
}
