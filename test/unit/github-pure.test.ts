// The GitHub pieces that decide: origin URLs, the API root, the merge
// verdict, the PR text, the credential store format, and the OpenAPI check
// the fake server relies on (it must catch a request GitHub would refuse).
import t from 'tap';
import { apiBaseUrl, apiUrlProblem, parseOrigin } from '../../src/github/origin.js';
import { checkRunState, mergeVerdict, statusState } from '../../src/github/merge-verdict.js';
import { pullRequestText } from '../../src/github/pr-text.js';
import { credentialFillCommand, passwordFromFill, tokenFromCredentialsFile } from '../../src/github/credential.js';
import type { CommitCheck, PullRequest } from '../../src/github/api.js';
import {
  componentSchema,
  exampleOf,
  findOperation,
  requestErrors,
  responseErrors,
  schemaErrors,
} from '../helpers/openapi.js';

t.test('owner/repo and host from https, ssh and git@ origins', async (t) => {
  const cases: [string, ReturnType<typeof parseOrigin>][] = [
    ['https://github.com/acme/widgets.git', { host: 'github.com', owner: 'acme', repo: 'widgets' }],
    ['https://github.com/acme/widgets', { host: 'github.com', owner: 'acme', repo: 'widgets' }],
    [
      'https://x-access-token:secret@github.com/acme/widgets.git',
      { host: 'github.com', owner: 'acme', repo: 'widgets' },
    ],
    ['https://GHE.example.com/Team/my.repo.git/', { host: 'ghe.example.com', owner: 'Team', repo: 'my.repo' }],
    ['ssh://git@github.com/acme/widgets.git', { host: 'github.com', owner: 'acme', repo: 'widgets' }],
    ['ssh://git@ghe.example.com:2222/acme/widgets.git', { host: 'ghe.example.com', owner: 'acme', repo: 'widgets' }],
    ['git@github.com:acme/widgets.git', { host: 'github.com', owner: 'acme', repo: 'widgets' }],
    ['github.com:acme/widgets', { host: 'github.com', owner: 'acme', repo: 'widgets' }],
    ['/srv/git/widgets.git', undefined],
    ['file:///srv/git/widgets.git', undefined],
    ['https://github.com/acme', undefined],
    ['https://github.com/acme/widgets/extra', undefined],
    ['git@github.com:../etc.git', undefined],
  ];
  for (const [url, expected] of cases) t.same(parseOrigin(url), expected, url);
});

t.test('the API root: github.com, GitHub Enterprise by host, or configured', async (t) => {
  t.equal(apiBaseUrl('github.com', undefined), 'https://api.github.com');
  t.equal(apiBaseUrl('ghe.example.com', undefined), 'https://ghe.example.com/api/v3');
  t.equal(apiBaseUrl('ghe.example.com', 'https://api.ghe.example.com/'), 'https://api.ghe.example.com');
  t.equal(apiUrlProblem('https://ghe.example.com/api/v3'), undefined);
  t.match(apiUrlProblem('ftp://x'), /http/);
  t.match(apiUrlProblem('https://user:pw@ghe.example.com/api/v3'), /credentials/);
  t.match(apiUrlProblem('not a url'), /not a URL/);
});

const pr = (change: Partial<PullRequest> = {}): PullRequest => ({
  number: 7,
  url: 'https://github.com/acme/widgets/pull/7',
  state: 'open',
  merged: false,
  mergeable: true,
  mergeableState: 'clean',
  headRef: 'auto/work',
  headSha: 'a'.repeat(40),
  baseRef: 'main',
  title: 't',
  body: 'b',
  ...change,
});
const check = (name: string, state: CommitCheck['state'], kind: CommitCheck['kind'] = 'check-run'): CommitCheck => ({
  name,
  kind,
  state,
  conclusion: state === 'pending' ? 'in_progress' : state,
  url: undefined,
});

t.test('merge verdict', async (t) => {
  const sha = 'a'.repeat(40);
  const cases: [string, Parameters<typeof mergeVerdict>[0], string, RegExp?][] = [
    [
      'all green',
      {
        pr: pr(),
        expectedSha: sha,
        checks: [check('ci', 'success'), check('lint', 'success', 'status'), check('docs', 'skipped')],
        requiredChecks: ['ci', 'lint'],
      },
      'merge',
    ],
    ['no checks, none required', { pr: pr(), expectedSha: sha, checks: [], requiredChecks: [] }, 'merge'],
    [
      'pending',
      { pr: pr(), expectedSha: sha, checks: [check('ci', 'pending')], requiredChecks: [] },
      'wait',
      /check-run "ci" is in_progress/,
    ],
    [
      'required missing',
      { pr: pr(), expectedSha: sha, checks: [], requiredChecks: ['ci'] },
      'wait',
      /required check "ci" has not reported/,
    ],
    [
      'mergeability unknown',
      { pr: pr({ mergeable: null }), expectedSha: sha, checks: [], requiredChecks: [] },
      'wait',
      /still computing/,
    ],
    [
      'red beats pending',
      { pr: pr(), expectedSha: sha, checks: [check('ci', 'failure'), check('e2e', 'pending')], requiredChecks: [] },
      'refuse',
      /check-run "ci" is failure/,
    ],
    [
      'red optional check still refuses',
      { pr: pr(), expectedSha: sha, checks: [check('nightly', 'failure', 'status')], requiredChecks: ['ci'] },
      'refuse',
      /status "nightly"/,
    ],
    [
      'head moved',
      { pr: pr({ headSha: 'b'.repeat(40) }), expectedSha: sha, checks: [check('ci', 'success')], requiredChecks: [] },
      'refuse',
      /head moved: it is at bbbbbbbbbbbb, staging is at aaaaaaaaaaaa/,
    ],
    [
      'conflicts',
      { pr: pr({ mergeable: false, mergeableState: 'dirty' }), expectedSha: sha, checks: [], requiredChecks: [] },
      'refuse',
      /not mergeable \(dirty\)/,
    ],
    ['closed', { pr: pr({ state: 'closed' }), expectedSha: sha, checks: [], requiredChecks: [] }, 'refuse', /closed/],
    [
      'merged',
      { pr: pr({ state: 'closed', merged: true }), expectedSha: sha, checks: [], requiredChecks: [] },
      'refuse',
      /already merged/,
    ],
  ];
  for (const [name, facts, kind, reason] of cases) {
    const verdict = mergeVerdict(facts);
    t.equal(verdict.kind, kind, name);
    if (reason && verdict.kind !== 'merge') t.match(verdict.reasons.join('\n'), reason, `${name}: reason`);
  }
  t.equal(checkRunState('completed', 'success'), 'success');
  t.equal(checkRunState('completed', 'timed_out'), 'failure');
  t.equal(checkRunState('completed', 'cancelled'), 'failure');
  t.equal(checkRunState('queued', null), 'pending');
  t.equal(checkRunState('completed', 'neutral'), 'neutral');
  t.equal(statusState('error'), 'failure');
  t.equal(statusState('pending'), 'pending');
});

t.test('the PR text lists landed tasks and parked ones, safe as markdown', async (t) => {
  const text = pullRequestText({
    baseBranch: 'main',
    stagingBranch: 'auto/work',
    stagingSha: 'c'.repeat(40),
    landed: [
      {
        taskId: 'TASK-1',
        title: 'Pipes | and <script>',
        gate: 'passed (.agent/gates.sh, 1.2s)',
        commit: 'd'.repeat(40),
      },
    ],
    parked: [{ id: 'TASK-2', title: 'Two', reason: 'gate red\ntwice' }],
  });
  t.equal(text.title, 'agent-runner: 1 task landed (TASK-1)');
  t.match(
    text.body,
    /\| TASK-1 \| Pipes \\\| and &lt;script> \| passed \(\.agent\/gates\.sh, 1\.2s\) \| dddddddddddd \|/,
  );
  t.match(text.body, /\| TASK-2 \| Two \| gate red twice \|/);
  const many = pullRequestText({
    baseBranch: 'main',
    stagingBranch: 'auto/work',
    stagingSha: 'c'.repeat(40),
    landed: Array.from({ length: 7 }, (_, i) => ({
      taskId: `TASK-${i}`,
      title: 'x',
      gate: 'passed',
      commit: 'e'.repeat(40),
    })),
    parked: [],
  });
  t.equal(many.title, 'agent-runner: 7 tasks landed (TASK-0, TASK-1, TASK-2, TASK-3, TASK-4, ...)');
  t.match(many.body, /### Parked \(0\)\n\nNone\./);
});

t.test('the token from the credential store, never from the environment', async (t) => {
  const command = credentialFillCommand('github.com', '/home/agent-web');
  t.same(command.args, ['-c', 'credential.interactive=never', 'credential', 'fill']);
  t.equal(command.stdin, 'protocol=https\nhost=github.com\n\n');
  t.equal(command.cwd, '/home/agent-web', 'outside any clone: no repo-local config takes part');
  t.same(Object.keys(command.env).sort(), ['GIT_CONFIG_NOSYSTEM', 'GIT_TERMINAL_PROMPT', 'HOME', 'PATH']);
  t.equal(passwordFromFill('protocol=https\nhost=github.com\nusername=x\npassword=ghp_abc\n'), 'ghp_abc');
  t.equal(passwordFromFill('protocol=https\nhost=github.com\n'), undefined);
  t.equal(
    tokenFromCredentialsFile('https://x:one@gitlab.com\nhttps://x-access-token:gh%2Fp@github.com\n', 'github.com'),
    'gh/p',
  );
  t.equal(tokenFromCredentialsFile('http://x:plain@github.com\n', 'github.com'), undefined, 'only https entries');
});

t.test('the OpenAPI check catches what GitHub would refuse', async (t) => {
  const merge = findOperation('PUT', '/repos/acme/widgets/pulls/3/merge')!;
  t.equal(merge.operation.operationId, 'pulls/merge');
  t.same(merge.params, { owner: 'acme', repo: 'widgets', pull_number: '3' });
  t.same(requestErrors(merge, new URLSearchParams(), { sha: 'a', merge_method: 'squash' }), []);
  t.match(requestErrors(merge, new URLSearchParams(), { merge_method: 'fast-forward' }).join('\n'), /not one of/);
  t.match(
    requestErrors(
      findOperation('GET', '/repos/acme/widgets/pulls')!,
      new URLSearchParams('colour=red'),
      undefined,
    ).join('\n'),
    /"colour" is not documented/,
  );
  t.match(responseErrors(merge, 418, {}).join('\n'), /does not document status 418/);
  t.match(responseErrors(merge, 200, { merged: 'yes' }).join('\n'), /required property "sha"/);
  t.same(responseErrors(merge, 200, { sha: 'a', merged: true, message: 'ok' }), []);
  t.equal(
    findOperation('GET', '/repos/acme/widgets/branches/auto/work')?.params.branch,
    'auto/work',
    'a branch name with a slash',
  );
  t.equal(findOperation('GET', '/repos/acme/widgets/nonsense'), undefined);
  const example = exampleOf(componentSchema('pull-request'));
  t.same(schemaErrors(componentSchema('pull-request'), example), [], 'a generated example conforms');
  t.not(
    schemaErrors(componentSchema('pull-request'), { ...(example as object), state: 42 }).length,
    0,
    'a wrong type does not',
  );
});
