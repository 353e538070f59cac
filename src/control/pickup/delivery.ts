// What the push webhook receiver answers, decided from the request's head,
// whether its signature held, and the registry. Pure: every input is a
// parameter, so every case is a row of a table test. The order is the
// point: the size is judged before the body is read, the signature before
// anything in the body is believed, and only a verified delivery is
// remembered as seen (an unsigned request cannot burn a real delivery's id).
// A push is a hint: it names the repo whose watcher checks origin itself,
// never the commit it should take.
import type { GitHubOrigin } from '../../github/origin.js';
import { parseOrigin } from '../../github/origin.js';

/** A push payload lists up to 2048 commits with their files; beyond this it is refused (413) and the poll finds it. */
export const WEBHOOK_MAX_BODY_BYTES = 4 * 1024 * 1024;

/** How many delivery ids are remembered for the replay check (newest kept). */
export const REMEMBERED_DELIVERIES = 10_000;

export interface DeliveryHead {
  readonly method: string;
  /** X-GitHub-Event. */
  readonly event: string | undefined;
  /** X-GitHub-Delivery. */
  readonly delivery: string | undefined;
  /** X-Hub-Signature-256 ("sha256=" and the HMAC in hex). */
  readonly signature: string | undefined;
  /** Content-Length, when the client sent one. */
  readonly contentLength: number | undefined;
}

export interface DeliveryAnswer {
  readonly status: number;
  readonly message: string;
  /** Repos whose watcher is woken. */
  readonly wake: readonly string[];
}

const answer = (status: number, message: string, wake: readonly string[] = []): DeliveryAnswer => ({
  status,
  message,
  wake,
});

const DELIVERY_ID = /^[A-Za-z0-9-]{1,100}$/;

/** Before the body is read: refused at once, or undefined to read it (at most WEBHOOK_MAX_BODY_BYTES). */
export function admitHead(head: DeliveryHead, maxBytes: number = WEBHOOK_MAX_BODY_BYTES): DeliveryAnswer | undefined {
  if (head.method !== 'POST') return answer(405, 'only POST: this is a GitHub webhook receiver');
  if (head.contentLength !== undefined && head.contentLength > maxBytes)
    return answer(
      413,
      `the body is ${head.contentLength} bytes, more than the ${maxBytes} this receiver reads; nothing was read (the poll of origin still finds the push)`,
    );
  if (head.signature === undefined)
    return answer(401, 'no X-Hub-Signature-256: set a secret on the webhook (the same as webhook_secret_file holds)');
  return undefined;
}

/** A body without a Content-Length that ran past the cap: refused once the cap is passed, the rest unread. */
export function tooLarge(maxBytes: number = WEBHOOK_MAX_BODY_BYTES): DeliveryAnswer {
  return answer(
    413,
    `the body ran past the ${maxBytes} bytes this receiver reads; the rest was not read (the poll of origin still finds the push)`,
  );
}

/** A repo as the receiver matches it: its name, base, and the GitHub repository its origin names (if any). */
export interface PushTarget {
  readonly name: string;
  readonly baseBranch: string;
  readonly origin: GitHubOrigin | undefined;
  readonly enabled: boolean;
}

/** The GitHub repositories a push payload names: html_url, clone_url, ssh_url, and full_name on the sender's host. */
function pushedRepository(payload: Record<string, unknown>): GitHubOrigin[] {
  const repository = payload.repository;
  if (typeof repository !== 'object' || repository === null) return [];
  const fields = repository as Record<string, unknown>;
  const named: GitHubOrigin[] = [];
  for (const key of ['html_url', 'clone_url', 'ssh_url', 'git_url', 'url']) {
    const value = fields[key];
    const parsed = typeof value === 'string' ? parseOrigin(value) : undefined;
    if (parsed) named.push(parsed);
  }
  return named;
}

const sameRepository = (a: GitHubOrigin, b: GitHubOrigin) =>
  a.host === b.host && a.owner.toLowerCase() === b.owner.toLowerCase() && a.repo.toLowerCase() === b.repo.toLowerCase();

/** A verified push: the registered repos whose origin it names and whose base branch it moved. */
export function judgePush(payload: unknown, targets: readonly PushTarget[]): DeliveryAnswer {
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload))
    return answer(400, 'the push payload is not a JSON object (content type must be application/json)');
  const fields = payload as Record<string, unknown>;
  const ref = typeof fields.ref === 'string' ? fields.ref : undefined;
  const named = pushedRepository(fields);
  if (ref === undefined || named.length === 0)
    return answer(400, 'the push payload names no ref or repository (content type must be application/json)');
  const ofRepository = targets.filter(
    (target) => target.origin !== undefined && named.some((origin) => sameRepository(origin, target.origin!)),
  );
  if (ofRepository.length === 0)
    return answer(202, `ignored: no registered repo has origin ${named[0]!.host}/${named[0]!.owner}/${named[0]!.repo}`);
  const woken = ofRepository.filter((target) => target.enabled && ref === `refs/heads/${target.baseBranch}`);
  if (woken.length === 0)
    return answer(
      202,
      `ignored: ${ref} is not the base branch of ${ofRepository.map((target) => `${target.name} (${target.baseBranch})`).join(', ')}, or the repo is disabled`,
    );
  const names = woken.map((target) => target.name);
  return answer(200, `woke the watcher of ${names.join(', ')}`, names);
}

/** After the body: the signature's verdict, the replay check, then the event. */
export function judgeDelivery(input: {
  readonly head: DeliveryHead;
  readonly verified: boolean;
  readonly seen: boolean;
  /** The body parsed as JSON; undefined when it is not JSON. */
  readonly payload: unknown;
  readonly targets: readonly PushTarget[];
}): DeliveryAnswer {
  if (!input.verified)
    return answer(
      401,
      'the signature does not match: the webhook secret differs from the one webhook_secret_file holds',
    );
  if (input.head.delivery === undefined || !DELIVERY_ID.test(input.head.delivery))
    return answer(400, 'no valid X-GitHub-Delivery id');
  if (input.seen) return answer(409, `delivery ${input.head.delivery} was received already: a replay wakes nothing`);
  switch (input.head.event) {
    case 'ping':
      return answer(200, 'pong');
    case 'push':
      return judgePush(input.payload, input.targets);
    default:
      return answer(202, `ignored: event ${JSON.stringify(input.head.event ?? '')} (only push wakes a watcher)`);
  }
}

/** The delivery ids seen, newest REMEMBERED_DELIVERIES of them, in memory: a restart forgets them (see docs). */
export class DeliveryMemory {
  private readonly ids = new Set<string>();

  constructor(private readonly limit: number = REMEMBERED_DELIVERIES) {}

  has(id: string): boolean {
    return this.ids.has(id);
  }

  remember(id: string): void {
    this.ids.add(id);
    if (this.ids.size > this.limit) this.ids.delete(this.ids.values().next().value!);
  }
}
