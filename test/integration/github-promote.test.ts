// promote --pr and --merge against a local server that answers like GitHub's
// REST API (every request and answer checked against GitHub's OpenAPI
// description), with real git underneath: the PR's head is the bare origin's
// real auto/work, and a merge really moves the origin's main.
import t from 'tap';
import { execFileSync } from 'node:child_process';
import { gitHubFixture } from '../helpers/github-fixture.js';
import { git } from '../helpers/temp.js';
import { cli } from '../helpers/in-process-cli.js';

interface SyncJson {
  action: string;
  stagingSha: string;
  pr: { number: number; url: string; state: string; checks: { name: string; state: string }[] };
  verdict?: string;
  reasons?: string[];
  mergeSha?: string;
}

const json = (out: string) => JSON.parse(out) as SyncJson;

t.test('opens a pull request from auto/work listing landed and parked tasks, then updates it', async (t) => {
  const f = await gitHubFixture(t);
  const first = await f.promote('--pr', '--json');
  t.equal(first.code, 0, first.err);
  const opened = json(first.out);
  t.equal(opened.action, 'opened');
  t.equal(opened.stagingSha, f.sha('auto/work'));
  t.equal(f.fake.pulls.length, 1);
  const pull = f.fake.pulls[0]!;
  t.equal(pull.head, 'auto/work');
  t.equal(pull.base, 'main');
  t.match(pull.title, /1 task landed \(TASK-1\)/);
  const landing = git(f.workspace, 'rev-parse', 'origin/auto/work');
  t.match(
    pull.body,
    new RegExp(`\\| TASK-1 \\| Add widgets \\| passed \\(\\.agent/gates\\.sh\\) \\| ${landing.slice(0, 12)} \\|`),
    'landed task: id, title, gate, landing commit',
  );
  t.match(
    pull.body,
    /### Parked \(1\)[\s\S]*\| TASK-2 \| Risky thing \| gate red twice \(branch auto\/TASK-2\) \|/,
    'the parked task and why',
  );

  f.land('TASK-3', 'Add gadgets');
  git(f.workspace, 'fetch', '-q', 'origin');
  const second = await f.promote('--pr', '--json');
  t.equal(second.code, 0, second.err);
  t.equal(json(second.out).action, 'updated');
  t.equal(f.fake.pulls.length, 1, 'no second pull request');
  t.match(f.fake.pulls[0]!.title, /2 tasks landed \(TASK-1, TASK-3\)/, 'the title is rewritten');
  t.match(f.fake.pulls[0]!.body, /\| TASK-3 \| Add gadgets \|/, 'the body is rewritten');
  t.equal(f.fake.requests.filter((request) => request.operationId === 'pulls/create').length, 1, 'created once');
  t.equal(f.fake.requests.filter((request) => request.operationId === 'pulls/update').length, 1, 'updated once');
  t.same(f.fake.problems, [], "every request and answer matched GitHub's description");
});

t.test('a pull request that already exists (422) is updated, not duplicated', async (t) => {
  const f = await gitHubFixture(t);
  // Someone opened it between our look and our create: the list misses it once.
  f.fake.pulls.push({
    number: 1,
    head: 'auto/work',
    base: 'main',
    title: 'old',
    body: 'old',
    state: 'open',
    merged: false,
    mergeable: true,
  });
  f.fake.hideFromListOnce = true;
  const result = await f.promote('--pr', '--json');
  t.equal(result.code, 0, result.err);
  t.equal(json(result.out).action, 'updated');
  t.ok(
    f.fake.requests.some((request) => request.operationId === 'pulls/create' && request.status === 422),
    'GitHub said it already exists',
  );
  t.equal(f.fake.pulls.length, 1);
  t.match(f.fake.pulls[0]!.title, /TASK-1/);
  t.same(f.fake.problems, []);
});

t.test('merge: every required check and status green on the exact head, merged with that sha', async (t) => {
  const f = await gitHubFixture(t);
  const head = f.sha('auto/work')!;
  f.fake.protectedBranches.set('main', ['ci', 'lint']);
  f.fake.checks.set(head, [
    { name: 'ci', status: 'completed', conclusion: 'success' },
    { name: 'docs', status: 'completed', conclusion: 'skipped' },
  ]);
  f.fake.statuses.set(head, [{ context: 'lint', state: 'success' }]);
  const result = await f.promote('--pr', '--merge', '--json');
  t.equal(result.code, 0, result.err);
  const merged = json(result.out);
  t.equal(merged.action, 'merged');
  const mergeRequest = f.fake.requests.find((request) => request.operationId === 'pulls/merge')!;
  t.same((mergeRequest.body as { sha: string }).sha, head, 'the merge names the expected head sha');
  t.equal(
    (mergeRequest.body as { merge_method: string }).merge_method,
    'merge',
    'default method keeps each landing commit',
  );
  execFileSync('git', ['--git-dir', f.bare, 'merge-base', '--is-ancestor', head, 'refs/heads/main']);
  t.pass('origin main now contains the staging head');
  t.same(f.fake.problems, []);
});

t.test('merge method comes from the repo config', async (t) => {
  const f = await gitHubFixture(t);
  const { writeFileSync, mkdirSync } = await import('node:fs');
  mkdirSync(`${f.workspace}/.agent`, { recursive: true });
  writeFileSync(`${f.workspace}/.agent/config.json`, JSON.stringify({ mergeMethod: 'squash' }));
  const head = f.sha('auto/work')!;
  f.fake.checks.set(head, [{ name: 'ci', status: 'completed', conclusion: 'success' }]);
  const result = await f.promote('--pr', '--merge', '--json');
  t.equal(result.code, 0, result.err);
  t.equal(
    (f.fake.requests.find((request) => request.operationId === 'pulls/merge')!.body as { merge_method: string })
      .merge_method,
    'squash',
  );
  t.equal(f.sha('auto/work'), f.sha('main'), 'after a squash, staging starts again from the new base');
});

t.test('a pending check waits (exit 75) and says so; a missing required check is pending too', async (t) => {
  const f = await gitHubFixture(t);
  const head = f.sha('auto/work')!;
  f.fake.protectedBranches.set('main', ['ci', 'e2e']);
  f.fake.checks.set(head, [{ name: 'ci', status: 'in_progress', conclusion: null }]);
  const result = await f.promote('--pr', '--merge');
  t.equal(result.code, 75);
  t.match(result.err, /check-run "ci" is in_progress/);
  t.match(result.err, /required check "e2e" has not reported/);
  t.match(result.err, /try again later/);
  t.notOk(
    f.fake.requests.some((request) => request.operationId === 'pulls/merge'),
    'no merge was requested',
  );
  t.same(f.fake.problems, []);
});

t.test('a red check is named and refuses (exit 1)', async (t) => {
  const f = await gitHubFixture(t);
  const head = f.sha('auto/work')!;
  f.fake.checks.set(head, [{ name: 'ci', status: 'completed', conclusion: 'success' }]);
  f.fake.statuses.set(head, [{ context: 'security/scan', state: 'failure' }]);
  const result = await f.promote('--pr', '--merge', '--json');
  t.equal(result.code, 1);
  t.match(result.err, /status "security\/scan" is failure/);
  t.equal(json(result.out).verdict, 'refuse');
  t.notOk(f.fake.requests.some((request) => request.operationId === 'pulls/merge'));
});

t.test('checks are read on the exact staging sha, not on a branch name', async (t) => {
  const f = await gitHubFixture(t);
  const head = f.sha('auto/work')!;
  f.fake.checks.set('auto/work', [{ name: 'ci', status: 'completed', conclusion: 'success' }]);
  f.fake.checks.set(head, [{ name: 'ci', status: 'completed', conclusion: 'failure' }]);
  const result = await f.promote('--pr', '--merge');
  t.equal(result.code, 1);
  t.ok(f.fake.requests.some((request) => request.path.startsWith(`/repos/acme/widgets/commits/${head}/check-runs`)));
});

t.test('a head that moved while merging is never merged (409 on the expected sha)', async (t) => {
  const f = await gitHubFixture(t);
  const head = f.sha('auto/work')!;
  f.fake.checks.set(head, [{ name: 'ci', status: 'completed', conclusion: 'success' }]);
  const mainBefore = f.sha('main');
  f.fake.beforeMerge = () => {
    // Another push lands on auto/work between our checks and our merge.
    const other = `${f.workspace}-other`;
    execFileSync('git', ['clone', '-q', '-b', 'auto/work', f.bare, other]);
    execFileSync('git', [
      '-C',
      other,
      '-c',
      'user.name=x',
      '-c',
      'user.email=x@x',
      'commit',
      '-q',
      '--allow-empty',
      '-m',
      'moved',
    ]);
    execFileSync('git', ['-C', other, 'push', '-q', 'origin', 'auto/work']);
  };
  const result = await f.promote('--pr', '--merge');
  t.equal(result.code, 1);
  t.match(result.err, /head moved/);
  t.equal(f.sha('main'), mainBefore, 'main did not move');
  t.same(f.fake.problems, []);
});

t.test('a head that moved before the merge is refused before any merge request', async (t) => {
  const f = await gitHubFixture(t);
  f.fake.pulls.push({
    number: 1,
    head: 'auto/work',
    base: 'main',
    title: 't',
    body: 'b',
    state: 'open',
    merged: false,
    mergeable: true,
  });
  const realSha = f.sha('auto/work')!;
  f.fake.headOverride = '1234567890abcdef1234567890abcdef12345678';
  f.fake.checks.set(realSha, [{ name: 'ci', status: 'completed', conclusion: 'success' }]);
  const result = await f.promote('--pr', '--merge');
  t.equal(result.code, 1);
  t.match(result.err, /head moved: it is at 1234567890ab, staging is at/);
  t.notOk(f.fake.requests.some((request) => request.operationId === 'pulls/merge'));
});

t.test("a token that cannot write: GitHub's message and the failing request", async (t) => {
  const f = await gitHubFixture(t);
  f.fake.canWrite = false;
  const result = await f.promote('--pr');
  t.equal(result.code, 1);
  t.match(
    result.err,
    /GitHub answered 403 to POST \/repos\/acme\/widgets\/pulls: Resource not accessible by personal access token/,
  );
  t.notMatch(result.err + result.out, /ghp_/, 'the token is never printed');
});

t.test('a rate limit with a reset time is waited out and shown as waiting', async (t) => {
  const f = await gitHubFixture(t);
  f.fake.rateLimitNext = { operationId: 'pulls/create', resetInSec: 1 };
  const result = await f.promote('--pr', '--json');
  t.equal(result.code, 0, result.err);
  t.match(result.err, /waiting \d+ s for GitHub's rate limit on POST \/repos\/acme\/widgets\/pulls/);
  t.equal(json(result.out).action, 'opened');
  t.same(
    f.fake.requests.filter((request) => request.operationId === 'pulls/create').map((request) => request.status),
    [403, 201],
  );
  t.same(f.fake.problems, []);
});

t.test('a rate limit longer than the bound is "try again later" (exit 75), not a failure', async (t) => {
  const f = await gitHubFixture(t);
  f.fake.rateLimitNext = { operationId: 'pulls/create', resetInSec: 3600 };
  const result = await f.promote('--pr');
  t.equal(result.code, 75);
  t.match(result.err, /rate limited until \d{4}-\d\d-\d\dT/);
});

t.test('GitHub Enterprise: the API root from config, the token for the server host', async (t) => {
  const f = await gitHubFixture(t, { host: 'ghe.example.invalid', prefix: '/api/v3' });
  t.match(f.apiUrl, /\/api\/v3$/);
  const result = await f.promote('--pr', '--json');
  t.equal(result.code, 0, result.err);
  t.ok(f.fake.requests.every((request) => request.status < 400));
  t.match(json(result.out).pr.url, /\/pull\/1$/);
});

for (const [name, originUrl] of [
  ['ssh://', (host: string) => `ssh://git@${host}/acme/widgets.git`],
  ['git@ scp-like', (host: string) => `git@${host}:acme/widgets.git`],
  ['https without .git', (host: string) => `https://${host}/acme/widgets`],
] as const) {
  t.test(`owner/repo from a ${name} origin`, async (t) => {
    const f = await gitHubFixture(t, { originUrl });
    const result = await f.promote('--pr', '--json');
    t.equal(result.code, 0, result.err);
    t.ok(
      f.fake.requests.some(
        (request) => request.operationId === 'pulls/create' && request.path === '/repos/acme/widgets/pulls',
      ),
    );
  });
}

t.test('no token in the credential store: exit 2 with the fix', async (t) => {
  const f = await gitHubFixture(t);
  const { rmSync } = await import('node:fs');
  rmSync(`${f.env.HOME}/.git-credentials`);
  const result = await f.promote('--pr');
  t.equal(result.code, 2);
  t.match(result.err, /no token for https:\/\/github\.example\.invalid in the git credential store/);
  t.match(result.err, /git credential approve/);
  t.equal(f.fake.requests.length, 0);
});

t.test('status --pr shows the pull request and the checks on the staging head', async (t) => {
  const f = await gitHubFixture(t);
  const head = f.sha('auto/work')!;
  f.fake.checks.set(head, [
    { name: 'ci', status: 'completed', conclusion: 'success' },
    { name: 'e2e', status: 'in_progress', conclusion: null },
  ]);
  t.equal((await f.promote('--pr')).code, 0);
  const human = await cli(f.env, [
    'status',
    '--workspace',
    f.workspace,
    '--pr',
    '--github-api',
    f.apiUrl,
    '--no-fetch',
  ]);
  t.equal(human.code, 0, human.err);
  t.match(human.out, /pr {7}#1 open, mergeable: https:\/\/github\.example\.invalid\/acme\/widgets\/pull\/1/);
  t.match(human.out, new RegExp(`checks {3}on ${head.slice(0, 12)}: ci success, e2e in_progress`));
  const asJson = await cli(f.env, ['status', '--workspace', f.workspace, '--pr', '--github-api', f.apiUrl, '--json']);
  const status = JSON.parse(asJson.out) as {
    pullRequest: { number: number; headSha: string; checks: { name: string; state: string }[] };
  };
  t.equal(status.pullRequest.number, 1);
  t.equal(status.pullRequest.headSha, head);
  t.same(
    status.pullRequest.checks.map((check) => `${check.name}:${check.state}`),
    ['ci:success', 'e2e:pending'],
  );
  t.same(f.fake.problems, []);
});
