// Budget and rate-limit verdicts as tables (spend/verdict.ts), the hold
// the watcher derives from them (control/ledger/hold.ts), and the registry's
// spend keys.
import t from 'tap';
import {
  dailyBudgetVerdict,
  MAX_RATE_LIMIT_WAITS,
  nextUtcDay,
  rateLimitVerdict,
  SPEND_DEFAULTS,
  stoppedAtBudget,
  taskBudgetLeft,
  taskBudgetVerdict,
  utcDay,
} from '../../src/spend/verdict.js';
import { holdFor } from '../../src/control/ledger/hold.js';
import { parseRegistry } from '../../src/control/registry/parse.js';
import { parseSpendPolicy } from '../../src/spend/policy.js';
import { fleetSpend } from '../../src/control/fleet/spend.js';
import type { RegistryRepo } from '../../src/types.js';

const NOW = Date.parse('2026-11-30T18:00:00.000Z');
const MIN = 60;
const MAX = 3600;

t.test('daily budget verdicts', async (t) => {
  const rows: [
    string,
    { dailyUsd?: number; dailyTokens?: number },
    { usd: number; tokens: number },
    boolean | string,
  ][] = [
    ['no budget: never over', {}, { usd: 1e6, tokens: 1e12 }, false],
    ['under the dollars', { dailyUsd: 10 }, { usd: 9.99, tokens: 0 }, false],
    [
      'at the dollars is over',
      { dailyUsd: 10 },
      { usd: 10, tokens: 0 },
      'over its daily budget: $10.00 of $10.00 spent today (UTC); no new task starts until tomorrow',
    ],
    [
      'over the tokens',
      { dailyTokens: 1000 },
      { usd: 0, tokens: 1500 },
      'over its daily token budget: 1500 of 1000 tokens today (UTC); no new task starts until tomorrow',
    ],
    [
      'both set, only tokens over',
      { dailyUsd: 10, dailyTokens: 1000 },
      { usd: 1, tokens: 1000 },
      'over its daily token budget: 1000 of 1000 tokens today (UTC); no new task starts until tomorrow',
    ],
  ];
  for (const [name, limits, spent, expected] of rows) {
    const verdict = dailyBudgetVerdict({ dailyUsd: limits.dailyUsd, dailyTokens: limits.dailyTokens }, spent);
    t.same(verdict.over ? verdict.reason : false, expected, name);
  }
});

t.test('task budget verdicts', async (t) => {
  const rows: [string, number | undefined, number, boolean | string][] = [
    ['no task_usd', undefined, 1000, false],
    ['under', 5, 4.99, false],
    ['at', 5, 5, 'over its budget: $5.00 of $5.00 (task_usd)'],
    ['over', 5, 7.5, 'over its budget: $7.50 of $5.00 (task_usd)'],
    [
      'sums compare to the micro-dollar: 0.1 + 0.2 reaches 0.3',
      0.3,
      0.1 + 0.2,
      'over its budget: $0.30 of $0.30 (task_usd)',
    ],
    ['float dust under the budget is still at it', 0.3, 0.3 - 1e-12, 'over its budget: $0.30 of $0.30 (task_usd)'],
    ['a micro-dollar under is under', 0.3, 0.299999, false],
  ];
  for (const [name, budget, spent, expected] of rows) {
    const verdict = taskBudgetVerdict(budget, spent);
    t.same(verdict.over ? verdict.reason : false, expected, name);
  }
});

t.test(
  'task budget left for the next session (the --max-budget-usd value): 0 exactly when the verdict says over',
  async (t) => {
    const rows: [string, number | undefined, number, number | undefined][] = [
      ['no task_usd: no cap', undefined, 12, undefined],
      ['nothing spent: the whole budget', 5, 0, 5],
      ['what is left', 5, 1.25, 3.75],
      ['to the micro-dollar, without float dust', 0.3, 0.1, 0.2],
      ['a micro-dollar left is left', 0.3, 0.299999, 0.000001],
      ['at the budget: nothing', 5, 5, 0],
      ['over it: nothing, never negative', 5, 7.5, 0],
    ];
    for (const [name, budget, spent, expected] of rows) {
      t.equal(taskBudgetLeft(budget, spent), expected, name);
      if (budget !== undefined)
        t.equal(
          taskBudgetLeft(budget, spent) === 0,
          taskBudgetVerdict(budget, spent).over,
          `${name}: agrees with the verdict`,
        );
    }
  },
);

t.test('a session stopped at its budget is over it, even when the sums land a hair under', async (t) => {
  const rows: [string, number | undefined, number, string][] = [
    ["past task_usd: the verdict's words", 2, 2.13, 'over its budget: $2.13 of $2.00 (task_usd)'],
    [
      'a hair under: still over, and says why',
      2,
      1.99998,
      'over its budget: $2.00 of $2.00 (task_usd); the session was stopped at the budget it was given',
    ],
    [
      'under by its own accounting: over all the same',
      2,
      1.99,
      'over its budget: $1.99 of $2.00 (task_usd); the session was stopped at the budget it was given',
    ],
    ['no task_usd known', undefined, 0.7, 'over its budget: $0.70; the session was stopped at the budget it was given'],
  ];
  for (const [name, budget, spent, expected] of rows)
    t.same(stoppedAtBudget(budget, spent), { over: true, reason: expected }, name);
});

t.test('rate-limit waits: the reset bounded to [min, max], then blocked after four waits', async (t) => {
  const at = (offsetSec: number) => new Date(NOW + offsetSec * 1000).toISOString();
  const rows: [string, string | undefined, number, { kind: 'wait'; untilSec: number } | { kind: 'block' }][] = [
    ['a reset in 10 minutes is honoured', at(600), 0, { kind: 'wait', untilSec: 600 }],
    ['a reset in 5 seconds waits the minimum', at(5), 0, { kind: 'wait', untilSec: MIN }],
    ['a reset in the past (clocks disagree) waits the minimum', at(-600), 1, { kind: 'wait', untilSec: MIN }],
    ['a reset in 5 hours waits at most an hour', at(5 * 3600), 2, { kind: 'wait', untilSec: MAX }],
    ['no reset time waits the longest', undefined, 0, { kind: 'wait', untilSec: MAX }],
    ['an unreadable reset time waits the longest', 'soon', 3, { kind: 'wait', untilSec: MAX }],
    ['the fifth limit blocks the task', at(600), MAX_RATE_LIMIT_WAITS, { kind: 'block' }],
  ];
  for (const [name, resetAt, waits, expected] of rows) {
    const verdict = rateLimitVerdict({ now: NOW, resetAt, waits, minSec: MIN, maxSec: MAX });
    if (expected.kind === 'block') t.same(verdict, { kind: 'block', reason: 'rate limited; nothing charged' }, name);
    else t.same(verdict.kind === 'wait' ? (verdict.until - NOW) / 1000 : verdict, expected.untilSec, name);
  }
  t.equal(MAX_RATE_LIMIT_WAITS, 4);
});

t.test('UTC days', async (t) => {
  t.equal(utcDay(Date.parse('2026-11-30T23:59:59.999Z')), '2026-11-30');
  t.equal(new Date(nextUtcDay(Date.parse('2026-11-30T23:59:59.999Z'))).toISOString(), '2026-12-01T00:00:00.000Z');
  t.equal(new Date(nextUtcDay(Date.parse('2026-12-31T00:00:00.000Z'))).toISOString(), '2027-01-01T00:00:00.000Z');
});

t.test("the watcher's hold: a rate limit until its reset, a daily budget until the next UTC day", async (t) => {
  const limits = { ...SPEND_DEFAULTS, dailyUsd: 10 };
  t.same(holdFor({ now: NOW, rateLimitUntil: '2026-11-30T18:30:00.000Z', limits, spentToday: { usd: 0, tokens: 0 } }), {
    reason: 'waiting for rate limit until 18:30 UTC',
    until: '2026-11-30T18:30:00.000Z',
  });
  t.equal(
    holdFor({ now: NOW, rateLimitUntil: '2026-11-30T17:30:00.000Z', limits, spentToday: { usd: 0, tokens: 0 } }),
    undefined,
    'a reset that passed holds nothing',
  );
  t.same(holdFor({ now: NOW, rateLimitUntil: undefined, limits, spentToday: { usd: 12, tokens: 0 } }), {
    reason: 'over its daily budget: $12.00 of $10.00 spent today (UTC); no new task starts until tomorrow',
    until: '2026-12-01T00:00:00.000Z',
  });
  t.equal(holdFor({ now: NOW, rateLimitUntil: 'garbage', limits, spentToday: { usd: 1, tokens: 0 } }), undefined);
});

t.test('registry: spend keys per repo and as defaults, every bad value reported', async (t) => {
  const schedules = { isValid: () => true };
  const good = parseRegistry(
    '[defaults]\ndaily_usd = 20\nrate_limit_wait_min_sec = 30\n\n[repos.web]\npath = "/srv/web"\nproxy_port = 700\ntask_usd = 2.5\ndaily_tokens = 5000000\n\n[repos.api]\npath = "/srv/api"\nproxy_port = 701\ndaily_usd = 5\nrate_limit_wait_max_sec = 10\n',
    '/r.toml',
    schedules,
  );
  t.same(good.problems, []);
  t.same(
    good.registry.repos.map((repo) => repo.spend),
    [
      { dailyUsd: 20, dailyTokens: 5000000, taskUsd: 2.5, rateLimitWaitMinSec: 30, rateLimitWaitMaxSec: 3600 },
      { dailyUsd: 5, dailyTokens: undefined, taskUsd: undefined, rateLimitWaitMinSec: 30, rateLimitWaitMaxSec: 30 },
    ],
    'a max below the min is raised to it',
  );
  const bad = parseRegistry(
    '[repos.web]\npath = "/srv/web"\nproxy_port = 700\ndaily_usd = -1\ntask_usd = "5"\ndaily_tokens = 1.5\nrate_limit_wait_min_sec = 0\n',
    '/r.toml',
    schedules,
  );
  t.same(bad.problems.map((problem) => problem.key).sort(), [
    'repos.web.daily_tokens',
    'repos.web.daily_usd',
    'repos.web.rate_limit_wait_min_sec',
    'repos.web.task_usd',
  ]);
});

t.test('orchestrate --spend: accepted and refused', async (t) => {
  const good = parseSpendPolicy(
    JSON.stringify({
      limits: { dailyUsd: 5, rateLimitWaitMinSec: 1, rateLimitWaitMaxSec: 2 },
      day: '2026-11-30',
      spentToday: { usd: 1, tokens: 10 },
      taskSpentUsd: { 'TASK-1': 0.5 },
    }),
  );
  t.same(good, {
    limits: { dailyUsd: 5, dailyTokens: undefined, taskUsd: undefined, rateLimitWaitMinSec: 1, rateLimitWaitMaxSec: 2 },
    day: '2026-11-30',
    spentToday: { usd: 1, tokens: 10 },
    taskSpentUsd: { 'TASK-1': 0.5 },
  });
  t.equal(parseSpendPolicy('{'), 'is not JSON');
  t.equal(parseSpendPolicy(JSON.stringify({ day: 'today' })), 'day must be YYYY-MM-DD');
  t.match(
    parseSpendPolicy(JSON.stringify({ day: '2026-11-30', limits: { rateLimitWaitMinSec: 0 } })),
    /rateLimitWaitMinSec/,
  );
  t.match(parseSpendPolicy(JSON.stringify({ day: '2026-11-30', taskSpentUsd: { 'TASK-1': -1 } })), /taskSpentUsd/);
});

t.test("fleet: today's spend and what holds the repo, from the day's records and the watcher's status", async (t) => {
  const repo = { name: 'web', spend: { ...SPEND_DEFAULTS, dailyUsd: 10, taskUsd: 2 } } as unknown as RegistryRepo;
  const record = (costUsd: number | null) =>
    ({
      v: 1,
      repo: 'web',
      run: 'R1',
      task: 'TASK-1',
      assistant: 'claude',
      model: null,
      effort: null,
      startedAt: '2026-11-30T17:00:00.000Z',
      endedAt: '2026-11-30T17:01:00.000Z',
      wallMs: 60000,
      inputTokens: 10,
      outputTokens: 5,
      cacheReadTokens: null,
      cacheWriteTokens: null,
      costUsd,
      outcome: 'ok',
      rateLimited: false,
      sealedAt: 'S',
      role: 'implement',
    }) as const;
  const status = {
    repo: 'web',
    state: 'running',
    pid: 1,
    heartbeat: 'H',
    rateLimitUntil: '2026-11-30T18:45:00.000Z',
  } as const;
  t.same(fleetSpend(repo, [record(1.5), record(null)], NOW, status), {
    today: { usd: 1.5, unknownCost: 1, tokens: 30, sessions: 2, text: '$1.50 + 1 unknown' },
    dailyUsd: 10,
    dailyTokens: null,
    taskUsd: 2,
    hold: 'waiting for rate limit until 18:45 UTC',
  });
  t.equal(
    fleetSpend(repo, [record(11)], NOW, undefined).hold,
    'over its daily budget: $11.00 of $10.00 spent today (UTC); no new task starts until tomorrow',
  );
  t.same(fleetSpend({ name: 'api' } as unknown as RegistryRepo, [], NOW, undefined), {
    today: { usd: 0, unknownCost: 0, tokens: 0, sessions: 0, text: '$0.00' },
    dailyUsd: null,
    dailyTokens: null,
    taskUsd: null,
    hold: null,
  });
});
