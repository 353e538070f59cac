// Who of a repo may reach which names: the git host of every URL shape, the runner's list and the agent's.
import t from 'tap';
import { agentAllow, agentDeniedGitHost, gitHostOf, runnerAllow } from '../../src/control/registry/egress.js';
import { aRepo } from '../helpers/host-fixtures.js';

t.test('the git host of a clone URL', async (t) => {
  const cases: [string | undefined, string | undefined][] = [
    ['https://github.com/o/r.git', 'github.com'],
    ['https://user@GitHub.com/o/r', 'github.com'],
    ['git@github.com:o/r.git', 'github.com'],
    ['ssh://git@gitlab.example.org:2222/g/sub/r.git', 'gitlab.example.org'],
    ['git://git.example.org/r.git', 'git.example.org'],
    ['http://127.0.0.1:9418/origin.git', '127.0.0.1'],
    ['/srv/origin.git', undefined],
    ['file:///srv/origin.git', undefined],
    ['', undefined],
    [undefined, undefined],
  ];
  for (const [url, host] of cases) t.equal(gitHostOf(url), host, String(url));
});

t.test("the runner's list: the git host, GitHub's API, nothing for a local origin or an address", async (t) => {
  t.same(runnerAllow(aRepo('a', { url: 'https://github.com/o/r.git' })), ['github.com', 'api.github.com']);
  t.same(runnerAllow(aRepo('a', { url: 'https://gitlab.com/o/r.git' })), ['gitlab.com']);
  t.same(
    runnerAllow(
      aRepo('a', {
        url: 'https://ghe.example.com/o/r.git',
        promote: { mode: 'pr', autoMerge: false, githubApiUrl: 'https://api.ghe.example.com/v3' },
      }),
    ),
    ['ghe.example.com', 'api.ghe.example.com'],
    "GitHub Enterprise: the registry's API host",
  );
  t.same(runnerAllow(aRepo('a', { url: '/srv/origin.git' })), []);
  t.same(runnerAllow(aRepo('a', { url: 'http://127.0.0.1/o.git' })), [], 'an address is no proxy name');
});

t.test("the agent's list: allow without the git host, unless anonymous_fetch", async (t) => {
  const repo = aRepo('a', { url: 'git@github.com:o/r.git', allow: ['github.com', 'registry.npmjs.org'] });
  t.same(agentAllow(repo), ['registry.npmjs.org']);
  t.equal(agentDeniedGitHost(repo), undefined);
  t.same(agentAllow({ ...repo, anonymousFetch: true }), ['github.com', 'registry.npmjs.org']);
  t.equal(agentDeniedGitHost({ ...repo, allow: ['.github.com'] }), 'github.com', 'a covering entry: denied by name');
  t.equal(agentDeniedGitHost({ ...repo, allow: ['.github.com'], anonymousFetch: true }), undefined);
  t.same(agentAllow({ ...repo, url: undefined }), ['github.com', 'registry.npmjs.org'], 'a local origin: allow as is');
});
