// fetch through the repo's HTTP proxy. A repo user's packets may only go to
// its own Squid port (docs/security.md), and Node 20's fetch ignores
// https_proxy, so the GitHub client gets this fetch: https via a CONNECT
// tunnel through the proxy, loopback and no_proxy hosts direct. The proxy is
// a parameter (the composition root reads the environment), never read here.
import * as http from 'node:http';
import * as https from 'node:https';
import * as tls from 'node:tls';
import type { Socket } from 'node:net';
import { Readable } from 'node:stream';

function bypasses(host: string, noProxy: string | undefined): boolean {
  if (host === 'localhost' || host === '::1' || host === '[::1]' || /^127\./.test(host)) return true;
  return (noProxy ?? '')
    .split(',')
    .map((entry) => entry.trim().toLowerCase())
    .filter(Boolean)
    .some(
      (entry) =>
        entry === '*' ||
        host === entry.replace(/^\./, '') ||
        host.endsWith(entry.startsWith('.') ? entry : `.${entry}`),
    );
}

function tunnel(proxy: URL, host: string, port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const request = http.request({
      host: proxy.hostname,
      port: Number(proxy.port || 80),
      method: 'CONNECT',
      path: `${host}:${port}`,
      headers: { host: `${host}:${port}` },
    });
    request.once('connect', (response, socket) => {
      if (response.statusCode === 200) resolve(socket);
      else {
        socket.destroy();
        reject(
          new Error(
            `the proxy ${proxy.host} refused CONNECT ${host}:${port} (${response.statusCode}); is ${host} on the repo's allowlist?`,
          ),
        );
      }
    });
    request.once('error', reject);
    request.end();
  });
}

async function throughTunnel(
  proxy: URL,
  url: URL,
  init: RequestInit | undefined,
  ca: string | undefined,
): Promise<Response> {
  const port = Number(url.port || 443);
  const socket = await tunnel(proxy, url.hostname, port);
  const headers: Record<string, string> = {};
  new Headers(init?.headers).forEach((value, key) => (headers[key] = value));
  return new Promise((resolve, reject) => {
    const request = https.request(
      {
        host: url.hostname,
        port,
        path: `${url.pathname}${url.search}`,
        method: init?.method ?? 'GET',
        headers,
        createConnection: () => tls.connect({ socket, servername: url.hostname, ...(ca ? { ca } : {}) }),
      },
      (response) => {
        const answer = new Headers();
        for (const [key, value] of Object.entries(response.headers))
          if (value !== undefined) answer.set(key, Array.isArray(value) ? value.join(', ') : value);
        const status = response.statusCode ?? 502;
        const body = status === 204 || status === 304 ? null : (Readable.toWeb(response) as unknown as ReadableStream);
        if (!body) response.resume();
        resolve(new Response(body, { status, statusText: response.statusMessage ?? '', headers: answer }));
      },
    );
    request.once('error', reject);
    init?.signal?.addEventListener('abort', () => request.destroy(new Error('aborted')), { once: true });
    if (typeof init?.body === 'string') request.write(init.body);
    request.end();
  });
}

/**
 * A fetch that uses `proxy` (an http:// proxy URL) for https; plain fetch when there is none. `ca`: extra trusted
 * certificates (tests).
 */
export function proxyFetch(proxy: string | undefined, noProxy: string | undefined, ca?: string): typeof fetch {
  if (!proxy) return fetch;
  const proxyUrl = new URL(proxy);
  return (async (input: string | URL | Request, init?: RequestInit) => {
    const url = new URL(typeof input === 'string' ? input : input instanceof URL ? input.href : input.url);
    if (url.protocol !== 'https:' || bypasses(url.hostname.toLowerCase(), noProxy)) return fetch(input, init);
    return throughTunnel(proxyUrl, url, init, ca);
  }) as typeof fetch;
}
