// The test summary says why tests were skipped, not only how many.
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { PROJECT_ROOT } from '../helpers/drain-fixture.js';

t.test('a skip reason given through skipWithReason is listed above the counts', async (t) => {
  // Inside the project, so the sample resolves tap from its node_modules.
  const dir = mkdtempSync(path.join(PROJECT_ROOT, 'dist', '.summary-sample-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const helper = pathToFileURL(path.join(PROJECT_ROOT, 'dist/test/helpers/system.js')).href;
  const file = path.join(dir, 'sample.test.mjs');
  writeFileSync(
    file,
    `import t from 'tap';\nimport { skipWithReason } from '${helper}';\nt.test('outer', async (t) => { skipWithReason(t, 'needs a unicorn', 'no unicorn on this host'); t.pass('ran'); });\n`,
  );
  // A run of its own, not a child of this tap run (tap's variables would make it print raw TAP).
  const env = Object.fromEntries(
    Object.entries(process.env).filter(
      ([key]) => !/^(TAP|_TAP|NODE_OPTIONS$|AGENT_RUNNER_TEST_SKIP_LOG$|CI$)/i.test(key),
    ),
  );
  const result = spawnSync(process.execPath, [path.join(PROJECT_ROOT, 'scripts/run-tests.mjs'), file], {
    cwd: PROJECT_ROOT,
    env,
    encoding: 'utf8',
  });
  t.equal(result.status, 0, result.stdout + result.stderr);
  t.match(result.stdout, /skipped: outer > needs a unicorn: no unicorn on this host\n\n1 passed, 0 failed, 1 skipped/);
});
