// The review stage end to end: the real orchestrate CLI, the scripted agent
// posing as claude (implementer) and as codex (the cross-model reviewer),
// real git. Each verdict the issue names is played by the scripted reviewer.
import t from 'tap';
import type { Test } from 'tap';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { git, tempDir } from '../helpers/temp.js';
import {
  SCRIPTED_AGENT,
  drainFixture,
  landedOn,
  runOrchestrate,
  taskOn,
  type DrainFixture,
  type FixtureTask,
} from '../helpers/drain-fixture.js';

/** A PATH whose claude and codex are the scripted agent (or, for codex, a script of the test's). */
function withClis(t: Test, fixture: DrainFixture, codex?: string): DrainFixture {
  const bin = path.join(tempDir(t, 'review-bin-'), 'bin');
  mkdirSync(bin);
  symlinkSync(SCRIPTED_AGENT, path.join(bin, 'claude'));
  if (codex) writeFileSync(path.join(bin, 'codex'), codex, { mode: 0o755 });
  else symlinkSync(SCRIPTED_AGENT, path.join(bin, 'codex'));
  return { ...fixture, env: { ...fixture.env, PATH: `${bin}:${fixture.env.PATH}` } };
}

/** codex 0.171 as it ends a session on a spent account: a failed turn saying so. */
const RATE_LIMITED_CODEX = `#!/bin/sh
cat > /dev/null
echo '{"type":"thread.started","thread_id":"t-1"}'
echo '{"type":"turn.started"}'
echo '{"type":"turn.failed","error":{"message":"You have hit your usage limit. Try again in 2 hours."}}'
exit 1
`;

function reviewed(t: Test, tasks: readonly FixtureTask[], review: Record<string, unknown> = {}): DrainFixture {
  return withClis(
    t,
    drainFixture(t, tasks, {
      config: { assistant: 'claude', agentIdleTimeoutSec: 5, review: { enabled: true, ...review } },
    }),
  );
}

const task = (id: string, title: string, lines: readonly string[], criteria = ['the change is made']): FixtureTask => ({
  id,
  title,
  description: lines.join('\n'),
  acceptanceCriteria: criteria,
});

interface Summary {
  readonly outcome: string;
  readonly tasks: readonly {
    id: string;
    outcome: string;
    reason?: string;
    review?: { verdict: string; rounds: number };
  }[];
  readonly sessions: readonly { taskId: string; assistant: string; role: string }[];
}

async function drain(fixture: DrainFixture, args: readonly string[] = []): Promise<Summary> {
  const run = await runOrchestrate(fixture, ['--no-push', ...args]);
  return JSON.parse(run.stdout) as Summary;
}

const outcomeOf = (summary: Summary, id: string) => summary.tasks.find((entry) => entry.id === id);

t.test('claude works, codex reviews: the trailer names the commit the landing merged', async (t) => {
  const fixture = reviewed(t, [task('TASK-1', 'Bump', ['agent: write VERSION "2.0.0"'], ['VERSION says 2.0.0'])]);
  const summary = await drain(fixture);
  t.equal(outcomeOf(summary, 'TASK-1')?.outcome, 'landed');
  t.same(landedOn(fixture.clone, 'auto/work'), ['TASK-1']);
  const body = git(fixture.clone, 'log', '-1', '--merges', '--format=%B', 'auto/work');
  const trailer = body.match(/^Agent-Runner-Review: approved \(codex\/default, round 1\/3, ([0-9a-f]{12})\)$/m);
  t.ok(trailer, `the landing carries the review trailer:\n${body}`);
  const taskParent = git(fixture.clone, 'rev-parse', 'auto/work^2').trim();
  t.equal(trailer?.[1], taskParent.slice(0, 12), "the approved commit is the landing merge's task parent");
  t.same(
    summary.sessions.map((session) => [session.taskId, session.assistant, session.role]),
    [
      ['TASK-1', 'claude', 'implement'],
      ['TASK-1', 'codex', 'review'],
    ],
  );
  t.equal(outcomeOf(summary, 'TASK-1')?.review?.verdict, 'approved');
});

t.test('one fix round converges: changes requested, fixed on the same branch, approved in round 2', async (t) => {
  const fixture = reviewed(t, [
    task('TASK-1', 'Bump', [
      'agent: write VERSION "2.0.0"',
      'review: changes "VERSION needs a changelog line" 1',
      'fix: write CHANGELOG "2.0.0: bumped"',
    ]),
  ]);
  const summary = await drain(fixture);
  t.equal(outcomeOf(summary, 'TASK-1')?.outcome, 'landed', JSON.stringify(summary.tasks));
  t.same(
    summary.sessions.map((session) => session.role),
    ['implement', 'review', 'fix', 'review'],
  );
  t.match(git(fixture.clone, 'log', '-1', '--merges', '--format=%B', 'auto/work'), /round 2\/3/);
  t.equal(git(fixture.clone, 'show', 'auto/work:CHANGELOG').trim(), '2.0.0: bumped', 'the fix landed with the task');
});

t.test('a loop that never converges stops after exactly maxRounds fixes; nothing of it lands', async (t) => {
  const fixture = reviewed(
    t,
    [
      task('TASK-1', 'Bump', [
        'agent: write VERSION "2.0.0"',
        'review: changes-always "still not right"',
        'fix: append NOTES "tried again"',
      ]),
    ],
    { maxRounds: 2 },
  );
  const summary = await drain(fixture);
  const ended = outcomeOf(summary, 'TASK-1');
  t.equal(ended?.outcome, 'parked');
  t.match(ended?.reason, /review: changes requested after 2 fix round/);
  t.equal(summary.sessions.filter((session) => session.role === 'fix').length, 2, 'exactly maxRounds fix sessions');
  t.equal(summary.sessions.filter((session) => session.role === 'review').length, 3);
  t.same(landedOn(fixture.clone, 'auto/work'), []);
  t.throws(() => git(fixture.clone, 'show', 'auto/work:VERSION'), 'none of its work is on auto/work');
  t.ok(git(fixture.clone, 'rev-parse', '--verify', 'auto/TASK-1').trim(), 'the branch is kept for a human');
});

t.test('a reviewer that changes its checkout parks the task, whatever its verdict', async (t) => {
  const cases = [
    ['TASK-1', 'review: edit src.txt "reviewer was here"'],
    ['TASK-2', 'review: commit'],
    ['TASK-3', 'review: move-branch'],
    ['TASK-4', 'review: touch-agent'],
  ] as const;
  const fixture = reviewed(
    t,
    cases.map(([id, line]) => task(id, `Work ${id}`, [`agent: write ${id}.txt "done"`, line])),
  );
  const summary = await drain(fixture);
  for (const [id, line] of cases) {
    const ended = outcomeOf(summary, id);
    t.equal(ended?.outcome, 'parked', `${line}: ${ended?.reason}`);
    t.match(ended?.reason, /the reviewer changed its checkout/, line);
  }
  t.same(landedOn(fixture.clone, 'auto/work'), []);
});

t.test('verdicts that are not usable park after one relaunch, each with its reason', async (t) => {
  const cases = [
    ['TASK-1', 'review: garbage', /unreadable/],
    ['TASK-2', 'review: empty', /unreadable|no verdict/],
    ['TASK-3', 'review: none', /unreadable|no verdict/],
    ['TASK-4', 'review: exit 1', /unreadable|no verdict/],
    ['TASK-5', 'review: hang', /idle|no verdict|unreadable/],
    ['TASK-6', 'review: contradictory', /contradictory/],
    ['TASK-7', 'review: stale', /contradictory/],
    ['TASK-8', 'review: unverified', /unverified/],
  ] as const;
  const fixture = reviewed(
    t,
    cases.map(([id, line]) => task(id, `Work ${id}`, [`agent: write ${id}.txt "done"`, line])),
  );
  const summary = await drain(fixture, ['--max-parallel', '8']);
  for (const [id, line, reason] of cases) {
    const ended = outcomeOf(summary, id);
    t.equal(ended?.outcome, 'parked', `${line}: ${ended?.reason}`);
    t.match(ended?.reason, reason, line);
    t.match(ended?.reason, /twice/, `${line}: relaunched once before it parked`);
  }
  t.same(landedOn(fixture.clone, 'auto/work'), []);
});

t.test(
  'a reviewer that cannot work stops the drain; the next drain reviews the Done branch before it lands',
  async (t) => {
    const fixture = reviewed(t, [task('TASK-1', 'Bump', ['agent: write VERSION "2.0.0"'])]);
    const first = await drain(withClis(t, fixture, RATE_LIMITED_CODEX));
    t.equal(first.outcome, 'failed');
    t.not(outcomeOf(first, 'TASK-1')?.outcome, 'landed');
    t.same(landedOn(fixture.clone, 'auto/work'), [], 'nothing lands unreviewed');
    t.ok(git(fixture.clone, 'rev-parse', '--verify', 'auto/TASK-1').trim(), 'the Done branch is kept');
    const second = await drain(fixture);
    t.equal(outcomeOf(second, 'TASK-1')?.outcome, 'landed', JSON.stringify(second.tasks));
    t.same(
      second.sessions.map((session) => session.role),
      ['review'],
      'the recovered branch is reviewed, not worked again',
    );
    t.match(git(fixture.clone, 'log', '-1', '--merges', '--format=%B', 'auto/work'), /Agent-Runner-Review: approved/);
  },
);

t.test('a task that turns review off in its own config parks before any review', async (t) => {
  const fixture = reviewed(t, [
    task('TASK-1', 'Quiet', ['agent: write .agent/config.json "{\\"assistant\\": \\"claude\\"}"']),
  ]);
  const summary = await drain(fixture);
  const ended = outcomeOf(summary, 'TASK-1');
  t.equal(ended?.outcome, 'parked');
  t.match(ended?.reason, /\.agent\//);
  t.same(
    summary.sessions.map((session) => session.role),
    ['implement'],
    'no reviewer was paid to look at it',
  );
  t.match(taskOn(fixture.clone, 'auto/work', 'TASK-1', 'Quiet'), /parked/);
});
