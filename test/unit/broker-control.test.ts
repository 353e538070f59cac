// The broker's control lines, both ways: what root accepts of the broker (exactly its messages, bounded, a
// capability of the right shape, records whose every field is checked) and what the broker accepts of root; the
// serve config checked whole; the price table.
import t from 'tap';
import {
  encodeControl,
  parseBrokerMessage,
  parseRootMessage,
  CONTROL_LINE_BYTES,
} from '../../src/broker/serve/control.js';
import { readServeConfig } from '../../src/broker/serve/config.js';
import { modelPrice, priceOf } from '../../src/broker/prices.js';
import { SPEND_DEFAULTS } from '../../src/spend/verdict.js';
import { usageRecord } from '../helpers/broker-records.js';

const usage = usageRecord({
  session: 'TASK-1-1',
  cacheReadTokens: 1000,
  cacheWriteTokens: 0,
  startedAt: '2026-12-02T10:00:00.000Z',
  endedAt: '2026-12-02T10:00:01.000Z',
});
const line = (value: unknown) => JSON.stringify(value);

t.test('root accepts exactly the broker’s messages', async (t) => {
  const token = `arcap_${'A'.repeat(43)}`;
  for (const message of [
    { event: 'ready', port: 712 },
    { event: 'failed', reason: 'the key file /k is a link' },
    { event: 'granted', id: 1, token },
    { event: 'refused', id: 2, reason: 'no' },
    { event: 'usage', record: usage },
    {
      event: 'rate-limited',
      record: {
        v: 1,
        repo: 'web',
        run: 'run-1',
        task: '-',
        grant: 4,
        provider: 'openai',
        retryAfterSec: 30,
        resetAt: '2026-12-02T10:01:00.000Z',
        at: '2026-12-02T10:00:30.000Z',
      },
    },
  ])
    t.match(parseBrokerMessage(encodeControl(message as never)), { ok: true }, message.event);
  const refused: readonly [unknown, RegExp][] = [
    ['nope', /not an object/],
    [[1], /not an object/],
    [{ event: 'ready', port: 0 }, /not a TCP port/],
    [{ event: 'ready', port: 80, extra: 1 }, /unknown field "extra"/],
    [{ event: 'granted', id: 1, token: 'sk-ant-real' }, /token is malformed/],
    [{ event: 'granted', id: 0, token }, /id is not an id/],
    [{ event: 'usage', record: { ...usage, task: '../../x' } }, /task is not a task id/],
    [{ event: 'usage', record: { ...usage, inputTokens: -1 } }, /inputTokens is not a count/],
    [{ event: 'usage', record: { ...usage, inputTokens: 1.5 } }, /inputTokens is not a count/],
    [{ event: 'usage', record: { ...usage, provider: 'evil' } }, /provider is unknown/],
    [{ event: 'usage', record: { ...usage, status: 99 } }, /not an HTTP status/],
    [{ event: 'usage', record: { ...usage, endedAt: 'later' } }, /not a time/],
    [{ event: 'usage', record: { ...usage, costUsd: 0 } }, /unknown field "costUsd"/],
    [{ event: 'usage', record: { ...usage, session: 'x'.repeat(129) } }, /session or path/],
    [{ event: 'spawn', program: '/bin/sh' }, /unknown event "spawn"/],
  ];
  for (const [message, reason] of refused)
    t.match(parseBrokerMessage(line(message)), { ok: false, reason }, String(reason));
  t.match(parseBrokerMessage('{nope'), { ok: false, reason: /not JSON/ });
  t.match(parseBrokerMessage(line({ event: 'failed', reason: 'x'.repeat(CONTROL_LINE_BYTES) })), {
    ok: false,
    reason: /longer than/,
  });
});

t.test('the broker accepts exactly root’s messages', async (t) => {
  t.match(parseRootMessage(line({ op: 'config', config: { any: 1 } })), { ok: true });
  t.match(parseRootMessage(line({ op: 'grant', id: 1, task: 'TASK-1', uid: 1001, ttlSec: 60 })), { ok: true });
  t.match(parseRootMessage(line({ op: 'grant', id: 2, task: '-', uid: 1001, ttlSec: 60 })), { ok: true }, 'no task');
  t.match(parseRootMessage(line({ op: 'revoke', id: 1 })), { ok: true });
  for (const [message, reason] of [
    [{ op: 'grant', id: 1, task: 'TASK-1', uid: 0, ttlSec: 60 }, /root never holds a capability/],
    [{ op: 'grant', id: 1, task: 'a b', uid: 5, ttlSec: 60 }, /not a task id/],
    [{ op: 'grant', id: 1, task: 'TASK-1', uid: 5, ttlSec: 90_000 }, /ttlSec/],
    [{ op: 'grant', id: 1, task: 'TASK-1', uid: 5 }, /ttlSec is missing/],
    [{ op: 'revoke', id: 'all' }, /not an id/],
    [{ op: 'exec' }, /unknown op "exec"/],
  ] as const)
    t.match(parseRootMessage(line(message)), { ok: false, reason }, String(reason));
});

t.test('a serve config is checked whole', async (t) => {
  const good = {
    repo: {
      repo: 'web',
      providers: { anthropic: { origin: 'https://api.anthropic.com', keyFile: '/k/a', keyKind: 'api-key' } },
      maxBodyBytes: 1024 * 1024,
      brokerUid: 990,
    },
    run: 'run-1',
    host: '127.0.0.1',
    port: 712,
    dropTo: { uid: 990, gid: 990 },
    spend: { limits: SPEND_DEFAULTS, day: '2026-12-02', spentToday: { usd: 0, tokens: 0 }, taskSpentUsd: {} },
    peerCheck: true,
  };
  t.ok('config' in readServeConfig(good));
  const bad = readServeConfig({
    ...good,
    port: 0,
    dropTo: { uid: 991, gid: 990 },
    proxy: 'http://127.0.0.1:3128/path',
    peerCheck: 'yes',
  });
  t.ok('problems' in bad);
  const text = 'problems' in bad ? bad.problems.join('\n') : '';
  t.match(text, /dropTo uid 991 is not the key files' owner/);
  t.match(text, /listens on the repo broker_port, not 0/);
  t.match(text, /proxy http:\/\/127\.0\.0\.1:3128\/path must be scheme/);
  t.match(text, /peerCheck is not true or false/);
  t.match(readServeConfig(null), { problems: ['the broker config is not an object'] });
});

t.test('prices: list prices per family, a narrower prefix first, unknown models unpriced', async (t) => {
  t.same(modelPrice('claude-sonnet-4-5-20250929'), { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 });
  t.equal(modelPrice('claude-opus-4-5')!.input, 5, 'Opus 4.5 is priced apart from Opus 4');
  t.equal(modelPrice('claude-opus-4-1')!.input, 15);
  t.equal(modelPrice('gpt-5.1-codex-mini')!.input, 0.25, 'a codex mini is not priced as gpt-5');
  t.equal(modelPrice('gpt-5-codex')!.input, 1.25);
  t.equal(modelPrice('llama-3'), undefined);
  t.equal(modelPrice(null), undefined);
  const usd = priceOf(usage)!;
  t.equal(Math.round(usd * 1e9), Math.round((10 * 3 + 20 * 15 + 1000 * 0.3) * 1e3), 'tokens times the list price');
  t.equal(priceOf({ ...usage, usage: 'none' }), undefined, 'an answer with no usage costs nothing known');
  t.equal(priceOf({ ...usage, model: 'unknown-model' }), undefined);
});
