// Rate limits and budgets through a real drain: the real CLI, real git and
// the bundled scripted agent posing as claude (a `claude` on PATH), which
// reports usage and costs and hits rate limits as claude 2.x prints them.
// Waits are test-configured through orchestrate --spend (1-2 s).
import t from 'tap';
import { mkdirSync, symlinkSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { attemptsFile, workspaceStateDir, transcriptFile } from '../../src/paths.js';
import { sealRun } from '../../src/control/ledger/ledger.js';
import { spendPolicyFor } from '../../src/control/ledger/totals.js';
import { SPEND_DEFAULTS, utcDay } from '../../src/spend/verdict.js';
import type { SpendPolicy } from '../../src/spend/policy.js';
import type { DrainOutcome, SessionReport, TaskSummary } from '../../src/drain/types.js';
import {
  drainFixture,
  landedOn,
  readJson,
  runOrchestrate,
  SCRIPTED_AGENT,
  taskOn,
  type DrainFixture,
  type FixtureTask,
} from '../helpers/drain-fixture.js';
import { git, tempDir } from '../helpers/temp.js';

type Summary = {
  outcome: DrainOutcome;
  tasks: TaskSummary[];
  sessions: SessionReport[];
  budgetStop?: string;
  runId: string;
  startedAt: string;
  endedAt: string;
};

/** A drain fixture whose assistant is claude, played by the scripted agent. */
function claudeFixture(t: Parameters<typeof drainFixture>[0], tasks: FixtureTask[], maxParallel = 1): DrainFixture {
  const fixture = drainFixture(t, tasks, { config: { assistant: 'claude', command: undefined, maxParallel } });
  const bin = tempDir(t, 'claude-bin-');
  mkdirSync(bin, { recursive: true });
  symlinkSync(SCRIPTED_AGENT, path.join(bin, 'claude'));
  return { ...fixture, env: { ...fixture.env, PATH: `${bin}:${fixture.env.PATH}` } };
}

const policy = (
  change: Partial<Omit<SpendPolicy, 'limits'>> & { limits?: Partial<SpendPolicy['limits']> } = {},
): SpendPolicy => ({
  day: utcDay(Date.now()),
  spentToday: { usd: 0, tokens: 0 },
  taskSpentUsd: {},
  ...change,
  limits: { ...SPEND_DEFAULTS, rateLimitWaitMinSec: 1, rateLimitWaitMaxSec: 2, ...change.limits },
});

const spendArgs = (spend: SpendPolicy) => ['--spend', JSON.stringify(spend)];
const outcomes = (summary: Summary) => Object.fromEntries(summary.tasks.map((task) => [task.id, task.outcome]));

t.test(
  'a rate limit mid-drain: the task waits, is not charged, and lands after the reset; four waits block a task',
  async (t) => {
    const fixture = claudeFixture(t, [
      {
        id: 'TASK-1',
        title: 'Limited twice',
        priority: 'high',
        description: 'agent: rate-limit 2\nagent: write one.txt "1"',
      },
      { id: 'TASK-2', title: 'After the limit', priority: 'medium', description: 'agent: write two.txt "2"' },
      {
        id: 'TASK-3',
        title: 'Limited forever',
        priority: 'low',
        description: 'agent: rate-limit 9\nagent: write three.txt "3"',
      },
      {
        id: 'TASK-4',
        title: 'Usable despite the event',
        priority: 'low',
        description: 'agent: rate-limit-event\nagent: write four.txt "4"',
      },
    ]);
    const started = Date.now();
    const run = await runOrchestrate(
      fixture,
      spendArgs(policy({ limits: { rateLimitWaitMinSec: 1, rateLimitWaitMaxSec: 1 } })),
    );
    const seconds = (Date.now() - started) / 1000;
    t.equal(run.code, 0, run.stderr.slice(-800));
    const summary = JSON.parse(run.stdout) as Summary;
    t.same(outcomes(summary), { 'TASK-1': 'landed', 'TASK-2': 'landed', 'TASK-3': 'blocked', 'TASK-4': 'landed' });
    t.equal(summary.tasks.find((task) => task.id === 'TASK-3')?.reason, 'rate limited; nothing charged');
    t.match(
      taskOn(fixture.clone, 'auto/work', 'TASK-3', 'Limited forever'),
      /status: Blocked/,
      'the blocked task is committed Blocked on auto/work',
    );
    t.same(landedOn(fixture.clone, 'auto/work').sort(), ['TASK-1', 'TASK-2', 'TASK-4']);

    const sessionsOf = (id: string) => summary.sessions.filter((session) => session.taskId === id);
    t.same(
      sessionsOf('TASK-1').map((session) => [session.outcome, session.rateLimited]),
      [
        ['rate-limited', true],
        ['rate-limited', true],
        ['ok', false],
      ],
      'two limited sessions, then the one that worked, all in the report',
    );
    t.equal(sessionsOf('TASK-3').length, 5, 'four waits, and the fifth limit blocks it');
    t.same(
      sessionsOf('TASK-4').map((session) => [session.outcome, session.rateLimited]),
      [['ok', true]],
      'a usable session with a rejected rate_limit_event is kept',
    );
    t.ok(
      summary.sessions.every(
        (session) => session.assistant === 'claude' && session.costUsd !== null && session.inputTokens !== null,
      ),
      'claude sessions report usage and cost',
    );

    const waits = run.events.filter((event) => event.event === 'rate-limit-wait');
    t.ok(waits.length >= 7, `the drain said each wait (${waits.length})`);
    t.ok(waits.every((event) => typeof event.until === 'string' && event.assistant === 'claude'));
    t.ok(seconds >= 6, `the waits were waited (${seconds.toFixed(1)} s for at least 2 + 4 one-second waits)`);
    const attempts = readJson(attemptsFile(workspaceStateDir(fixture.state, fixture.clone))) as
      Record<string, unknown> | undefined;
    t.notOk(attempts?.['TASK-1'] ?? attempts?.['TASK-3'], 'no attempt was charged for a rate limit');
    const transcript = readFileSync(transcriptFile(fixture.state, fixture.clone, summary.runId, 'TASK-1'), 'utf8');
    t.equal(
      transcript.split('\n').filter((line) => line.includes('"event":"session-again"')).length,
      2,
      'the transcript says each session was run again',
    );
    t.equal(git(fixture.clone, 'show', 'auto/work:one.txt'), '1');
  },
);

t.test(
  'budgets: over the daily budget no new task starts, and the next day it resumes; over task_usd a task is parked',
  async (t) => {
    const fixture = claudeFixture(t, [
      { id: 'TASK-1', title: 'Costs three', priority: 'high', description: 'agent: cost 3\nagent: write one.txt "1"' },
      {
        id: 'TASK-2',
        title: 'Costs three too',
        priority: 'medium',
        description: 'agent: cost 3\nagent: write two.txt "2"',
      },
      {
        id: 'TASK-3',
        title: 'Waits for tomorrow',
        priority: 'low',
        description: 'agent: cost 1\nagent: write three.txt "3"',
      },
    ]);
    // The drain keeps days by the real clock: start clear of midnight UTC, so "today" stays one day through the test.
    const untilMidnight = 86_400_000 - (Date.now() % 86_400_000);
    if (untilMidnight < 120_000) await new Promise((resolve) => setTimeout(resolve, untilMidnight + 1000));
    // Today: $5 a day; each task costs $3, so the second one crosses it and the third never starts.
    const limits = { ...SPEND_DEFAULTS, dailyUsd: 5 };
    const first = await runOrchestrate(
      fixture,
      spendArgs({ limits, day: utcDay(Date.now()), spentToday: { usd: 0, tokens: 0 }, taskSpentUsd: {} }),
    );
    t.equal(first.code, 0, first.stderr.slice(-800));
    const one = JSON.parse(first.stdout) as Summary;
    t.same(outcomes(one), { 'TASK-1': 'landed', 'TASK-2': 'landed' }, 'running tasks finish; nothing new starts');
    t.match(
      one.budgetStop,
      /^over its daily budget: \$6\.00 of \$5\.00 spent today \(UTC\); no new task starts until tomorrow$/,
    );
    t.ok(
      first.events.some((event) => event.event === 'budget-reached'),
      'the drain says so',
    );

    // Root seals the run into its ledger; the ledger, not the drain, carries the spend into the next run.
    const ledger = sealRun({
      repo: 'web',
      runId: one.runId,
      startedAt: one.startedAt,
      endedAt: one.endedAt,
      summary: one,
      sealedAt: one.endedAt,
    });
    const sameDay = await runOrchestrate(fixture, spendArgs(spendPolicyFor(limits, ledger, Date.now())));
    const two = JSON.parse(sameDay.stdout) as Summary;
    t.same(two.tasks, [], 'later the same day: still nothing starts');
    t.equal(two.outcome, 'nothing-to-do');
    t.match(two.budgetStop, /over its daily budget/);

    // The same spend a day earlier: yesterday's sessions do not count against today.
    const dayBack = (iso: string) => new Date(Date.parse(iso) - 86_400_000).toISOString();
    const yesterday = ledger.map((record) => ({
      ...record,
      startedAt: dayBack(record.startedAt),
      endedAt: dayBack(record.endedAt),
    }));
    const nextDay = await runOrchestrate(fixture, spendArgs(spendPolicyFor(limits, yesterday, Date.now())));
    const three = JSON.parse(nextDay.stdout) as Summary;
    t.same(outcomes(three), { 'TASK-3': 'landed' }, 'the next day the budget is fresh and the task runs');
    t.equal(three.budgetStop, undefined);
  },
);

t.test('task_usd: a task over its budget is stopped and parked "over its budget", not retried', async (t) => {
  const fixture = claudeFixture(
    t,
    [
      {
        id: 'TASK-1',
        title: 'Expensive and unfinished',
        description: 'agent: cost 2.5\nagent: leave-status\nagent: write one.txt "1"',
      },
      { id: 'TASK-2', title: 'Spent before', description: 'agent: write two.txt "2"' },
      { id: 'TASK-3', title: 'Expensive but done', description: 'agent: cost 2.5\nagent: write three.txt "3"' },
    ],
    3,
  );
  const run = await runOrchestrate(
    fixture,
    spendArgs(policy({ limits: { taskUsd: 2 }, taskSpentUsd: { 'TASK-2': 2.5 } })),
  );
  t.equal(run.code, 0, run.stderr.slice(-800));
  const summary = JSON.parse(run.stdout) as Summary;
  t.same(
    outcomes(summary),
    { 'TASK-1': 'parked', 'TASK-2': 'parked', 'TASK-3': 'landed' },
    'a Done task is a usable result: it lands',
  );
  t.equal(summary.tasks.find((task) => task.id === 'TASK-1')?.reason, 'over its budget: $2.50 of $2.00 (task_usd)');
  t.equal(
    summary.tasks.find((task) => task.id === 'TASK-2')?.reason,
    'over its budget: $2.50 of $2.00 (task_usd)',
    "the ledger's earlier spend counts: it never starts a session",
  );
  t.equal(
    summary.sessions.filter((session) => session.taskId === 'TASK-1').length,
    1,
    'stopped after its session, not run again',
  );
  t.equal(summary.sessions.filter((session) => session.taskId === 'TASK-2').length, 0);
  const attempts = readJson(attemptsFile(workspaceStateDir(fixture.state, fixture.clone))) as
    Record<string, unknown> | undefined;
  t.notOk(attempts?.['TASK-1'], 'parking for budget is not a failed attempt');
});

t.test(
  'task_usd stops a running session: claude is given what the task has left, stops mid-session, and the task is parked with its cost in the ledger',
  async (t) => {
    const fixture = claudeFixture(
      t,
      [
        // $0.50 already spent (earlier runs); $1.00 left of $1.50: the second spend passes it, mid-session.
        {
          id: 'TASK-1',
          title: 'Runaway',
          priority: 'high',
          description:
            'agent: spend 0.6\nagent: write one.txt "1"\nagent: spend 0.6\nagent: write more.txt "2"\nagent: spend 0.6\nagent: write most.txt "3"',
        },
        { id: 'TASK-2', title: 'Cheap', priority: 'medium', description: 'agent: write two.txt "2"' },
        {
          id: 'TASK-3',
          title: 'Under its budget',
          priority: 'medium',
          description: 'agent: spend 1\nagent: write three.txt "3"',
        },
        // A CLI that overshoots its flag and lingers after its result: the runner's own check ends it.
        {
          id: 'TASK-4',
          title: 'Ignores its flag',
          priority: 'low',
          description:
            'agent: ignore-budget\nagent: spend 3\nagent: leave-status\nagent: write four.txt "4"\nagent: linger 60',
        },
      ],
      2,
    );
    const run = await runOrchestrate(
      fixture,
      spendArgs(policy({ limits: { taskUsd: 1.5 }, taskSpentUsd: { 'TASK-1': 0.5 } })),
    );
    t.equal(run.code, 0, run.stderr.slice(-800));
    const summary = JSON.parse(run.stdout) as Summary;
    t.same(outcomes(summary), { 'TASK-1': 'parked', 'TASK-2': 'landed', 'TASK-3': 'landed', 'TASK-4': 'parked' });
    const reason = (id: string) => summary.tasks.find((task) => task.id === id)?.reason;
    t.equal(
      reason('TASK-1'),
      'over its budget: $1.70 of $1.50 (task_usd)',
      "the earlier $0.50 and this session's $1.20",
    );
    t.match(reason('TASK-4'), /^over its budget: \$3\.00 of \$1\.50 \(task_usd\)$/);
    t.same(landedOn(fixture.clone, 'auto/work').sort(), ['TASK-2', 'TASK-3'], 'the other tasks land');

    const sessionsOf = (id: string) => summary.sessions.filter((session) => session.taskId === id);
    t.same(
      sessionsOf('TASK-1').map((session) => [session.outcome, session.costUsd]),
      [['over-budget', 1.2]],
      'one session, stopped at its budget, its cost reported; not run again',
    );
    const transcriptOf = (id: string) =>
      readFileSync(transcriptFile(fixture.state, fixture.clone, summary.runId, id), 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as Record<string, unknown>);
    const one = transcriptOf('TASK-1');
    const start = one.find((event) => event.event === 'session-start') as { args: string[]; budgetUsd: number };
    t.same(
      [
        start.args.slice(start.args.indexOf('--max-budget-usd'), start.args.indexOf('--max-budget-usd') + 2),
        start.budgetUsd,
      ],
      [['--max-budget-usd', '1'], 1],
      'claude was given task_usd minus what the task had spent',
    );
    t.ok(
      one.some((event) => event.event === 'output' && String(event.line).includes('"subtype":"error_max_budget_usd"')),
      "claude's own error_max_budget_usd result",
    );
    t.notOk(
      one.some((event) => event.event === 'output' && String(event.line).includes('"subtype":"success"')),
      'it never finished: stopped mid-session',
    );
    // The agent committed nothing: no branch came back (a parked task keeps one only for what its agent committed).
    t.equal(git(fixture.clone, 'branch', '--list', 'auto/TASK-1'), '', 'nothing of the runaway session was committed');

    const four = transcriptOf('TASK-4');
    const end = four.find((event) => event.event === 'session-end') as { endedBy: string; durationMs: number };
    t.equal(end.endedBy, 'over-budget', 'the runner ended the session that overshot, from the cost in its stream');
    t.ok(
      end.durationMs < 15_000,
      `ended at once, not after its 60 s linger or the 30 s idle watchdog (${end.durationMs} ms)`,
    );
    t.same(
      sessionsOf('TASK-4').map((session) => session.outcome),
      ['ok'],
      "the session's own result was a success: the budget, not the agent, parked it",
    );

    const attempts = readJson(attemptsFile(workspaceStateDir(fixture.state, fixture.clone))) as
      Record<string, unknown> | undefined;
    t.notOk(attempts?.['TASK-1'] ?? attempts?.['TASK-4'], 'over its budget is not a failed attempt');

    // Root seals the run into its ledger: the stopped session's cost is on the books and counts in the next run.
    const ledger = sealRun({
      repo: 'web',
      runId: summary.runId,
      startedAt: summary.startedAt,
      endedAt: summary.endedAt,
      summary,
      sealedAt: summary.endedAt,
    });
    t.same(
      ledger.filter((record) => record.task === 'TASK-1').map((record) => [record.costUsd, record.outcome]),
      [[1.2, 'over-budget']],
    );
    const next = spendPolicyFor({ ...SPEND_DEFAULTS, taskUsd: 1.5 }, ledger, Date.now());
    t.equal(next.taskSpentUsd['TASK-1'], 1.2);
    t.ok((next.taskSpentUsd['TASK-4'] ?? 0) >= 3, 'the overshoot is charged to the task too');
  },
);
