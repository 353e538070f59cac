// promote --expect-staging (what the dashboard's confirmation passes): a
// promote lands exactly the auto/work commit the operator confirmed, and
// refuses when auto/work has moved since.
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { drainFixture, PROJECT_ROOT } from '../helpers/drain-fixture.js';
import { git } from '../helpers/temp.js';

t.test('promote refuses a moved auto/work and lands the confirmed one', async (t) => {
  const fixture = drainFixture(t, [{ id: 'TASK-1', title: 'One', status: 'To Do' }]);
  git(fixture.clone, 'checkout', '-q', '-b', 'auto/work');
  writeFileSync(path.join(fixture.clone, 'a.txt'), 'a\n');
  git(fixture.clone, 'add', '-A');
  git(fixture.clone, 'commit', '-q', '-m', 'a');
  const shown = git(fixture.clone, 'rev-parse', 'HEAD').trim();
  writeFileSync(path.join(fixture.clone, 'b.txt'), 'b\n');
  git(fixture.clone, 'add', '-A');
  git(fixture.clone, 'commit', '-q', '-m', 'b: landed after the confirmation was shown');
  const now = git(fixture.clone, 'rev-parse', 'HEAD').trim();
  git(fixture.clone, 'checkout', '-q', 'main');
  const promote = (...args: string[]) =>
    spawnSync(
      process.execPath,
      [path.join(PROJECT_ROOT, 'bin', 'agent-runner'), 'promote', '--workspace', fixture.clone, ...args],
      { env: fixture.env, encoding: 'utf8' },
    );

  const moved = promote('--expect-staging', shown, '--json');
  t.equal(moved.status, 1, 'refused');
  t.match(
    moved.stderr,
    new RegExp(`auto/work is at ${now.slice(0, 12)}, not at the ${shown.slice(0, 12)} you confirmed`),
  );
  t.equal(git(fixture.clone, 'rev-parse', 'main').trim() === now, false, 'main did not move');
  const bad = promote('--expect-staging', 'HEAD');
  t.equal(bad.status, 2, 'not a commit id: usage error');
  const ok = promote('--expect-staging', now, '--json');
  t.equal(ok.status, 0, ok.stderr);
  t.equal(git(fixture.clone, 'rev-parse', 'main').trim(), now, 'main is at the confirmed commit');
});
