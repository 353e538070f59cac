// A drain run by hand in a repo's checkout (orchestrate as the repo user: no
// root run record) is the fleet row's last run, as `runs` lists it, priced
// by root's ledger. Root reads its record in the repo user's home: found
// through the account database when no watcher runs, and through the home
// the watcher wrote in its status (no lookup) while that names the same user.
import t from 'tap';
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { cli } from '../helpers/in-process-cli.js';
import { systemTestMayRun } from '../helpers/system.js';
import { uniqueName } from '../helpers/netns.js';
import { originAndClone, tempDir } from '../helpers/temp.js';
import { realFs } from '../../src/io/real-ports.js';
import { recordDrain } from '../../src/drain/history.js';
import type { DrainSummary, SessionReport } from '../../src/drain/types.js';
import { repoUserStateDir, workspaceStateDir } from '../../src/paths.js';
import { appendLedger, sealRun } from '../../src/control/ledger/ledger.js';
import { writeWatchStatus } from '../../src/control/watch/index.js';
import { accountComment } from '../../src/control/repo-user/account.js';
import { defaultUserFor } from '../../src/control/registry/parse.js';

const session = (costUsd: number): SessionReport => ({
  taskId: 'TASK-1',
  assistant: 'claude',
  role: 'implement',
  model: 'claude-sonnet-4-5',
  effort: null,
  startedAt: '2026-12-06T09:05:00.000Z',
  endedAt: '2026-12-06T09:10:00.000Z',
  wallMs: 300_000,
  inputTokens: 10,
  outputTokens: 20,
  cacheReadTokens: 0,
  cacheWriteTokens: 0,
  costUsd,
  outcome: 'ok',
  rateLimited: false,
});

function handDrain(runId: string, startedAt: string, costUsd: number): DrainSummary {
  return {
    runId,
    outcome: 'drained',
    tasks: [{ id: 'TASK-1', title: 'One', outcome: 'landed', durationMs: 1000 }],
    sessions: [session(costUsd)],
    staging: { base: 'a'.repeat(40), head: 'b'.repeat(40) },
    pushed: false,
    startedAt,
    endedAt: new Date(Date.parse(startedAt) + 60_000).toISOString(),
  };
}

type LastRun = { id: string; trigger: string; cost: string | null; landed: number } | null;

if (systemTestMayRun(t, ['useradd', 'userdel', 'git'])) {
  t.test("fleet's last run is the drain run by hand, as runs lists it", async (t) => {
    const name = uniqueName('h');
    const user = defaultUserFor(name);
    const home = `/home/${user}`;
    t.teardown(() => void spawnSync('userdel', ['--force', '--remove', user]));
    const made = spawnSync('useradd', ['--create-home', '--comment', accountComment(name), user], { encoding: 'utf8' });
    t.equal(made.status, 0, `useradd (${made.stderr.trim()})`);
    const { clone } = originAndClone(t, { 'README.md': 'hand\n' });
    const root = tempDir(t, 'agent-runner-hand-drain-');
    const env = {
      AGENT_RUNNER_CONFIG: path.join(root, 'registry.toml'),
      AGENT_RUNNER_STATE: path.join(root, 'state'),
      PATH: '/usr/bin:/bin',
      HOME: '/root',
    };
    await realFs.writeAtomic(env.AGENT_RUNNER_CONFIG, `[repos.${name}]\npath = "${clone}"\nproxy_port = 701\n`, 0o600);

    // The repo user's drain, in its home, as orchestrate writes it; root's ledger prices it.
    const startedAt = new Date(Date.now() - 10 * 60_000).toISOString();
    const drain = handDrain('20261206T090000Z-hand', startedAt, 0.42);
    await recordDrain(realFs, workspaceStateDir(repoUserStateDir(home), clone), drain);
    t.equal(spawnSync('chown', ['-R', `${user}:${user}`, home]).status, 0, 'the records are the user’s');
    await appendLedger(
      realFs,
      env.AGENT_RUNNER_STATE,
      name,
      sealRun({
        repo: name,
        runId: drain.runId,
        startedAt,
        endedAt: drain.endedAt,
        summary: drain,
        sealedAt: drain.endedAt,
      }),
    );

    const lastRun = async (): Promise<LastRun> => {
      const fleet = await cli(env, ['fleet', '--json']);
      t.equal(fleet.code, 0, `fleet exit 0 (${fleet.err.trim()})`);
      const repo = (JSON.parse(fleet.out) as { repos: { lastRun: LastRun; errors: string[] }[] }).repos[0];
      t.same(repo?.errors, [], 'no read errors');
      return repo?.lastRun ?? null;
    };

    // No watcher: the home comes from the account database.
    const runs = await cli(env, ['runs', '--repo', name, '--json']);
    t.equal(runs.code, 0, `runs exit 0 (${runs.err.trim()})`);
    const newest = (JSON.parse(runs.out) as { runs: { id: string; trigger: string; cost: string | null }[] }).runs[0];
    t.match(newest, { id: drain.runId, trigger: 'orchestrate', cost: '$0.42' }, 'runs lists the drain, priced');
    t.match(await lastRun(), { id: drain.runId, trigger: 'orchestrate', cost: '$0.42', landed: 1 }, 'fleet agrees');

    // A watcher's status names the user and a home: fleet reads that home, with no lookup.
    const elsewhere = tempDir(t, 'agent-runner-watched-home-');
    const newer = handDrain('20261206T091000Z-watched', new Date(Date.now() - 5 * 60_000).toISOString(), 0.1);
    await recordDrain(realFs, workspaceStateDir(repoUserStateDir(elsewhere), clone), newer);
    const status = { repo: name, state: 'idle' as const, pid: 1, heartbeat: new Date().toISOString() };
    await writeWatchStatus(realFs, env.AGENT_RUNNER_STATE, { ...status, runner: { user, home: elsewhere } });
    t.match(await lastRun(), { id: newer.runId }, "the watcher's home is read");

    // A status that names another user (the registry changed since) is not trusted for this one.
    await writeWatchStatus(realFs, env.AGENT_RUNNER_STATE, { ...status, runner: { user: 'someone', home: elsewhere } });
    t.match(await lastRun(), { id: drain.runId }, "the registry's user is looked up again");
  });
}
