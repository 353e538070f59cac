// dispatch on a registered repo its user cannot work in says so, exit 2,
// before anything runs: a path that does not exist, and a checkout whose
// parent (where the task worktrees go) the user cannot write.
import t from 'tap';
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { systemTestMayRun } from '../helpers/system.js';
import { controlFixture, runBin } from '../helpers/control-fixture.js';

t.test('a missing path and an unwritable parent are named with their fix', async (t) => {
  if (!systemTestMayRun(t, ['setpriv', 'useradd', 'git'])) return;
  const fixture = controlFixture(t, [{ id: 'TASK-1', title: 'First', status: 'To Do' }]);
  const parent = path.dirname(fixture.clone);
  execFileSync('chown', ['root:root', parent]);
  const unwritable = await runBin(fixture, 'dispatch', [fixture.name]);
  t.equal(unwritable.code, 2, unwritable.stderr);
  t.match(unwritable.stderr, `user ${fixture.user} cannot write ${parent}, where the task worktrees of ${fixture.clone} go`);
  t.notMatch(unwritable.stderr, /internal error/);

  const registry = readFileSync(fixture.registry, 'utf8');
  writeFileSync(fixture.registry, registry.replace(fixture.clone, `${fixture.clone}-gone`));
  const missing = await runBin(fixture, 'dispatch', [fixture.name]);
  t.equal(missing.code, 2, missing.stderr);
  t.match(missing.stderr, `its path ${fixture.clone}-gone does not exist`);
  t.notMatch(missing.stderr, /spawn|ENOENT|internal error/);
});
