// The broker for one repo: between an agent's model CLI and its provider.
// admit() decides from the request's head alone (its shape, its path, its
// capability token, the peer's uid where the edge can see it, the budget);
// forward() adds the real key, sends the body to the provider's one origin and
// hands back the answer unchanged, metered on its way through: one sealed
// usage record per response, and a provider's 429 recorded for the drain. The
// edge (src/io/broker/server.ts) only moves bytes between a socket and this.
import { answerHeaders, headerValue } from './headers.js';
import { checkHead, type RequestHead } from './request-check.js';
import {
  credentialHeaders,
  errorBody,
  OVER_BUDGET_ERROR_TYPE,
  OVER_BUDGET_MESSAGE_PREFIX,
  OVER_BUDGET_STATUS,
} from './providers.js';
import { keyFromFile, type KeyVerdict } from './key.js';
import { meterFor, type Meter, type MeteredUsage, type Reducers } from './usage.js';
import { anthropicUsage } from './anthropic-usage.js';
import { openaiUsage } from './openai-usage.js';
import { readRateLimit } from './rate-limit.js';
import { configuredProviders, type BrokerRepo, type ProviderSettings } from './config.js';
import type { CapabilityStore, TokenCheck } from './capabilities.js';
import type {
  BrokerLog,
  BudgetPolicy,
  Grant,
  HeaderPairs,
  KeySource,
  Provider,
  RateLimitSink,
  Route,
  Upstream,
  UsageRecord,
  UsageSink,
} from './types.js';

export interface BrokerPorts {
  readonly tokens: CapabilityStore;
  readonly clock: { now(): number };
  readonly budget: BudgetPolicy;
  readonly usage: UsageSink;
  readonly rateLimits: RateLimitSink;
  readonly upstream: Upstream;
  readonly keys: KeySource;
  readonly log: BrokerLog;
}

export interface BrokerAnswer {
  readonly status: number;
  readonly headers: HeaderPairs;
  /** A refusal's body, or the provider's, metered as it is read. Read it to its end or stop early: either seals. */
  readonly body: Uint8Array | AsyncIterable<Uint8Array>;
  /** Close the connection after this answer (every refusal: nothing the agent sent after it is read). */
  readonly close: boolean;
}

/** A request admitted on its head, waiting for its body. */
export interface Ticket {
  readonly route: Route;
  readonly pathAndQuery: string;
  readonly grant: Grant;
  readonly session: string | null;
  readonly headers: HeaderPairs;
  readonly beta: string | undefined;
  readonly contentLength: number | undefined;
  readonly admittedAt: number;
}

export type Admission =
  { readonly admitted: false; readonly answer: BrokerAnswer } | { readonly admitted: true; readonly ticket: Ticket };

/**
 * The peer's uid as the edge learnt it: a number; null when the edge looks but could not tell (refused: the
 * check fails closed); undefined when the edge does not look (the port alone binds the repo).
 */
export type PeerUid = number | null | undefined;

export interface Broker {
  readonly repo: string;
  readonly maxBodyBytes: number;
  admit(head: RequestHead, peerUid: PeerUid): Admission;
  /** The 413 for a body over the cap. */
  tooLarge(ticket: Ticket): BrokerAnswer;
  forward(ticket: Ticket, body: Uint8Array, signal: AbortSignal): Promise<BrokerAnswer>;
  /** What is wrong with each configured key file now ([] when all may be used): the operator's start-up check. */
  keyProblems(): Promise<string[]>;
}

const REDUCERS: Reducers = { anthropic: anthropicUsage, openai: openaiUsage };

const TOKEN_WORDS: Readonly<Record<Exclude<TokenCheck, { ok: true }>['why'], string>> = {
  missing: 'no capability token was presented (Authorization: Bearer <token>)',
  unknown: 'the capability token is unknown',
  expired: 'the capability token has expired',
  revoked: 'the capability token was revoked: its run has ended',
};

/** A refusal: nothing of the request went upstream, the connection closes, and no client should retry it. */
function refusal(provider: Provider | undefined, status: number, message: string, type?: string): BrokerAnswer {
  return {
    status,
    headers: [
      ['content-type', 'application/json'],
      ['x-should-retry', 'false'],
      ...(status === 405 ? ([['allow', 'POST']] as const) : []),
    ],
    body: Buffer.from(errorBody(provider, status, message, type)),
    close: true,
  };
}

/** A 502 the broker answers for the provider (no key it may use, no way through): a client may retry it later. */
function unavailable(provider: Provider, message: string): BrokerAnswer {
  return {
    status: 502,
    headers: [['content-type', 'application/json']],
    body: Buffer.from(errorBody(provider, 502, `agent-runner broker: ${message}`)),
    close: false,
  };
}

const iso = (ms: number) => new Date(ms).toISOString();

/** The upstream body, fed to the meter on its way; `seal` runs once, at its end, on an error, or when cut. */
function meteredBody(
  source: AsyncIterable<Uint8Array>,
  meter: Meter,
  seal: (usage: MeteredUsage) => void,
): AsyncIterable<Uint8Array> {
  let sealed = false;
  const end = () => {
    if (sealed) return;
    sealed = true;
    seal(meter.finish());
  };
  return {
    [Symbol.asyncIterator]() {
      const iterator = source[Symbol.asyncIterator]();
      return {
        async next() {
          let step: IteratorResult<Uint8Array>;
          try {
            step = await iterator.next();
          } catch (error) {
            end();
            throw error;
          }
          if (step.done) end();
          else meter.feed(step.value);
          return step;
        },
        async return() {
          end();
          await iterator.return?.();
          return { done: true, value: undefined };
        },
      };
    },
  };
}

export function createBroker(repo: BrokerRepo, ports: BrokerPorts): Broker {
  const providers = configuredProviders(repo);
  const refuse = (
    status: number,
    message: string,
    provider: Provider | undefined,
    grant?: Grant,
    type?: string,
  ): Admission => {
    ports.log({
      event: 'refused',
      repo: repo.repo,
      status,
      ...(grant ? { run: grant.run, task: grant.task } : {}),
      detail: message,
    });
    return { admitted: false, answer: refusal(provider, status, message, type) };
  };

  const keyOf = async (settings: ProviderSettings): Promise<KeyVerdict> => {
    try {
      return keyFromFile(settings.keyFile, await ports.keys.read(settings.keyFile), repo.brokerUid);
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      return { ok: false, problem: `the key file ${settings.keyFile} could not be read (${reason})` };
    }
  };

  return {
    repo: repo.repo,
    maxBodyBytes: repo.maxBodyBytes,

    admit(head, peerUid) {
      const checked = checkHead(head, providers);
      if (!checked.ok) {
        ports.log({ event: 'refused', repo: repo.repo, status: checked.status, detail: checked.message });
        return { admitted: false, answer: refusal(checked.provider, checked.status, checked.message) };
      }
      const provider = checked.route.provider;
      const now = ports.clock.now();
      const token = ports.tokens.check(checked.token, now);
      if (!token.ok) return refuse(401, `agent-runner broker: ${TOKEN_WORDS[token.why]}`, provider);
      const grant = token.grant;
      if (grant.repo !== repo.repo)
        return refuse(401, "agent-runner broker: the capability token is not this repo's", provider, grant);
      if (peerUid === null)
        return refuse(401, 'agent-runner broker: the calling user could not be told', provider, grant);
      if (peerUid !== undefined && peerUid !== grant.uid)
        return refuse(
          401,
          `agent-runner broker: the capability token was presented from uid ${peerUid}, not the run's`,
          provider,
          grant,
        );
      const budget = ports.budget({ grant, route: checked.route, session: checked.session, now });
      if (!budget.allow)
        return refuse(
          OVER_BUDGET_STATUS,
          `${OVER_BUDGET_MESSAGE_PREFIX}${budget.reason}`,
          provider,
          grant,
          OVER_BUDGET_ERROR_TYPE,
        );
      return {
        admitted: true,
        ticket: {
          route: checked.route,
          pathAndQuery: checked.pathAndQuery,
          grant,
          session: checked.session,
          headers: checked.headers,
          beta: checked.beta,
          contentLength: checked.contentLength,
          admittedAt: now,
        },
      };
    },

    tooLarge(ticket) {
      const message = `agent-runner broker: the request body is larger than ${repo.maxBodyBytes} bytes`;
      ports.log({
        event: 'refused',
        repo: repo.repo,
        status: 413,
        run: ticket.grant.run,
        task: ticket.grant.task,
        detail: message,
      });
      return refusal(ticket.route.provider, 413, message);
    },

    async forward(ticket, body, signal) {
      const { route, grant } = ticket;
      const settings = repo.providers[route.provider]!;
      const key = await keyOf(settings);
      if (!key.ok) {
        ports.log({ event: 'key-problem', repo: repo.repo, run: grant.run, task: grant.task, detail: key.problem });
        return unavailable(route.provider, `no usable ${route.provider} key (the operator is told)`);
      }
      const agentHeaders =
        settings.keyKind === 'subscription-token'
          ? ticket.headers.filter(([name]) => name !== 'anthropic-beta')
          : ticket.headers;
      let response;
      try {
        response = await ports.upstream.send({
          origin: settings.origin,
          method: 'POST',
          path: ticket.pathAndQuery,
          headers: [...agentHeaders, ...credentialHeaders(route.provider, settings.keyKind, key.key, ticket.beta)],
          body,
          signal,
        });
      } catch (error) {
        const detail = `${settings.origin} could not be reached: ${error instanceof Error ? error.message : String(error)}`;
        ports.log({ event: 'upstream-failed', repo: repo.repo, run: grant.run, task: grant.task, detail });
        return unavailable(route.provider, 'the provider could not be reached');
      }
      const now = ports.clock.now();
      if (response.status === 429) {
        const reading = readRateLimit(response.headers, now);
        ports.rateLimits.rateLimited({
          v: 1,
          repo: repo.repo,
          run: grant.run,
          task: grant.task,
          grant: grant.id ?? null,
          provider: route.provider,
          ...reading,
          at: iso(now),
        });
        ports.log({
          event: 'rate-limited',
          repo: repo.repo,
          run: grant.run,
          task: grant.task,
          status: 429,
          detail: `reset ${reading.resetAt ?? 'not said'}`,
        });
      }
      const headers = answerHeaders(response.headers);
      if (!route.metered) return { status: response.status, headers, body: response.body, close: false };
      const meter = meterFor(
        REDUCERS[route.provider](),
        headerValue(response.headers, 'content-type'),
        headerValue(response.headers, 'content-encoding'),
      );
      const seal = (usage: MeteredUsage) => {
        const record: UsageRecord = Object.freeze({
          v: 1,
          repo: repo.repo,
          run: grant.run,
          task: grant.task,
          session: ticket.session,
          provider: route.provider,
          path: route.path,
          status: response.status,
          stream: meter.stream,
          ...usage,
          startedAt: iso(ticket.admittedAt),
          endedAt: iso(ports.clock.now()),
        });
        if (record.usage === 'none' && response.status < 300)
          ports.log({
            event: 'unmetered',
            repo: repo.repo,
            run: grant.run,
            task: grant.task,
            status: response.status,
            detail: 'a successful answer carried no usage the broker could read',
          });
        ports.usage.seal(record);
      };
      return { status: response.status, headers, body: meteredBody(response.body, meter, seal), close: false };
    },

    async keyProblems() {
      const problems: string[] = [];
      for (const provider of providers) {
        const key = await keyOf(repo.providers[provider]!);
        if (!key.ok) problems.push(key.problem);
      }
      return problems;
    },
  };
}
