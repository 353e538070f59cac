// The broker's nouns: what a run is granted, what a response cost, what a
// provider said about its rate limit, and the ports the broker reaches the
// world through (the upstream, the key files, the sinks root's ledger and
// the drain read). The broker itself is in broker.ts; its real edges are in
// src/io/broker/.

export type Provider = 'anthropic' | 'openai';

/** One API path the broker forwards, and whether its answers are metered. */
export interface Route {
  readonly provider: Provider;
  readonly path: string;
  /** count_tokens costs nothing and carries no usage: forwarded, never metered. */
  readonly metered: boolean;
}

/** What a capability token stands for: one run of one task of one repo, by one agent uid, until expiresAt. */
export interface Grant {
  readonly repo: string;
  readonly run: string;
  readonly task: string;
  /** The agent identity's uid: a token presented from another uid is refused where the broker can see the peer. */
  readonly uid: number;
  /** Milliseconds since the epoch. */
  readonly expiresAt: number;
  /** Root's id of the grant (its control line's id): a rate-limit record names it, so root knows whose wait it is. */
  readonly id?: number;
}

/**
 * How far a response's usage could be read: `read` the final figures (the last message_delta,
 * response.completed, a JSON body's usage); `partial` the stream ended first (Anthropic's message_start gives the
 * input side); `none` nothing (an error answer, a body that is not the provider's shape).
 */
export type UsageReading = 'read' | 'partial' | 'none';

/** What one response said it cost. Token counts null where it did not say. */
export interface MeteredUsage {
  readonly model: string | null;
  readonly responseId: string | null;
  /** Input tokens that were neither read from nor written to the cache (Anthropic's input_tokens). */
  readonly inputTokens: number | null;
  readonly outputTokens: number | null;
  readonly cacheReadTokens: number | null;
  readonly cacheWriteTokens: number | null;
  readonly usage: UsageReading;
}

/** What one upstream response cost, as the broker read it passing through, and whose it was. */
export interface UsageRecord extends MeteredUsage {
  readonly v: 1;
  readonly repo: string;
  readonly run: string;
  readonly task: string;
  /** The session header the runner sets (SESSION_HEADER); null when absent or malformed. Informational only. */
  readonly session: string | null;
  readonly provider: Provider;
  readonly path: string;
  readonly status: number;
  readonly stream: boolean;
  /** ISO times: the request was admitted, the response ended (or was cut). */
  readonly startedAt: string;
  readonly endedAt: string;
}

/** A provider's 429, for the drain's wait. */
export interface RateLimitRecord {
  readonly v: 1;
  readonly repo: string;
  readonly run: string;
  readonly task: string;
  /** Root's id of the grant whose request was limited; null for a grant that had none. */
  readonly grant: number | null;
  readonly provider: Provider;
  /** What retry-after (or retry-after-ms) said, in seconds; null when absent. */
  readonly retryAfterSec: number | null;
  /** When the provider says the limit lifts (ISO), from retry-after or its reset headers; null when it did not say. */
  readonly resetAt: string | null;
  readonly at: string;
}

/** Where each response's usage goes, once, when its body has ended or was cut (root's ledger, in phase 2). */
export interface UsageSink {
  seal(record: UsageRecord): void;
}

/** Where a provider's 429 goes, as the headers arrive (what the drain's rate-limit wait reads, in phase 2). */
export interface RateLimitSink {
  rateLimited(record: RateLimitRecord): void;
}

export interface BudgetQuestion {
  readonly grant: Grant;
  readonly route: Route;
  readonly session: string | null;
  readonly now: number;
}

export type BudgetAnswer = { readonly allow: true } | { readonly allow: false; readonly reason: string };

/** Decides, before anything is forwarded, whether a request may start. Synchronous: it runs on every request. */
export type BudgetPolicy = (question: BudgetQuestion) => BudgetAnswer;

/** Header pairs in order, names lower-case; a name may repeat. */
export type HeaderPairs = readonly (readonly [string, string])[];

export interface UpstreamRequest {
  /** scheme://host[:port], nothing else: the one place this provider's requests go. */
  readonly origin: string;
  readonly method: 'POST';
  /** Path and query, origin-form. */
  readonly path: string;
  readonly headers: HeaderPairs;
  readonly body: Uint8Array;
  readonly signal: AbortSignal;
}

export interface UpstreamResponse {
  readonly status: number;
  readonly headers: HeaderPairs;
  readonly body: AsyncIterable<Uint8Array>;
}

/** The broker's egress: one request to the fixed origin, through the broker's own proxy when it has one. */
export interface Upstream {
  /** Rejects when the origin (or the proxy) cannot be reached; never follows a redirect. */
  send(request: UpstreamRequest): Promise<UpstreamResponse>;
}

/** A key file as the edge found it: opened without following a link, described from the open file. */
export type KeyFileRead =
  | { readonly kind: 'missing' }
  | { readonly kind: 'symlink' }
  | {
      readonly kind: 'opened';
      readonly isFile: boolean;
      readonly mode: number;
      readonly uid: number;
      readonly links: number;
      readonly size: number;
      /** The content, when it is a regular file of at most KEY_FILE_MAX_BYTES. */
      readonly text: string | undefined;
    };

/** Reads a key file by path, every time it is asked (a rotated key is used from the next request on). */
export interface KeySource {
  read(path: string): Promise<KeyFileRead>;
}

/** What the broker tells its operator (stderr, JSON lines). Never a token or a key. */
export interface BrokerEvent {
  readonly event: 'refused' | 'key-problem' | 'upstream-failed' | 'rate-limited' | 'unmetered';
  readonly repo: string;
  readonly status?: number;
  readonly run?: string;
  readonly task?: string;
  readonly detail: string;
}

export type BrokerLog = (event: BrokerEvent) => void;
