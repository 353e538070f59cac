// The sender: delivers a repo's outbox from its own async loop, so a slow or
// dead webhook never holds up a tick or a drain (the watcher only spools and
// kicks). Sequential, oldest first, one POST at a time with a timeout; a
// failed try is retried with a doubling delay up to a cap, and given up
// after maxAttempts tries (moved to failed/, said in the log). A 4xx other
// than 408 and 429 is given up at once: a wrong URL does not heal.
import type { Clock, NotifyPostPort } from '../../ports.js';
import type { NotifyHook } from '../../types.js';
import { notifyBody } from './body.js';
import type { NotifyEvent } from './kinds.js';
import type { Delivery, Outbox } from './outbox.js';
import { redactUrl, withoutUrl } from './url.js';

export interface SendPolicy {
  /** One POST's whole budget, connect to status. */
  readonly timeoutMs: number;
  /** The delay after the first failed try; each later one doubles it. */
  readonly firstRetryMs: number;
  readonly maxRetryMs: number;
  /** Tries before a delivery is given up. */
  readonly maxAttempts: number;
}

export const SEND_POLICY: SendPolicy = { timeoutMs: 10_000, firstRetryMs: 5_000, maxRetryMs: 300_000, maxAttempts: 8 };

/** How long an idle sender sleeps when nothing kicks it (a safety net: spooling kicks it). */
const IDLE_MS = 60_000;

/** Pure: the delay before try `attempts + 1`, after `attempts` failed ones. */
export function retryDelayMs(attempts: number, policy: SendPolicy): number {
  return Math.min(policy.firstRetryMs * 2 ** Math.max(0, attempts - 1), policy.maxRetryMs);
}

export type SendResult =
  | { readonly ok: true; readonly status: number }
  | { readonly ok: false; readonly status?: number; readonly error: string; readonly permanent: boolean };

/** Pure: what a status means. */
export function judgeStatus(status: number): SendResult {
  if (status >= 200 && status < 300) return { ok: true, status };
  const permanent = status >= 400 && status < 500 && status !== 408 && status !== 429;
  return {
    ok: false,
    status,
    permanent,
    error: permanent
      ? `the webhook answered ${status}: check its url in the registry (agent-runner notify test --repo NAME)`
      : `the webhook answered ${status}`,
  };
}

function describeFailure(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  if (error.name === 'TimeoutError' || error.name === 'AbortError') return 'no answer in time';
  const cause = (error as Error & { cause?: { code?: string; message?: string } }).cause;
  return cause ? `${error.message}: ${cause.code ?? cause.message ?? ''}`.trim() : error.message;
}

/** One POST of one event to one webhook; never throws, and no result carries the URL's path or query. */
export async function sendOnce(
  posts: NotifyPostPort,
  hook: Pick<NotifyHook, 'url' | 'format'>,
  event: NotifyEvent,
  timeoutMs: number,
): Promise<SendResult> {
  try {
    const { status } = await posts.post(hook.url, notifyBody(event, hook.format), timeoutMs);
    return judgeStatus(status);
  } catch (error) {
    return { ok: false, error: withoutUrl(describeFailure(error), hook.url), permanent: false };
  }
}

export interface SenderDeps {
  readonly notifyPosts: NotifyPostPort;
  readonly clock: Clock;
  log(event: string, fields: Record<string, unknown>): void;
}

export class NotifySender {
  private stopped = true;
  private running: Promise<void> | undefined;
  private wake: (() => void) | undefined;
  private kicked = false;

  constructor(
    private readonly deps: SenderDeps,
    private readonly outbox: Outbox,
    private readonly policy: SendPolicy = SEND_POLICY,
  ) {}

  /** Starts the loop (once); what a previous process left pending is sent first. */
  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.running = this.loop();
  }

  /** Something was spooled: look now rather than at the next timer. */
  kick(): void {
    this.kicked = true;
    this.wake?.();
  }

  /** Ends the loop after the POST in flight (at most timeoutMs); what is pending stays for the next start. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.wake?.();
    await this.running;
  }

  private async loop(): Promise<void> {
    while (!this.stopped) {
      this.kicked = false;
      let waitMs = IDLE_MS;
      try {
        waitMs = await this.pass();
      } catch (error) {
        this.deps.log('notify-outbox-unreadable', { error: (error as Error).message });
      }
      if (this.stopped || this.kicked) continue;
      await this.sleep(waitMs);
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = this.deps.clock.setTimer(ms, () => done());
      const done = () => {
        timer.cancel();
        this.wake = undefined;
        resolve();
      };
      this.wake = done;
    });
  }

  /** Sends every due delivery; returns how long until the next one is due. */
  async pass(): Promise<number> {
    let nextDue = IDLE_MS;
    for (const delivery of await this.outbox.pending()) {
      if (this.stopped) break;
      const wait = Date.parse(delivery.nextAt) - this.deps.clock.now();
      if (wait > 0) {
        nextDue = Math.min(nextDue, wait);
        continue;
      }
      const retryIn = await this.deliver(delivery);
      if (retryIn !== undefined) nextDue = Math.min(nextDue, retryIn);
    }
    return Math.max(nextDue, 0);
  }

  /** One try; the delay until its retry, or undefined when it is settled. */
  private async deliver(delivery: Delivery): Promise<number | undefined> {
    const result = await sendOnce(this.deps.notifyPosts, delivery.hook, delivery.event, this.policy.timeoutMs);
    const now = this.deps.clock.now();
    const at = new Date(now).toISOString();
    const fields = {
      kind: delivery.event.kind,
      key: delivery.event.key,
      webhook: redactUrl(delivery.hook.url),
      attempt: delivery.attempts + 1,
    };
    if (result.ok) {
      await this.outbox.delivered(delivery, at);
      this.deps.log('notify-delivered', { ...fields, status: result.status });
      return undefined;
    }
    if (result.permanent || delivery.attempts + 1 >= this.policy.maxAttempts) {
      await this.outbox.gaveUp(delivery, result.error, at);
      this.deps.log('notify-gave-up', { ...fields, error: result.error });
      return undefined;
    }
    const delay = retryDelayMs(delivery.attempts + 1, this.policy);
    await this.outbox.retryLater(delivery, result.error, new Date(now + delay).toISOString());
    this.deps.log('notify-retry', { ...fields, error: result.error, retryInMs: delay });
    return delay;
  }
}
