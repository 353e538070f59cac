// Every real port in one object: what src/main.ts hands the CLI (and what
// system tests and the bench use to run it in-process).
import type { ControlPorts, NotifyPostPort } from '../ports.js';
import { realPorts } from './real-ports.js';
import { realLocks } from './lock.js';
import { realControl } from './proc.js';
import { cronScheduler } from './cron.js';
import { realWake } from './webhook/index.js';
import { loopbackHttp } from './http/index.js';

/**
 * Webhook POSTs with Node's fetch, from root's side. Node 20's fetch ignores http(s)_proxy, so nothing here goes
 * through a repo's Squid: the operator's endpoint is reached directly. Redirects are not followed (a 3xx is a failed
 * delivery); only the answer's status is read, never its body.
 */
export const fetchNotifyPosts: NotifyPostPort = {
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

export function realControlPorts(): ControlPorts {
  return {
    ...realPorts(),
    locks: realLocks,
    control: realControl,
    scheduler: cronScheduler,
    notifyPosts: fetchNotifyPosts,
    wake: realWake,
    loopbackHttp,
  };
}
