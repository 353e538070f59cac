// The checks a request's head passes before anything of it is forwarded: the
// broker is an origin server for two APIs, not a proxy. Refused with 400:
// anything that could make the broker and the provider (or a proxy between)
// read one message as two or another as its target (a repeated Host,
// Transfer-Encoding other than a lone "chunked", Transfer-Encoding beside
// Content-Length, repeated Content-Length, CR, LF or NUL in a header, an
// absolute-form, authority-form or asterisk-form target, CONNECT, Upgrade,
// HTTP other than 1.1). Node's parser refuses most of these itself (its
// clientError answer is the edge's); they are checked here again so the rule
// holds whatever the parser lets through. Then only the provider's API paths,
// by POST. Pure.
import { providerOfPath, routeFor } from './providers.js';
import { forwardableHeaders, headerCount, headerValue, pairsOf, sessionOf } from './headers.js';
import type { HeaderPairs, Provider, Route } from './types.js';

export interface RequestHead {
  readonly method: string;
  /** The request target as sent (Node's req.url). */
  readonly target: string;
  readonly httpVersion: string;
  /** As received: name, value, name, value, ... */
  readonly rawHeaders: readonly string[];
}

export interface HeadRefusal {
  readonly ok: false;
  readonly status: 400 | 404 | 405;
  readonly provider: Provider | undefined;
  readonly message: string;
}

export interface CheckedHead {
  readonly ok: true;
  readonly route: Route;
  /** Path and query to send upstream. */
  readonly pathAndQuery: string;
  /** The capability as presented: Authorization: Bearer, or x-api-key when there is no Authorization. */
  readonly token: string | undefined;
  readonly session: string | null;
  /** The agent's headers that may be forwarded (no credential among them). */
  readonly headers: HeaderPairs;
  /** The agent's anthropic-beta, for a subscription token's flag to join. */
  readonly beta: string | undefined;
  /** Content-Length when sent (the body cap refuses a long one before reading it). */
  readonly contentLength: number | undefined;
}

export type HeadCheck = HeadRefusal | CheckedHead;

const MAX_TARGET = 2048;
const TARGET_CHARS = /^[\x21-\x7e]+$/;
const QUERY_CHARS = /^[A-Za-z0-9._~=&%+-]{0,256}$/;
const TOKEN_CHARS = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const BAD_VALUE = /[\r\n\0]/;

const refuse = (status: HeadRefusal['status'], message: string, provider?: Provider): HeadRefusal => ({
  ok: false,
  status,
  provider,
  message: `agent-runner broker: ${message}`,
});

/** Why the headers could smuggle a second request or a second meaning, or undefined. */
function smuggling(pairs: HeaderPairs): string | undefined {
  for (const [name, value] of pairs) {
    if (!TOKEN_CHARS.test(name)) return 'a header name is not an HTTP token';
    if (BAD_VALUE.test(value)) return `the ${name} header holds CR, LF or NUL`;
  }
  if (headerCount(pairs, 'host') !== 1) return 'a request needs exactly one Host header';
  const te = headerCount(pairs, 'transfer-encoding');
  const cl = headerCount(pairs, 'content-length');
  if (te > 0 && cl > 0) return 'Transfer-Encoding and Content-Length together are refused';
  if (te > 1 || (te === 1 && headerValue(pairs, 'transfer-encoding')!.trim().toLowerCase() !== 'chunked'))
    return 'Transfer-Encoding must be a single "chunked"';
  if (cl > 1) return 'Content-Length is repeated';
  if (cl === 1 && !/^\d{1,12}$/.test(headerValue(pairs, 'content-length')!.trim()))
    return 'Content-Length is not a number';
  if (headerCount(pairs, 'upgrade') > 0 || headerCount(pairs, 'http2-settings') > 0)
    return 'protocol upgrades are refused';
  if (headerCount(pairs, 'authorization') > 1 || headerCount(pairs, 'x-api-key') > 1)
    return 'a credential header is repeated';
  return undefined;
}

function presentedToken(pairs: HeaderPairs): string | undefined {
  const authorization = headerValue(pairs, 'authorization');
  if (authorization !== undefined) return /^Bearer +(\S+) *$/i.exec(authorization)?.[1];
  return headerValue(pairs, 'x-api-key')?.trim();
}

/** Pure: whether the head may go on, and what of it does. `providers`: those this broker has a key for. */
export function checkHead(head: RequestHead, providers: readonly Provider[]): HeadCheck {
  if (head.method === 'CONNECT') return refuse(400, 'CONNECT is refused: this is no proxy');
  if (head.httpVersion !== '1.1') return refuse(400, `HTTP/${head.httpVersion} is refused; speak HTTP/1.1`);
  const target = head.target;
  if (!target.startsWith('/') || target.startsWith('//'))
    return refuse(400, 'only origin-form request targets ("/v1/...") are accepted; this forwards to one fixed host');
  if (target.length > MAX_TARGET || !TARGET_CHARS.test(target) || target.includes('#') || target.includes('\\'))
    return refuse(400, 'the request target is malformed');
  const pairs = pairsOf(head.rawHeaders);
  const smuggled = smuggling(pairs);
  if (smuggled) return refuse(400, smuggled);
  const query = target.indexOf('?');
  const path = query === -1 ? target : target.slice(0, query);
  if (query !== -1 && !QUERY_CHARS.test(target.slice(query + 1)))
    return refuse(400, 'the query string is malformed', providerOfPath(path));
  const route = routeFor(path, providers);
  if (!route) return refuse(404, `${path} is not an API path this broker forwards`, providerOfPath(path));
  if (head.method !== 'POST') return refuse(405, `${head.method} ${path}: only POST is forwarded`, route.provider);
  const length = headerValue(pairs, 'content-length');
  return {
    ok: true,
    route,
    pathAndQuery: target,
    token: presentedToken(pairs),
    session: sessionOf(pairs),
    headers: forwardableHeaders(pairs),
    beta: headerValue(pairs, 'anthropic-beta'),
    contentLength: length === undefined ? undefined : Number(length.trim()),
  };
}
