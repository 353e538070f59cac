// agent-runner --version (and -V) print the install's package.json version.
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { PROJECT_ROOT } from '../helpers/drain-fixture.js';

t.test('--version and -V print the version', async (t) => {
  const { version } = JSON.parse(readFileSync(path.join(PROJECT_ROOT, 'package.json'), 'utf8')) as { version: string };
  t.match(version, /^\d+\.\d+\.\d+/);
  for (const flag of ['--version', '-V']) {
    const run = spawnSync(process.execPath, [path.join(PROJECT_ROOT, 'bin', 'agent-runner'), flag], {
      encoding: 'utf8',
      env: { PATH: '/usr/bin:/bin' },
    });
    t.equal(run.status, 0, flag);
    t.equal(run.stdout, `${version}\n`, flag);
    t.equal(run.stderr, '', flag);
  }
});
