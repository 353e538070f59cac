// The watch unit, generated with this checkout's real path (ExecStart must
// exist), passes `systemd-analyze verify` with nothing on stderr and keeps its
// hardening score.
import t from 'tap';
import { readFileSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { systemTestMayRun } from '../helpers/system.js';
import { PROJECT_ROOT } from '../helpers/drain-fixture.js';
import { tempDir } from '../helpers/temp.js';
import { unitsFor } from '../helpers/nspawn.js';

t.test('the watch unit verifies cleanly and scores as documented', async (t) => {
  if (!systemTestMayRun(t, ['systemd-analyze'])) return;
  const dir = tempDir(t);
  unitsFor(dir, PROJECT_ROOT, PROJECT_ROOT);
  const template = readFileSync(path.join(dir, 'agent-runner-watch@.service'), 'utf8');
  t.match(template, `ExecStart=${PROJECT_ROOT}/bin/watch %i --stop-grace-sec 60`);
  writeFileSync(path.join(dir, 'agent-runner-watch@web.service'), template);
  const verify = spawnSync('systemd-analyze', ['verify', path.join(dir, 'agent-runner-watch@web.service')], {
    encoding: 'utf8',
    cwd: dir,
  });
  t.equal(verify.status, 0);
  t.equal(verify.stderr, '', 'nothing on stderr (unknown keys only warn)');
  const security = spawnSync(
    'systemd-analyze',
    ['security', '--offline=yes', path.join(dir, 'agent-runner-watch@web.service')],
    { encoding: 'utf8', cwd: dir },
  );
  const score = /Overall exposure level for agent-runner-watch@web\.service: (\d+\.\d)/.exec(security.stdout);
  t.ok(score, security.stdout.slice(-300));
  t.ok(Number(score?.[1]) <= 3.0, `exposure ${score?.[1]} <= 3.0 (docs/operations.md explains the rest)`);
  const threshold = spawnSync(
    'systemd-analyze',
    ['security', '--offline=yes', '--threshold=30', path.join(dir, 'agent-runner-watch@web.service')],
    { encoding: 'utf8', cwd: dir },
  );
  t.equal(threshold.status, 0, 'passes --threshold=30');
});
