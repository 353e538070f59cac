// What the broker knows of each provider: the API paths it forwards, how the
// real key goes on a request, and the shape of the provider's own error
// answers (so a refusal from the broker reads, to claude, codex and the SDKs,
// like one from the provider). One rule per fact: the adapters map
// OVER_BUDGET_ERROR_TYPE to over-budget from here.
import type { HeaderPairs, Provider, Route } from './types.js';

export const PROVIDERS: readonly Provider[] = ['anthropic', 'openai'];

/** The only paths forwarded (POST), exact, a query allowed. Anything else is a 404 and never leaves the broker. */
export const ROUTES: readonly Route[] = [
  { provider: 'anthropic', path: '/v1/messages', metered: true },
  { provider: 'anthropic', path: '/v1/messages/count_tokens', metered: false },
  { provider: 'openai', path: '/v1/responses', metered: true },
];

/** The origin each provider's requests go to unless the broker's configuration names another (a fake, in tests). */
export const DEFAULT_ORIGINS: Readonly<Record<Provider, string>> = {
  anthropic: 'https://api.anthropic.com',
  openai: 'https://api.openai.com',
};

/**
 * How the real key is presented upstream. `api-key`: Anthropic's x-api-key, OpenAI's Authorization: Bearer (the
 * documented path). `subscription-token`: a claude setup-token (opt-in), sent as a Bearer token with the OAuth beta
 * flag Anthropic requires for it.
 */
export type KeyKind = 'api-key' | 'subscription-token';

export const SUBSCRIPTION_BETA = 'oauth-2025-04-20';

/** Headers carrying the real key (plus, for a subscription token, the beta flag merged into anthropic-beta). */
export function credentialHeaders(
  provider: Provider,
  kind: KeyKind,
  key: string,
  beta: string | undefined,
): HeaderPairs {
  if (provider === 'openai') return [['authorization', `Bearer ${key}`]];
  if (kind === 'api-key') return [['x-api-key', key]];
  const flags = (beta ?? '')
    .split(',')
    .map((flag) => flag.trim())
    .filter(Boolean);
  return [
    ['authorization', `Bearer ${key}`],
    ['anthropic-beta', [...new Set([...flags, SUBSCRIPTION_BETA])].join(',')],
  ];
}

/**
 * The broker's over-budget refusal, in the provider's error JSON: `error.type` (and for OpenAI `error.code` too)
 * OVER_BUDGET_ERROR_TYPE, the message starting OVER_BUDGET_MESSAGE_PREFIX, HTTP status OVER_BUDGET_STATUS. No
 * provider uses this type. What the CLIs show of it (checked with the installed ones, test/contract/broker-clis):
 * claude 2.1.197 ends at once with a result `is_error: true, api_error_status: 400, result: "API Error: 400
 * agent-runner broker: over budget: ..."` (the message, not the type); codex 0.171 ends at once with a
 * `turn.failed` whose message is the whole error JSON. So an adapter maps a session whose error text holds
 * OVER_BUDGET_MESSAGE_PREFIX to over-budget: the task parks "over its budget", no attempt charged.
 */
export const OVER_BUDGET_ERROR_TYPE = 'agent_runner_over_budget';
/** 400: the one status both CLIs give up on at the first answer (codex retries 402, 403 and 422 five times). */
export const OVER_BUDGET_STATUS = 400;
export const OVER_BUDGET_MESSAGE_PREFIX = 'agent-runner broker: over budget: ';

/** Error types per status, as each provider names them. */
const ANTHROPIC_TYPES: Readonly<Record<number, string>> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  404: 'not_found_error',
  405: 'invalid_request_error',
  413: 'request_too_large',
  502: 'api_error',
};
const OPENAI_TYPES: Readonly<Record<number, string>> = {
  400: 'invalid_request_error',
  401: 'invalid_request_error',
  404: 'invalid_request_error',
  405: 'invalid_request_error',
  413: 'invalid_request_error',
  502: 'server_error',
};

/**
 * A refusal as the provider would write it. `provider` undefined (the path named none): Anthropic's shape with
 * OpenAI's fields beside it, which both providers' clients read (`error.type`, `error.message`).
 */
export function errorBody(provider: Provider | undefined, status: number, message: string, type?: string): string {
  const anthropicType = type ?? ANTHROPIC_TYPES[status] ?? 'api_error';
  const openaiType = type ?? OPENAI_TYPES[status] ?? 'server_error';
  if (provider === 'anthropic') return JSON.stringify({ type: 'error', error: { type: anthropicType, message } });
  const error = { message, type: openaiType, param: null, code: type ?? null };
  if (provider === 'openai') return JSON.stringify({ error });
  return JSON.stringify({ type: 'error', error: { ...error, type: anthropicType } });
}

/** The route for a request path (without its query), or undefined. */
export function routeFor(path: string, providers: readonly Provider[]): Route | undefined {
  return ROUTES.find((route) => route.path === path && providers.includes(route.provider));
}

/** The provider a path belongs to, configured or not: for the shape of a 404. */
export function providerOfPath(path: string): Provider | undefined {
  if (path.startsWith('/v1/messages')) return 'anthropic';
  if (path.startsWith('/v1/responses')) return 'openai';
  return undefined;
}
