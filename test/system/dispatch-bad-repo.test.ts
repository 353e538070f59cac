// dispatch on a registered repo its user cannot work in says so, exit 2,
// before anything runs: a path that does not exist, and a checkout whose
// parent (where the task worktrees go) the user cannot write.
import t from 'tap';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { systemTestMayRun } from '../helpers/system.js';
import { controlFixture, runBin } from '../helpers/control-fixture.js';

t.test('a missing path and an unwritable parent are named with their fix', async (t) => {
  if (!systemTestMayRun(t, ['setpriv', 'useradd', 'git'])) return;
  const fixture = controlFixture(t, [{ id: 'TASK-1', title: 'First', status: 'To Do' }]);
  const parent = path.dirname(fixture.clone);
  execFileSync('chown', ['root:root', parent]);
  const unwritable = await runBin(fixture, 'dispatch', ['--no-isolation', fixture.name]);
  t.equal(unwritable.code, 2, unwritable.stderr);
  t.match(
    unwritable.stderr,
    `user ${fixture.user} cannot write ${parent}, where the task worktrees of ${fixture.clone} go`,
  );
  t.notMatch(unwritable.stderr, /internal error/);

  const registry = readFileSync(fixture.registry, 'utf8');
  writeFileSync(fixture.registry, registry.replace(fixture.clone, `${fixture.clone}-gone`));
  const missing = await runBin(fixture, 'dispatch', ['--no-isolation', fixture.name]);
  t.equal(missing.code, 2, missing.stderr);
  t.match(missing.stderr, `its path ${fixture.clone}-gone does not exist`);
  t.notMatch(missing.stderr, /spawn|ENOENT|internal error/);
});

t.test('without the egress lock and the proxy, dispatch refuses unless --no-isolation is given', async (t) => {
  if (!systemTestMayRun(t, ['setpriv', 'useradd', 'git', 'nft'])) return;
  // Only read: is the lock loaded on this host? (Tests never change the host's ruleset.) The fixture's proxy port never
  // answers.
  const egressLoaded = spawnSync('nft', ['list', 'table', 'inet', 'agent_runner'], { stdio: 'ignore' }).status === 0;
  const fixture = controlFixture(t, [{ id: 'TASK-1', title: 'First', status: 'To Do' }]);
  const refused = await runBin(fixture, 'dispatch', [fixture.name]);
  t.equal(refused.code, 2, refused.stderr);
  t.match(refused.stderr, "nothing listens on the repo's proxy port");
  if (!egressLoaded)
    t.match(
      refused.stderr,
      `repo "${fixture.name}": no egress lock is loaded (nft table inet agent_runner is missing), and nothing listens`,
    );
  t.match(refused.stderr, 'or pass --no-isolation to run without it on purpose');
  t.notOk(existsSync(path.join(fixture.probeOut, 'id-TASK-1')), 'no agent ran');
  const allowed = await runBin(fixture, 'dispatch', ['--no-isolation', fixture.name]);
  t.equal(allowed.code, 0, allowed.stderr);
  t.ok(existsSync(path.join(fixture.probeOut, 'id-TASK-1')), 'with --no-isolation the agent runs');
});

t.test(
  'without the egress lock and the proxy, the watcher starts no run and says why until --no-isolation',
  async (t) => {
    if (!systemTestMayRun(t, ['setpriv', 'useradd', 'git', 'nft'])) return;
    const fixture = controlFixture(t, [{ id: 'TASK-1', title: 'First', status: 'To Do' }]);
    const refused = await runBin(fixture, 'watch', [fixture.name, '--once']);
    t.match(refused.stderr, '"event":"repo-skipped"');
    t.match(refused.stderr, "nothing listens on the repo's proxy port");
    t.notOk(existsSync(path.join(fixture.probeOut, 'id-TASK-1')), 'no agent ran');
    const status = JSON.parse(readFileSync(path.join(fixture.state, 'repos', fixture.name, 'watch.json'), 'utf8')) as {
      lastError?: { message: string };
    };
    t.match(
      status.lastError?.message,
      'or pass --no-isolation to run without it on purpose',
      'fleet and the dashboard see the reason',
    );
    const allowed = await runBin(fixture, 'watch', ['--no-isolation', fixture.name, '--once']);
    t.equal(allowed.code, 0, allowed.stderr);
    t.ok(existsSync(path.join(fixture.probeOut, 'id-TASK-1')), 'with --no-isolation the agent runs');
  },
);
