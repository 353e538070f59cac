// The drain's books on sessions with a fake clock: the rate-limit gate holds
// every new session until the reset, a limited session runs again without an
// attempt, the daily budget stops new starts and lifts at the next UTC day.
import t from 'tap';
import { SessionGuard } from '../../src/drain/session-guard.js';
import { SPEND_DEFAULTS } from '../../src/spend/verdict.js';
import type { SessionEnd } from '../../src/agent/run-task.js';
import type { AgentResult } from '../../src/types.js';
import type { DrainEventBody } from '../../src/drain/types.js';
import { fakeClock } from '../helpers/fake-ports.js';
import { writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { readRememberedReset, rememberReset } from '../../src/drain/rate-limit-memory.js';
import { realFs } from '../../src/io/real-ports.js';
import { tempDir } from '../helpers/temp.js';

const START = Date.parse('2026-11-30T23:00:00.000Z');
const task = { id: 'TASK-1' };

function setup(limits: Partial<typeof SPEND_DEFAULTS> = {}, spentUsd = 0) {
  const clock = fakeClock(START);
  const events: DrainEventBody[] = [];
  const stop = new AbortController();
  const guard = new SessionGuard(
    clock,
    {
      limits: { ...SPEND_DEFAULTS, rateLimitWaitMinSec: 60, rateLimitWaitMaxSec: 600, ...limits },
      day: '2026-11-30',
      spentToday: { usd: spentUsd, tokens: 0 },
      taskSpentUsd: {},
    },
    'claude',
    (event) => events.push(event),
    stop.signal,
  );
  return { clock, events, guard, stop };
}

const session = (result: AgentResult, judged: SessionEnd['judged'] = undefined): SessionEnd => ({
  iteration: 1,
  role: 'implement',
  result,
  startedAt: START,
  endedAt: START + 1000,
  model: undefined,
  effort: undefined,
  judged,
});
const limited: AgentResult = {
  ok: false,
  failure: 'rate-limited',
  detail: 'hit your limit',
  resetAt: new Date(START + 300_000).toISOString(),
  costUsd: 0,
};

t.test(
  'a rate limit closes the gate until the reset; the task runs again, uncharged; a stop ends the wait',
  async (t) => {
    const { clock, events, guard, stop } = setup();
    t.same(guard.afterSession(task, session(limited)), { kind: 'again', reason: 'rate limited (wait 1); not charged' });
    t.same(
      events.map((event) => event.event === 'rate-limit-wait' && [event.until, event.detail]),
      [[new Date(START + 300_000).toISOString(), `reset ${limited.resetAt}`]],
    );
    let opened = false;
    const waiting = guard.beforeSession({ id: 'TASK-2' }).then((held) => {
      opened = true;
      return held;
    });
    clock.advance(299_000);
    await new Promise((resolve) => setImmediate(resolve));
    t.equal(opened, false, 'no new session before the reset, for any task');
    clock.advance(1000);
    t.equal(await waiting, undefined, 'the gate opens at the reset');
    t.equal(guard.reports.length, 1);

    guard.afterSession(task, session(limited));
    const held = guard.beforeSession(task);
    stop.abort();
    t.same(await held, { kind: 'unfinished', reason: 'the drain was stopped before the session started' });
  },
);

t.test('four waits, then blocked; a usable result is kept even with a rate-limit event', async (t) => {
  const { guard } = setup();
  const followUps = Array.from({ length: 5 }, () => guard.afterSession(task, session(limited)).kind);
  t.same(followUps, ['again', 'again', 'again', 'again', 'end']);
  t.same(guard.afterSession(task, session(limited)), {
    kind: 'end',
    outcome: { kind: 'blocked', reason: 'rate limited; nothing charged' },
  });
  const other = setup();
  t.same(
    other.guard.afterSession(task, session(limited, { kind: 'done' })),
    { kind: 'go-on' },
    'the task is Done: the result is used',
  );
  t.same(other.guard.afterSession(task, session({ ok: true, rateLimitSeen: {} }, { kind: 'done' })), { kind: 'go-on' });
});

t.test('the daily budget stops new starts and lifts at the next UTC day (fake clock)', async (t) => {
  const { clock, guard, events } = setup({ dailyUsd: 5 }, 4);
  t.equal(guard.budgetStop, undefined);
  guard.afterSession(task, session({ ok: true, costUsd: 1.5 }, { kind: 'done' }));
  t.equal(
    guard.budgetStop,
    'over its daily budget: $5.50 of $5.00 spent today (UTC); no new task starts until tomorrow',
  );
  t.ok(events.some((event) => event.event === 'budget-reached'));
  clock.advance(59 * 60_000);
  t.match(guard.budgetStop, /over its daily budget/, 'still 2026-11-30 at 23:59');
  clock.advance(60_000);
  t.equal(guard.budgetStop, undefined, 'midnight UTC: a new day, nothing spent');
  guard.afterSession(task, session({ ok: true, costUsd: 4.99 }, { kind: 'done' }));
  t.equal(guard.budgetStop, undefined);
});

t.test('task budget: reached over sessions, parks an unfinished task, checked before a session starts', async (t) => {
  const { guard } = setup({ taskUsd: 2 });
  t.same(guard.afterSession(task, session({ ok: true, costUsd: 1.5 })), { kind: 'go-on' });
  t.same(guard.afterSession(task, session({ ok: true, costUsd: 1 })), {
    kind: 'end',
    outcome: { kind: 'over-budget', reason: 'over its budget: $2.50 of $2.00 (task_usd)' },
  });
  t.same(await guard.beforeSession(task), {
    kind: 'over-budget',
    reason: 'over its budget: $2.50 of $2.00 (task_usd)',
  });
  t.equal(await guard.beforeSession({ id: 'TASK-2' }), undefined, 'other tasks are not affected');
  t.same(
    guard.afterSession(task, session({ ok: true, costUsd: 1 }, { kind: 'done' })),
    { kind: 'go-on' },
    'a Done task lands whatever it cost',
  );
});

t.test(
  'task budget left: each session is given what remains; one stopped at it is parked, its cost on the books',
  async (t) => {
    const { guard } = setup({ taskUsd: 2 });
    t.equal(guard.budgetLeft(task), 2, 'nothing spent: the whole task_usd');
    t.same(guard.afterSession(task, session({ ok: true, costUsd: 0.75 })), { kind: 'go-on' });
    t.equal(guard.budgetLeft(task), 1.25, 'the next session gets what is left');
    const stopped: AgentResult = {
      ok: false,
      failure: 'over-budget',
      detail: 'stopped at its budget: Reached maximum budget ($1.25) (error_max_budget_usd)',
      costUsd: 1.24,
    };
    t.same(
      guard.afterSession(task, session(stopped, { kind: 'agent-failed', reason: 'over-budget: stopped' })),
      {
        kind: 'end',
        outcome: {
          kind: 'over-budget',
          reason: 'over its budget: $1.99 of $2.00 (task_usd); the session was stopped at the budget it was given',
        },
      },
      'stopped at its budget though the sums stay under task_usd: parked all the same, not an ordinary failure',
    );
    t.same(
      [guard.reports.length, guard.reports.at(-1)?.costUsd, guard.reports.at(-1)?.outcome],
      [2, 1.24, 'over-budget'],
      'its cost goes to the ledger as usual',
    );
    t.same(
      guard.afterSession(task, session({ ok: false, failure: 'over-budget', costUsd: 0.5 }, { kind: 'done' })),
      { kind: 'go-on' },
      'Done in the session that reached the budget: the work lands',
    );
    t.equal(guard.budgetLeft(task), 0, 'nothing left');
    t.same(
      await guard.beforeSession(task),
      { kind: 'over-budget', reason: 'over its budget: $2.49 of $2.00 (task_usd)' },
      'and no session starts with nothing left',
    );
    t.equal(setup().guard.budgetLeft(task), undefined, 'no task_usd: no cap, no flag');
  },
);

t.test(
  'a reset an earlier drain recorded holds this drain too, never beyond the longest wait, only for that assistant',
  async (t) => {
    const closed: number[] = [];
    const clock = fakeClock(START);
    const events: DrainEventBody[] = [];
    const guard = new SessionGuard(
      clock,
      {
        limits: { ...SPEND_DEFAULTS, rateLimitWaitMinSec: 60, rateLimitWaitMaxSec: 600 },
        day: '2026-11-30',
        spentToday: { usd: 0, tokens: 0 },
        taskSpentUsd: {},
      },
      'claude',
      (event) => events.push(event),
      new AbortController().signal,
      (until) => closed.push(until),
    );
    guard.carryOver({ assistant: 'codex', until: START + 300_000 });
    guard.carryOver({ assistant: 'claude', until: START - 1 });
    t.equal(events.length, 0, "another assistant's reset, or one already past, holds nothing");
    guard.carryOver({ assistant: 'claude', until: START + 86_400_000 });
    t.same(
      events.map((event) => event.event === 'rate-limit-wait' && event.until),
      [new Date(START + 600_000).toISOString()],
      "a far reset (the file is the user's) is capped at the longest wait",
    );
    let opened = false;
    const waiting = guard.beforeSession(task).then(() => (opened = true));
    clock.advance(599_000);
    await new Promise((resolve) => setImmediate(resolve));
    t.equal(opened, false);
    clock.advance(1000);
    await waiting;
    guard.afterSession(task, session(limited));
    t.same(
      closed,
      [START + 600_000 + 60_000],
      'a new reset is handed on for the next drain (here the minimum wait: the reported reset had passed)',
    );
  },
);

t.test('the remembered reset: written and read back; a broken or foreign file is no reset', async (t) => {
  const dir = tempDir(t, 'rate-limit-memory-');
  t.equal(await readRememberedReset(realFs, dir), undefined, 'nothing remembered');
  rememberReset(realFs, dir, { assistant: 'claude', until: START + 60_000 });
  await new Promise((resolve) => setTimeout(resolve, 100));
  t.same(await readRememberedReset(realFs, dir), { assistant: 'claude', until: START + 60_000 });
  writeFileSync(path.join(dir, 'rate-limit.json'), '{"assistant": 7, "until": "never"}');
  t.equal(await readRememberedReset(realFs, dir), undefined);
  writeFileSync(path.join(dir, 'rate-limit.json'), '{broken');
  t.equal(await readRememberedReset(realFs, dir), undefined);
});
