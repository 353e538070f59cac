// Which headers cross the broker, each way. Toward the provider: none that
// carries a credential (the agent's token, a forged key, a cookie), none that
// is hop-by-hop or says who forwarded what, and never the agent's choice of
// encoding (the broker asks for identity, so it can read the usage it meters);
// the real key is added after (providers.ts). Toward the agent: the
// provider's answer less hop-by-hop headers, cookies and account identifiers.
import type { HeaderPairs } from './types.js';

/** The header the runner sets on an agent's requests (ANTHROPIC_CUSTOM_HEADERS, codex http_headers). */
export const SESSION_HEADER = 'x-agent-runner-session';
const SESSION_SHAPE = /^[A-Za-z0-9._:-]{1,128}$/;

const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'expect',
  'host',
  'content-length',
  'http2-settings',
]);

/** Named credentials; CREDENTIAL_WORD catches the ones not listed (a client's own x-foo-token). */
const CREDENTIALS = new Set([
  'authorization',
  'proxy-authorization',
  'x-api-key',
  'api-key',
  'anthropic-api-key',
  'openai-api-key',
  'cookie',
  'cookie2',
  'openai-organization',
  'openai-project',
]);
const CREDENTIAL_WORD = /auth|token|key|secret|passw|credential|cookie/;

const FORWARDING = /^(forwarded|via|x-real-ip|true-client-ip|x-forwarded-.*|x-agent-runner-.*|proxy-.*)$/;

/** Headers the provider's answer keeps from the agent. */
const ANSWER_DROPPED = new Set([
  ...HOP_BY_HOP,
  'set-cookie',
  'set-cookie2',
  'anthropic-organization-id',
  'openai-organization',
  'openai-project',
  'alt-svc',
]);

/** Names a Connection header lists as hop-by-hop for this message. */
function connectionListed(pairs: HeaderPairs): Set<string> {
  return new Set(
    pairs
      .filter(([name]) => name === 'connection')
      .flatMap(([, value]) => value.split(','))
      .map((name) => name.trim().toLowerCase())
      .filter(Boolean),
  );
}

/** Pure: the agent's headers that may go on to the provider (credentials are added by the caller). */
export function forwardableHeaders(pairs: HeaderPairs): HeaderPairs {
  const listed = connectionListed(pairs);
  const kept = pairs.filter(
    ([name]) =>
      !HOP_BY_HOP.has(name) &&
      !listed.has(name) &&
      !CREDENTIALS.has(name) &&
      !CREDENTIAL_WORD.test(name) &&
      !FORWARDING.test(name) &&
      name !== 'accept-encoding',
  );
  return [...kept, ['accept-encoding', 'identity']];
}

/** Pure: the provider's headers that go on to the agent. */
export function answerHeaders(pairs: HeaderPairs): HeaderPairs {
  const listed = connectionListed(pairs);
  return pairs.filter(([name]) => !ANSWER_DROPPED.has(name) && !listed.has(name));
}

/** The value of the one header `name`, undefined when absent; the caller has refused repeats where they matter. */
export function headerValue(pairs: HeaderPairs, name: string): string | undefined {
  return pairs.find(([candidate]) => candidate === name)?.[1];
}

export function headerCount(pairs: HeaderPairs, name: string): number {
  return pairs.reduce((count, [candidate]) => (candidate === name ? count + 1 : count), 0);
}

/** The session id the runner set, or null when absent, repeated or not of its shape (it is informational). */
export function sessionOf(pairs: HeaderPairs): string | null {
  if (headerCount(pairs, SESSION_HEADER) !== 1) return null;
  const value = headerValue(pairs, SESSION_HEADER)!.trim();
  return SESSION_SHAPE.test(value) ? value : null;
}

/** Node's rawHeaders (name, value, name, value, ...) as pairs with lower-case names. */
export function pairsOf(rawHeaders: readonly string[]): HeaderPairs {
  const pairs: [string, string][] = [];
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) pairs.push([rawHeaders[i]!.toLowerCase(), rawHeaders[i + 1]!]);
  return pairs;
}
