// What a 429 says of when to try again, and the budget the broker holds a repo to: the ledger's figures when it
// took the repo on, plus what it metered since.
import t from 'tap';
import { usageRecord } from '../helpers/broker-records.js';
import { durationMs, readRateLimit } from '../../src/broker/rate-limit.js';
import { meteredSpend, NO_BUDGET, spendBudget } from '../../src/broker/budget.js';
import { SPEND_DEFAULTS } from '../../src/spend/verdict.js';
import type { SpendPolicy } from '../../src/spend/policy.js';
import type { BudgetQuestion } from '../../src/broker/types.js';

const NOW = Date.parse('2026-12-02T10:00:00.000Z');

t.test('a 429: retry-after-ms, retry-after in seconds or as a date, else the latest reset header', async (t) => {
  t.same(readRateLimit([['retry-after', '30']], NOW), { retryAfterSec: 30, resetAt: '2026-12-02T10:00:30.000Z' });
  t.same(
    readRateLimit(
      [
        ['retry-after-ms', '1500'],
        ['retry-after', '30'],
      ],
      NOW,
    ),
    { retryAfterSec: 1.5, resetAt: '2026-12-02T10:00:01.500Z' },
  );
  t.same(readRateLimit([['retry-after', 'Wed, 02 Dec 2026 10:02:00 GMT']], NOW), {
    retryAfterSec: 120,
    resetAt: '2026-12-02T10:02:00.000Z',
  });
  t.same(
    readRateLimit(
      [
        ['anthropic-ratelimit-requests-reset', '2026-12-02T10:00:20Z'],
        ['anthropic-ratelimit-tokens-reset', '2026-12-02T10:01:00Z'],
      ],
      NOW,
    ),
    { retryAfterSec: null, resetAt: '2026-12-02T10:01:00.000Z' },
  );
  t.same(
    readRateLimit(
      [
        ['x-ratelimit-reset-requests', '20ms'],
        ['x-ratelimit-reset-tokens', '6m0s'],
      ],
      NOW,
    ),
    { retryAfterSec: null, resetAt: '2026-12-02T10:06:00.000Z' },
  );
  t.same(readRateLimit([], NOW), { retryAfterSec: null, resetAt: null }, 'nothing said');
  t.same(readRateLimit([['retry-after', 'soon']], NOW), { retryAfterSec: null, resetAt: null });
  t.same(readRateLimit([['retry-after', '999999999']], NOW), { retryAfterSec: null, resetAt: null }, 'not believable');
  t.equal(durationMs('1h2m3.5s'), 3_723_500);
  t.equal(durationMs('5 minutes'), undefined);
});

const record = usageRecord;

const snapshot = (limits: Partial<SpendPolicy['limits']>, fields: Partial<SpendPolicy> = {}): SpendPolicy => ({
  limits: { ...SPEND_DEFAULTS, ...limits },
  day: '2026-12-02',
  spentToday: { usd: 0, tokens: 0 },
  taskSpentUsd: {},
  ...fields,
});

const question = (task = 'TASK-1', now = NOW): BudgetQuestion => ({
  grant: { repo: 'web', run: 'run-1', task, uid: 1001, expiresAt: now + 1 },
  route: { provider: 'anthropic', path: '/v1/messages', metered: true },
  session: null,
  now,
});

t.test('daily_tokens: the ledger at start plus what was metered since', async (t) => {
  const metered = meteredSpend(() => undefined);
  const policy = spendBudget(snapshot({ dailyTokens: 250 }, { spentToday: { usd: 0, tokens: 100 } }), metered);
  t.same(policy(question()), { allow: true });
  metered.seal(record({}));
  t.same(policy(question()), { allow: true }, '100 + 100 of 250');
  metered.seal(record({ outputTokens: 70 }));
  const answer = policy(question());
  t.equal(answer.allow, false, '100 + 250 is past 250');
  t.match(!answer.allow && answer.reason, /over its daily token budget: 350 of 250 tokens today/);
  t.same(policy(question('TASK-1', Date.parse('2026-12-03T00:00:01Z'))), { allow: true }, 'a new UTC day');
});

t.test('task_usd and daily_usd, with a price per response', async (t) => {
  const metered = meteredSpend((r) => (r.model === 'claude-sonnet-4-5' ? 0.4 : undefined));
  const policy = spendBudget(snapshot({ taskUsd: 1, dailyUsd: 5 }, { taskSpentUsd: { 'TASK-1': 0.5 } }), metered);
  t.same(policy(question()), { allow: true });
  metered.seal(record({}));
  t.same(policy(question()), { allow: true }, '$0.90 of $1');
  metered.seal(record({ model: 'unpriced' }));
  t.same(policy(question()), { allow: true }, 'an unpriced model adds no USD');
  metered.seal(record({}));
  const answer = policy(question());
  t.match(!answer.allow && answer.reason, /^over its budget: \$1\.30 of \$1\.00 \(task_usd\)/);
  t.same(policy(question('TASK-2')), { allow: true }, 'another task has its own budget');
  for (let i = 0; i < 11; i++) metered.seal(record({ task: 'TASK-3' }));
  const daily = policy(question('TASK-2'));
  t.match(!daily.allow && daily.reason, /over its daily budget: \$5\.20 of \$5\.00/);
  t.same(NO_BUDGET(question()), { allow: true });
});
