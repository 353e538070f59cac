// The watcher and a daily budget, as root with a real user: over its budget
// (by root's ledger) a repo gets no run, and fleet says why; once the budget
// allows it (here: the operator raises it), the next tick drains.
import t from 'tap';
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { systemTestMayRun } from '../helpers/system.js';
import { controlFixture, landed, runBin, startBin } from '../helpers/control-fixture.js';
import { waitFor } from '../helpers/drain-fixture.js';

t.test(
  'over its daily budget the watcher starts nothing and fleet says so; a raised budget lets the next tick drain',
  async (t) => {
    if (!systemTestMayRun(t, ['setpriv', 'useradd', 'git'])) return;
    const fixture = controlFixture(t, [{ id: 'TASK-1', title: 'One', status: 'To Do' }], {
      schedule: '*/2 * * * * *',
      registryExtra: 'daily_usd = 1\n',
    });
    const now = new Date();
    const ledger = path.join(fixture.state, 'repos', fixture.name, 'ledger');
    mkdirSync(ledger, { recursive: true, mode: 0o700 });
    const spent = {
      v: 1,
      repo: fixture.name,
      run: 'R0',
      task: 'TASK-9',
      assistant: 'claude',
      model: 'm',
      effort: null,
      startedAt: now.toISOString(),
      endedAt: now.toISOString(),
      wallMs: 0,
      inputTokens: 1,
      outputTokens: 1,
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
      costUsd: 2.5,
      outcome: 'ok',
      rateLimited: false,
      sealedAt: now.toISOString(),
    };
    writeFileSync(path.join(ledger, `${now.toISOString().slice(0, 10)}.jsonl`), `${JSON.stringify(spent)}\n`);

    const watch = startBin(fixture, 'watch', ['--no-isolation', fixture.name]);
    t.teardown(() => {
      if (watch.child.exitCode === null) watch.child.kill('SIGKILL');
    });
    const status = () =>
      existsSync(path.join(fixture.state, 'repos', fixture.name, 'watch.json'))
        ? (JSON.parse(readFileSync(path.join(fixture.state, 'repos', fixture.name, 'watch.json'), 'utf8')) as {
            hold?: { reason: string; until: string };
          })
        : {};
    await waitFor(
      () => /over its daily budget/.test(status().hold?.reason ?? ''),
      30_000,
      'the watcher to hold the repo',
    );
    t.match(status().hold, {
      reason: 'over its daily budget: $2.50 of $1.00 spent today (UTC); no new task starts until tomorrow',
      until: /T00:00:00\.000Z$/,
    });
    await new Promise((resolve) => setTimeout(resolve, 4500));
    const runs = path.join(fixture.state, 'repos', fixture.name, 'runs');
    t.same(existsSync(runs) ? readdirSync(runs) : [], [], 'two more ticks, and still no run');
    const fleet = await runBin(fixture, 'agent-runner', ['fleet', '--json']);
    const repo = (JSON.parse(fleet.stdout) as { repos: { spend: { today: { usd: number }; hold: string } }[] })
      .repos[0]!;
    t.equal(repo.spend.today.usd, 2.5);
    t.match(repo.spend.hold, /^over its daily budget/);
    const human = await runBin(fixture, 'agent-runner', ['fleet']);
    t.match(human.stdout, new RegExp(`${fixture.name}: over its daily budget: \\$2\\.50 of \\$1\\.00`));

    writeFileSync(fixture.registry, readFileSync(fixture.registry, 'utf8').replace('daily_usd = 1', 'daily_usd = 10'));
    const landedNow = () => {
      try {
        return landed(fixture.origin, 'auto/work');
      } catch {
        return []; // no auto/work on origin yet
      }
    };
    t.same(landedNow(), [], 'nothing was published while held');
    await waitFor(() => landedNow().includes('TASK-1'), 60_000, 'the next tick to drain once the budget allows');
    watch.child.kill('SIGTERM');
    const stopped = await watch.done;
    const names = stopped.stderr
      .split('\n')
      .filter(Boolean)
      .map((line) => (JSON.parse(line) as { event: string }).event);
    t.ok(
      names.includes('held') && names.includes('hold-lifted'),
      `the log says held, then lifted (${[...new Set(names)].join(', ')})`,
    );
    t.equal(names.filter((name) => name === 'held').length, 1, 'said once, not every tick');
    const record = JSON.parse(readFileSync(path.join(runs, readdirSync(runs)[0]!), 'utf8')) as {
      usage?: { sessions: number };
    };
    t.same(
      record.usage,
      { sessions: 1, costUsd: 0, unknownCost: 1, tokens: 0 },
      'the run is sealed into the ledger with its total',
    );
  },
);
