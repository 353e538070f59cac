// Webhook POSTs with Node's fetch, from root's side. Node 20's fetch ignores
// http(s)_proxy, so nothing here goes through a repo's Squid: the operator's
// endpoint is reached directly, as root's other traffic is. Redirects are
// not followed (a 3xx is an answer, and a failed delivery); the answer's
// body is never read, only its status.
import type { WebhookPort } from '../ports.js';

export const fetchWebhooks: WebhookPort = {
  async post(url, body, timeoutMs) {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'user-agent': 'agent-runner' },
      body,
      redirect: 'manual',
      signal: AbortSignal.timeout(timeoutMs),
    });
    await response.body?.cancel().catch(() => undefined);
    return { status: response.status };
  },
};
