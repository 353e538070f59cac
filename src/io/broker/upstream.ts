// The broker's egress, with undici: one keep-alive pool for the fixed
// origins, through the broker's own HTTP proxy when it has one (ProxyAgent,
// CONNECT tunnels, which is what Squid allows to 443). undici, not Node's
// fetch: fetch takes no proxy on Node 20, decodes gzip on its own and follows
// redirects; request() does neither. Timeouts are long: a non-streamed answer
// sends its headers only when the whole message is written.
import { Agent, ProxyAgent, type Dispatcher } from 'undici';
import type { HeaderPairs, Upstream } from '../../broker/types.js';

export interface UpstreamOptions {
  /** http://host:port of the broker's proxy; undefined to connect directly (tests, a host without one). */
  readonly proxy: string | undefined;
  /** Waiting for the answer's headers, and between two pieces of its body. */
  readonly headersTimeoutMs?: number;
  readonly bodyTimeoutMs?: number;
  readonly connectTimeoutMs?: number;
}

export interface ClosableUpstream extends Upstream {
  close(): Promise<void>;
}

function pairsOf(headers: Record<string, string | string[] | undefined>): HeaderPairs {
  const pairs: [string, string][] = [];
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    for (const one of Array.isArray(value) ? value : [value]) pairs.push([name.toLowerCase(), one]);
  }
  return pairs;
}

export function undiciUpstream(options: UpstreamOptions): ClosableUpstream {
  const common = {
    keepAliveTimeout: 30_000,
    connect: { timeout: options.connectTimeoutMs ?? 10_000 },
    headersTimeout: options.headersTimeoutMs ?? 15 * 60_000,
    bodyTimeout: options.bodyTimeoutMs ?? 10 * 60_000,
  };
  const dispatcher: Dispatcher = options.proxy ? new ProxyAgent({ uri: options.proxy, ...common }) : new Agent(common);
  return {
    async send(request) {
      const response = await dispatcher.request({
        origin: request.origin,
        path: request.path,
        method: request.method,
        headers: request.headers.flatMap(([name, value]) => [name, value]),
        body: request.body,
        signal: request.signal,
      });
      return { status: response.statusCode, headers: pairsOf(response.headers), body: response.body };
    },
    close: () => dispatcher.close(),
  };
}
