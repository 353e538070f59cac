// The broker's decisions end to end, with fakes for its ports: who is admitted, what goes upstream (the real key,
// never the agent's), one sealed record per response however it ends, a 429 recorded, the over-budget answer.
import t from 'tap';
import { createBroker, type BrokerAnswer, type BrokerPorts, type PeerUid } from '../../src/broker/broker.js';
import { createCapabilityStore } from '../../src/broker/capabilities.js';
import { OVER_BUDGET_ERROR_TYPE, OVER_BUDGET_STATUS } from '../../src/broker/providers.js';
import type { BrokerRepo } from '../../src/broker/config.js';
import type { RequestHead } from '../../src/broker/request-check.js';
import type {
  BrokerEvent,
  BudgetPolicy,
  Grant,
  KeyFileRead,
  RateLimitRecord,
  UpstreamRequest,
  UpstreamResponse,
  UsageRecord,
} from '../../src/broker/types.js';

const KEY = 'sk-ant-api03-REAL-KEY-xxxxxxxx';
const START = Date.parse('2026-12-02T10:00:00.000Z');

async function* chunks(...texts: string[]): AsyncIterable<Uint8Array> {
  for (const text of texts) yield Buffer.from(text);
}

const sse = (name: string, data: unknown) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;
const STREAM = [
  sse('message_start', {
    type: 'message_start',
    message: {
      id: 'msg_1',
      model: 'claude-x',
      usage: { input_tokens: 7, cache_read_input_tokens: 3, output_tokens: 1 },
    },
  }),
  sse('content_block_delta', { type: 'content_block_delta', delta: { type: 'text_delta', text: 'hi' } }),
  sse('message_delta', { type: 'message_delta', usage: { output_tokens: 12 } }),
  sse('message_stop', { type: 'message_stop' }),
];

interface World {
  readonly broker: ReturnType<typeof createBroker>;
  readonly sent: UpstreamRequest[];
  readonly sealed: UsageRecord[];
  readonly limited: RateLimitRecord[];
  readonly log: BrokerEvent[];
  readonly token: (grant?: Partial<Grant>) => string;
  readonly clock: { now: number };
  readonly store: ReturnType<typeof createCapabilityStore>;
}

function world(
  options: {
    answer?: (request: UpstreamRequest) => UpstreamResponse;
    key?: KeyFileRead | Error;
    budget?: BudgetPolicy;
    repo?: Partial<BrokerRepo>;
  } = {},
): World {
  let n = 0;
  const store = createCapabilityStore(() => new Uint8Array(32).fill(++n));
  const clock = { now: START };
  const sent: UpstreamRequest[] = [];
  const sealed: UsageRecord[] = [];
  const limited: RateLimitRecord[] = [];
  const log: BrokerEvent[] = [];
  const ports: BrokerPorts = {
    tokens: store,
    clock: { now: () => clock.now },
    budget: options.budget ?? (() => ({ allow: true })),
    usage: { seal: (record) => sealed.push(record) },
    rateLimits: { rateLimited: (record) => limited.push(record) },
    upstream: {
      send: async (request) => {
        sent.push(request);
        if (request.origin === 'http://down.invalid') throw new Error('connect ECONNREFUSED');
        return (
          options.answer?.(request) ?? {
            status: 200,
            headers: [['content-type', 'text/event-stream']],
            body: chunks(...STREAM),
          }
        );
      },
    },
    keys: {
      read: async () => {
        if (options.key instanceof Error) throw options.key;
        return (
          options.key ?? { kind: 'opened', isFile: true, mode: 0o100600, uid: 0, links: 1, size: 40, text: `${KEY}\n` }
        );
      },
    },
    log: (event) => log.push(event),
  };
  const repo: BrokerRepo = {
    repo: 'web',
    providers: {
      anthropic: { origin: 'https://api.anthropic.com', keyFile: '/keys/anthropic', keyKind: 'api-key' },
      openai: { origin: 'https://api.openai.com', keyFile: '/keys/openai', keyKind: 'api-key' },
    },
    maxBodyBytes: 1024,
    brokerUid: 0,
    ...options.repo,
  };
  const token = (grant: Partial<Grant> = {}) =>
    store.issue({ repo: 'web', run: 'run-1', task: 'TASK-1', uid: 1001, expiresAt: START + 60_000, ...grant });
  return { broker: createBroker(repo, ports), sent, sealed, limited, log, token, clock, store };
}

const head = (token: string | undefined, extra: string[] = [], target = '/v1/messages?beta=true'): RequestHead => ({
  method: 'POST',
  target,
  httpVersion: '1.1',
  rawHeaders: [
    'Host',
    '127.0.0.1:700',
    ...(token === undefined ? [] : ['Authorization', `Bearer ${token}`]),
    'Content-Length',
    '2',
    ...extra,
  ],
});

async function bodyOf(answer: BrokerAnswer): Promise<string> {
  if (answer.body instanceof Uint8Array) return Buffer.from(answer.body).toString('utf8');
  let text = '';
  for await (const chunk of answer.body) text += Buffer.from(chunk).toString('utf8');
  return text;
}

async function through(w: World, given: RequestHead, peer: PeerUid = undefined): Promise<BrokerAnswer> {
  const admission = w.broker.admit(given, peer);
  if (!admission.admitted) return admission.answer;
  return w.broker.forward(admission.ticket, Buffer.from('{}'), new AbortController().signal);
}

t.test(
  'admitted: the real key goes upstream in place of every agent credential; the answer is unchanged',
  async (t) => {
    const w = world();
    const answer = await through(
      w,
      head(w.token(), ['x-api-key', 'sk-ant-forged', 'Cookie', 'a=b', 'X-Agent-Runner-Session', 's-9']),
    );
    t.equal(answer.status, 200);
    t.equal(await bodyOf(answer), STREAM.join(''), 'the bytes pass unchanged');
    t.equal(w.sent.length, 1);
    const sent = w.sent[0]!;
    t.equal(sent.origin, 'https://api.anthropic.com');
    t.equal(sent.path, '/v1/messages?beta=true');
    t.same(
      sent.headers.filter(([name]) => /key|auth|cookie|session/.test(name)),
      [['x-api-key', KEY]],
      'only the real key',
    );
    t.same(w.sealed, [
      {
        v: 1,
        repo: 'web',
        run: 'run-1',
        task: 'TASK-1',
        session: 's-9',
        provider: 'anthropic',
        path: '/v1/messages',
        status: 200,
        stream: true,
        model: 'claude-x',
        responseId: 'msg_1',
        inputTokens: 7,
        outputTokens: 12,
        cacheReadTokens: 3,
        cacheWriteTokens: null,
        usage: 'read',
        startedAt: '2026-12-02T10:00:00.000Z',
        endedAt: '2026-12-02T10:00:00.000Z',
      },
    ]);
    t.ok(Object.isFrozen(w.sealed[0]), 'a sealed record cannot be changed');
  },
);

t.test(
  'refused with 401 and nothing forwarded: missing, unknown, expired, revoked, another repo, another uid',
  async (t) => {
    const w = world();
    const live = w.token();
    const expired = w.token({ expiresAt: START });
    const revoked = w.token({ run: 'run-0' });
    w.store.revokeRun('run-0', START);
    const foreign = w.token({ repo: 'api' });
    const cases: readonly [string, RequestHead, PeerUid, RegExp][] = [
      ['no token', head(undefined), undefined, /no capability token/],
      ['an API key instead', head('sk-ant-api03-guess'), undefined, /unknown/],
      ['expired', head(expired), undefined, /expired/],
      ['revoked at its run end', head(revoked), undefined, /revoked: its run has ended/],
      ["another repo's", head(foreign), undefined, /not this repo's/],
      ['from another uid', head(live), 1002, /presented from uid 1002/],
      ['the uid could not be told', head(live), null, /could not be told/],
    ];
    for (const [name, given, peer, message] of cases) {
      const answer = await through(w, given, peer);
      t.equal(answer.status, 401, name);
      t.equal(answer.close, true, `${name}: the connection closes`);
      const body = JSON.parse(await bodyOf(answer)) as { type: string; error: { type: string; message: string } };
      t.equal(body.error.type, 'authentication_error', `${name}: in Anthropic's shape`);
      t.match(body.error.message, message, name);
    }
    t.equal(w.sent.length, 0, 'nothing went upstream');
    t.equal((await through(w, head(live), 1001)).status, 200, 'the right uid passes');
  },
);

t.test('over budget: the provider-shaped refusal adapters map, before anything is forwarded', async (t) => {
  const w = world({
    budget: ({ grant }) => ({ allow: false, reason: `over its budget: $1.00 of $1.00 (task_usd) ${grant.task}` }),
  });
  const answer = await through(w, head(w.token()));
  t.equal(answer.status, OVER_BUDGET_STATUS);
  t.same(answer.headers, [
    ['content-type', 'application/json'],
    ['x-should-retry', 'false'],
  ]);
  t.same(JSON.parse(await bodyOf(answer)), {
    type: 'error',
    error: {
      type: OVER_BUDGET_ERROR_TYPE,
      message: 'agent-runner broker: over budget: over its budget: $1.00 of $1.00 (task_usd) TASK-1',
    },
  });
  const openai = await through(w, head(w.token(), [], '/v1/responses'));
  const error = (JSON.parse(await bodyOf(openai)) as { error: { type: string; code: string } }).error;
  t.same([error.type, error.code], [OVER_BUDGET_ERROR_TYPE, OVER_BUDGET_ERROR_TYPE], "in OpenAI's shape too");
  t.equal(w.sent.length, 0);
  t.match(w.log[0], { event: 'refused', status: OVER_BUDGET_STATUS, run: 'run-1', task: 'TASK-1' });
});

t.test('a key that may not be used: 502 to the agent, the reason to the operator, nothing forwarded', async (t) => {
  const w = world({ key: { kind: 'opened', isFile: true, mode: 0o100644, uid: 0, links: 1, size: 40, text: KEY } });
  const answer = await through(w, head(w.token()));
  t.equal(answer.status, 502);
  t.notMatch(await bodyOf(answer), /keys|0644/, 'the agent is not told where the key is');
  t.equal(w.sent.length, 0);
  t.match(w.log.at(-1), { event: 'key-problem', detail: /the key file \/keys\/anthropic .*chmod 600/ });
  t.same((await w.broker.keyProblems()).length, 2, 'the start-up check names both files');
  const unreadable = world({ key: new Error('EACCES: permission denied') });
  t.equal((await through(unreadable, head(unreadable.token()))).status, 502);
  t.match(unreadable.log.at(-1), { event: 'key-problem', detail: /could not be read \(EACCES: permission denied\)/ });
  t.equal(unreadable.sent.length, 0);
});

t.test('an unreachable upstream is a 502, and no usage is sealed', async (t) => {
  const w = world({
    repo: {
      providers: { anthropic: { origin: 'http://down.invalid', keyFile: '/keys/anthropic', keyKind: 'api-key' } },
    },
  });
  const answer = await through(w, head(w.token()));
  t.equal(answer.status, 502);
  t.match(await bodyOf(answer), /could not be reached/);
  t.same(w.sealed, []);
  t.match(w.log.at(-1), { event: 'upstream-failed', detail: /ECONNREFUSED/ });
});

t.test('a 429 is recorded with its retry-after, passed on, and sealed as no usage', async (t) => {
  const w = world({
    answer: () => ({
      status: 429,
      headers: [
        ['content-type', 'application/json'],
        ['retry-after', '17'],
      ],
      body: chunks('{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}'),
    }),
  });
  const answer = await through(w, head(w.token()));
  t.equal(answer.status, 429);
  t.same(answer.headers, [
    ['content-type', 'application/json'],
    ['retry-after', '17'],
  ]);
  await bodyOf(answer);
  t.same(w.limited, [
    {
      v: 1,
      repo: 'web',
      run: 'run-1',
      task: 'TASK-1',
      grant: null,
      provider: 'anthropic',
      retryAfterSec: 17,
      resetAt: '2026-12-02T10:00:17.000Z',
      at: '2026-12-02T10:00:00.000Z',
    },
  ]);
  t.match(w.sealed, [{ status: 429, usage: 'none', inputTokens: null }]);
});

t.test('one record per response, however it ends: read whole, left early, or cut by an error', async (t) => {
  const w = world();
  const early = await through(w, head(w.token()));
  for await (const _chunk of early.body as AsyncIterable<Uint8Array>) break;
  t.match(w.sealed, [{ usage: 'partial', inputTokens: 7, outputTokens: 1 }], 'left after the first chunk');
  const failing = world({
    answer: () => ({
      status: 200,
      headers: [['content-type', 'text/event-stream']],
      body: (async function* () {
        yield Buffer.from(STREAM[0]!);
        throw new Error('socket hang up');
      })(),
    }),
  });
  const cut = await through(failing, head(failing.token()));
  await t.rejects(bodyOf(cut), /socket hang up/);
  t.match(failing.sealed, [{ usage: 'partial', inputTokens: 7 }]);
  t.equal(failing.sealed.length, 1);
});

t.test('count_tokens is forwarded and not metered; a subscription token carries its beta flag', async (t) => {
  const w = world({
    repo: {
      providers: {
        anthropic: { origin: 'https://api.anthropic.com', keyFile: '/keys/a', keyKind: 'subscription-token' },
      },
    },
    answer: () => ({
      status: 200,
      headers: [['content-type', 'application/json']],
      body: chunks('{"input_tokens":42}'),
    }),
  });
  const answer = await through(
    w,
    head(w.token(), ['anthropic-beta', 'claude-code-20250219'], '/v1/messages/count_tokens'),
  );
  t.equal(await bodyOf(answer), '{"input_tokens":42}');
  t.same(w.sealed, []);
  t.same(
    w.sent[0]!.headers.filter(([name]) => name === 'authorization' || name === 'anthropic-beta'),
    [
      ['authorization', `Bearer ${KEY}`],
      ['anthropic-beta', 'claude-code-20250219,oauth-2025-04-20'],
    ],
  );
  t.equal((await through(w, head(w.token(), [], '/v1/responses'))).status, 404, 'no OpenAI key, no OpenAI path');
});

t.test('a body over the cap is refused with 413', async (t) => {
  const w = world();
  const admission = w.broker.admit(head(w.token()), undefined);
  if (!admission.admitted) throw new Error('not admitted');
  const answer = w.broker.tooLarge(admission.ticket);
  t.equal(answer.status, 413);
  t.match(await bodyOf(answer), /"request_too_large".*larger than 1024 bytes/);
});
