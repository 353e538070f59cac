// Events derived from root's records (pure): a run record's parked and
// blocked tasks, its end, staging ready, a budget stop; the watcher's facts
// when they start or change, never while they last; the bodies sent.
import t from 'tap';
import {
  eventsOfRun,
  eventsOfWatcher,
  notifyBody,
  redactUrl,
  retryDelayMs,
  judgeStatus,
  SEND_POLICY,
  webhookUrlProblem,
  withoutUrl,
  type WatcherFacts,
} from '../../src/control/notify/index.js';
import type { RunRecord } from '../../src/control/runs/index.js';

const BASE = 'a'.repeat(40);
const HEAD = 'b'.repeat(40);

function aRun(change: Partial<RunRecord> = {}): RunRecord {
  return {
    id: '20261206T040000000000Z-aaaaaa',
    repo: 'web',
    trigger: 'watch',
    user: 'agent-web',
    args: ['--drain'],
    status: 'finished',
    startedAt: '2026-12-06T04:00:00.000Z',
    endedAt: '2026-12-06T04:05:00.000Z',
    exitCode: 0,
    outcome: 'drained',
    pushed: true,
    staging: { base: BASE, head: HEAD },
    tasks: [
      { id: 'TASK-1', title: 'One', outcome: 'landed', durationMs: 1 },
      { id: 'TASK-2', title: 'Two', outcome: 'parked', reason: 'gate red: npm test failed', durationMs: 1 },
      { id: 'TASK-3', title: 'Three', outcome: 'blocked', reason: 'needs the API key', durationMs: 1 },
    ],
    ...change,
  };
}

t.test('a finished run: parked, blocked, its end, staging ready', async (t) => {
  const events = eventsOfRun(aRun(), { base: BASE, head: HEAD, ahead: 3 });
  t.same(
    events.map((event) => [event.kind, event.key, event.summary]),
    [
      ['task-parked', '20261206T040000000000Z-aaaaaa:TASK-2:parked', 'web: TASK-2 parked: gate red: npm test failed'],
      ['task-blocked', '20261206T040000000000Z-aaaaaa:TASK-3:blocked', 'web: TASK-3 blocked: needs the API key'],
      [
        'drain-ended',
        '20261206T040000000000Z-aaaaaa:drain-ended',
        'web: drain drained: 1 landed, 1 parked, 1 blocked, staging 3 commits ahead',
      ],
      [
        'staging-ready',
        `staging-ready:${HEAD}`,
        'web: staging ready to promote, staging 3 commits ahead (agent-runner promote --repo web)',
      ],
    ],
  );
  t.same(events[2]!.details, {
    runId: '20261206T040000000000Z-aaaaaa',
    outcome: 'drained',
    exitCode: 0,
    landed: 1,
    parked: 1,
    blocked: 1,
    failed: 0,
    interrupted: 0,
    pushed: true,
    staging: { base: BASE, head: HEAD, ahead: 3 },
  });
  t.same(eventsOfRun(aRun(), { base: BASE, head: HEAD, ahead: 3 }), events, 'derived twice: the same keys');
});

t.test('no staging-ready when nothing was pushed or staging is the base; a budget stop once a day', async (t) => {
  const kinds = (run: RunRecord, ahead: number | undefined, head = HEAD) =>
    eventsOfRun(run, { base: BASE, head, ahead }).map((event) => event.kind);
  t.notOk(kinds(aRun({ pushed: false }), 3).includes('staging-ready'));
  t.notOk(kinds(aRun(), 0, BASE).includes('staging-ready'));
  t.same(eventsOfRun(aRun({ status: 'running' }), undefined), [], 'a run in progress tells nothing yet');
  const budget = eventsOfRun(aRun({ tasks: [], budgetStop: 'over its daily budget: $5.10 of $5.00' }), undefined);
  t.same(
    budget.map((event) => [event.kind, event.key]),
    [
      ['drain-ended', '20261206T040000000000Z-aaaaaa:drain-ended'],
      ['budget-hit', 'budget-hit:2026-12-06'],
    ],
  );
});

t.test("the watcher's facts: an event when a fact starts or changes, none while it lasts", async (t) => {
  const at = '2026-12-06T05:00:00.000Z';
  const rate: WatcherFacts = {
    hold: { reason: 'waiting for rate limit until 06:00 UTC', until: '2026-12-06T06:00:00.000Z', rateLimit: true },
  };
  const budget: WatcherFacts = {
    hold: { reason: 'over its daily budget', until: '2026-12-07T00:00:00.000Z', rateLimit: false },
  };
  const skipped: WatcherFacts = { skipped: { message: 'registry: 1 problem', isolation: false } };
  const isolation: WatcherFacts = { skipped: { message: 'the egress lock is not loaded', isolation: true } };
  const cases: [string, WatcherFacts, WatcherFacts, string[]][] = [
    ['nothing', {}, {}, []],
    ['a rate limit starts', {}, rate, ['rate-limit-wait:2026-12-06T06:00:00.000Z']],
    ['it lasts', rate, rate, []],
    ['a budget hold starts', rate, budget, ['budget-hit:2026-12-06']],
    ['it lasts', budget, budget, []],
    ['a skip starts', {}, skipped, [`repo-skipped:${at}`]],
    ['it lasts', skipped, skipped, []],
    ['its reason changes to the isolation check', skipped, isolation, [`isolation-failed:${at}`]],
    ['it clears', isolation, {}, []],
  ];
  for (const [name, previous, current, keys] of cases)
    t.same(
      eventsOfWatcher('web', previous, current, at).map((event) => event.key),
      keys,
      name,
    );
});

t.test('the bodies: agent-runner JSON, or Slack-compatible text', async (t) => {
  const event = eventsOfRun(aRun(), undefined)[0]!;
  t.same(JSON.parse(notifyBody(event, 'json')), {
    source: 'agent-runner',
    version: 1,
    event: 'task-parked',
    repo: 'web',
    at: '2026-12-06T04:05:00.000Z',
    key: '20261206T040000000000Z-aaaaaa:TASK-2:parked',
    summary: 'web: TASK-2 parked: gate red: npm test failed',
    runId: '20261206T040000000000Z-aaaaaa',
    task: { id: 'TASK-2', title: 'Two' },
    reason: 'gate red: npm test failed',
  });
  t.same(JSON.parse(notifyBody(event, 'slack')), {
    text: 'agent-runner · web: TASK-2 parked: gate red: npm test failed',
  });
});

t.test('URLs: what may be a webhook, and how one is shown', async (t) => {
  t.equal(webhookUrlProblem('https://hooks.slack.com/services/T/B/X'), undefined);
  t.equal(webhookUrlProblem('http://127.0.0.1:8080/x'), undefined);
  t.equal(webhookUrlProblem('http://localhost/x'), undefined);
  t.equal(webhookUrlProblem('http://[::1]:9/x'), undefined);
  t.match(webhookUrlProblem('http://10.0.0.1/x'), /plain http to 10\.0\.0\.1/);
  t.equal(webhookUrlProblem('not a url'), 'is not a URL');
  t.equal(redactUrl('https://hooks.slack.com/services/T/B/SECRET'), 'https://hooks.slack.com/…');
  t.equal(redactUrl('https://example.com'), 'https://example.com/');
  t.equal(redactUrl('http://127.0.0.1:81/?token=SECRET'), 'http://127.0.0.1:81/…');
  t.equal(
    withoutUrl(
      'connect failed for https://h.example/p/SECRET?k=SECRET2 (/p/SECRET)',
      'https://h.example/p/SECRET?k=SECRET2',
    ),
    'connect failed for https://h.example/… (https://h.example/…)',
  );
});

t.test('retries: doubling to a cap; a 4xx other than 408 and 429 is not retried', async (t) => {
  t.same(
    [1, 2, 3, 4, 7, 8, 20].map((attempts) => retryDelayMs(attempts, SEND_POLICY)),
    [5_000, 10_000, 20_000, 40_000, 300_000, 300_000, 300_000],
  );
  t.match(judgeStatus(204), { ok: true });
  t.match(judgeStatus(500), { ok: false, permanent: false });
  t.match(judgeStatus(429), { ok: false, permanent: false });
  t.match(judgeStatus(408), { ok: false, permanent: false });
  t.match(judgeStatus(404), { ok: false, permanent: true, error: /check its url/ });
  t.match(judgeStatus(302), { ok: false, permanent: false });
});
