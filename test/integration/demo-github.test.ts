// demo --github: the PR flow against the local GitHub (127.0.0.1): opened,
// merge waits while CI runs (75), merges with CI green, origin's main moves.
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { AGENT_RUNNER } from '../helpers/drain-fixture.js';

t.test('agent-runner demo --github opens, waits for CI, then merges the pull request', async (t) => {
  const result = spawnSync(process.execPath, [AGENT_RUNNER, 'demo', '--github', '--json'], {
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: '/nonexistent' },
    encoding: 'utf8',
  });
  t.equal(result.status, 0, result.stderr.slice(-1500));
  const demo = JSON.parse(result.stdout) as {
    promotion?: unknown;
    github: {
      opened: { action: string; pr: { number: number } };
      waited: string;
      merged: { action: string; mergeSha: string };
      baseBefore: string;
      baseAfter: string;
    };
  };
  t.equal(demo.promotion, undefined, 'the base was not pushed directly');
  t.equal(demo.github.opened.action, 'opened');
  t.equal(demo.github.opened.pr.number, 1);
  t.match(demo.github.waited, /check-run "demo-ci" is in_progress/);
  t.equal(demo.github.merged.action, 'merged');
  t.equal(demo.github.baseAfter, demo.github.merged.mergeSha, 'origin main is the merge');
  t.not(demo.github.baseAfter, demo.github.baseBefore);
  t.match(result.stderr, /local GitHub API at http:\/\/127\.0\.0\.1:\d+/);
});
