// What the watcher records of a `promote --pr` run as the repo user (hostile
// output, bounded and validated), the arguments it runs it with, and the
// cell fleet and the dashboard show.
import t from 'tap';
import { pullRequestCell, pullRequestRecordFrom } from '../../src/control/pull-request/record.js';
import { pullRequestPromoteArgs } from '../../src/control/pull-request/sync.js';
import { parseRegistry } from '../../src/control/registry/parse.js';
import { fleetEntry, renderFleetHuman } from '../../src/control/fleet/fleet.js';
import { buildView } from '../../tui/view-model.js';

const repoOf = (extra: string) =>
  parseRegistry(`[repos.web]\npath = "/srv/web"\nproxy_port = 700\n${extra}`, 'r.toml', { isValid: () => true })
    .registry.repos[0]!;
const sha = 'a'.repeat(40);

t.test('promote arguments follow the registry', async (t) => {
  t.equal(pullRequestPromoteArgs(repoOf('')), undefined, 'push mode: the watcher does nothing');
  t.same(
    pullRequestPromoteArgs(repoOf('promote = "pr"\n')),
    ['promote', '--workspace', '/srv/web', '--pr', '--json'],
    'never merges on its own',
  );
  t.same(
    pullRequestPromoteArgs(
      repoOf('promote = "pr"\nauto_merge = true\ngithub_api_url = "https://ghe.example.com/api/v3"\n'),
    ),
    [
      'promote',
      '--workspace',
      '/srv/web',
      '--pr',
      '--merge',
      '--github-api',
      'https://ghe.example.com/api/v3',
      '--json',
    ],
  );
});

t.test('the record from promote output', async (t) => {
  const out = JSON.stringify({
    action: 'updated',
    detail: 'updated pull request #3',
    pr: {
      number: 3,
      url: 'https://github.com/a/b/pull/3',
      state: 'open',
      merged: false,
      mergeable: true,
      headSha: sha,
      checks: [{ name: 'ci', kind: 'check-run', state: 'pending', conclusion: 'in_progress' }],
    },
  });
  const record = pullRequestRecordFrom(`progress\n${out}\n`, '', 75, '2026-11-30T21:00:00Z');
  t.equal(record.action, 'updated');
  t.equal(record.number, 3);
  t.equal(record.headSha, sha);
  t.equal(pullRequestCell(record), 'PR #3 open 1 pending');
  const failed = pullRequestRecordFrom('', 'GitHub answered 403 to POST /repos/a/b/pulls: nope\n', 1, 'x');
  t.equal(failed.action, 'failed');
  t.equal(failed.detail, 'GitHub answered 403 to POST /repos/a/b/pulls: nope');
  const hostile = pullRequestRecordFrom(
    JSON.stringify({
      action: 'x'.repeat(1000),
      pr: {
        number: '3; rm',
        url: 5,
        headSha: '../../x',
        checks: Array.from({ length: 300 }, () => ({ name: 'n'.repeat(300) })),
      },
    }),
    '',
    0,
    'x',
  );
  t.equal(hostile.action.length, 40);
  t.equal(hostile.number, null);
  t.equal(hostile.url, null);
  t.equal(hostile.headSha, null);
  t.equal(hostile.checks.length, 100);
  t.equal(hostile.checks[0]!.name.length, 200);
  t.equal(
    pullRequestCell(
      pullRequestRecordFrom(
        JSON.stringify({ action: 'merged', pr: { number: 4, state: 'closed', merged: true, checks: [] } }),
        '',
        0,
        'x',
      ),
    ),
    'PR #4 merged',
  );
  t.equal(
    pullRequestCell(
      pullRequestRecordFrom(
        JSON.stringify({
          action: 'opened',
          pr: { number: 5, state: 'open', checks: [{ name: 'ci', state: 'failure', conclusion: 'failure' }] },
        }),
        '',
        1,
        'x',
      ),
    ),
    'PR #5 open 1 red',
    'a refused merge still shows the PR',
  );
  t.equal(pullRequestCell(pullRequestRecordFrom('', 'no token', 2, 'x')), 'PR ?', 'a failed run without a PR');
});

t.test('fleet and the dashboard show the pull request in the staging column', async (t) => {
  const record = pullRequestRecordFrom(
    JSON.stringify({
      action: 'updated',
      pr: {
        number: 9,
        url: 'https://github.com/a/b/pull/9',
        state: 'open',
        mergeable: true,
        headSha: sha,
        checks: [{ name: 'ci', state: 'failure', conclusion: 'failure' }],
      },
    }),
    '',
    0,
    'x',
  );
  const entry = fleetEntry({
    repo: repoOf('promote = "pr"\n'),
    now: 0,
    status: undefined,
    watcherAlive: false,
    runs: [],
    runningTasks: [],
    queued: 0,
    runningJobs: 0,
    staging: { exists: true, ahead: 2, behind: 0 },
    board: undefined,
    errors: [],
    pullRequest: record,
  });
  t.equal(entry.pullRequest?.number, 9, 'fleet --json carries the record');
  const fleet = { generatedAt: 'x', registry: 'r.toml', problems: [], repos: [entry] };
  t.match(renderFleetHuman(fleet), /\+2\/-0 PR #9 open 1 red/);
  const view = buildView(fleet, 'web', 0, { lastReadAt: 0, error: null, reading: false, intervalSec: 2 });
  t.ok(JSON.stringify(view).includes('+2/-0 PR #9 open 1 red'), 'the dashboard staging cell');
  t.ok(JSON.stringify(view).includes('https://github.com/a/b/pull/9'), 'the details name the URL');
});
