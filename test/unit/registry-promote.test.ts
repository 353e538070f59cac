// The registry's promote settings: promote = "push" | "pr", auto_merge and
// github_api_url, in [defaults] and per repo, each bad value with its fix.
import t from 'tap';
import { parseRegistry } from '../../src/control/registry/parse.js';

const schedules = { isValid: () => true };
const repo = (extra: string) => `[repos.web]\npath = "/srv/web"\nproxy_port = 700\n${extra}`;

t.test('defaults: no settings means push; one key fills in the rest', async (t) => {
  const { registry, problems } = parseRegistry(repo(''), 'r.toml', schedules);
  t.same(problems, []);
  t.equal(registry.repos[0]!.promote, undefined);
  t.same(parseRegistry(repo('auto_merge = false\n'), 'r.toml', schedules).registry.repos[0]!.promote, {
    mode: 'push',
    autoMerge: false,
    githubApiUrl: undefined,
  });
});

t.test('per repo, and from [defaults]', async (t) => {
  const { registry, problems } = parseRegistry(
    `[defaults]\npromote = "pr"\ngithub_api_url = "https://ghe.example.com/api/v3/"\n${repo('auto_merge = true\n')}`,
    'r.toml',
    schedules,
  );
  t.same(problems, []);
  t.same(registry.repos[0]!.promote, { mode: 'pr', autoMerge: true, githubApiUrl: 'https://ghe.example.com/api/v3' });
});

t.test('bad values are reported with the fix, all at once', async (t) => {
  const { problems } = parseRegistry(
    repo('promote = "merge"\nauto_merge = "yes"\ngithub_api_url = "https://u:p@ghe.example.com"\n'),
    'r.toml',
    schedules,
  );
  t.same(problems.map((problem) => problem.key).sort(), [
    'repos.web.auto_merge',
    'repos.web.github_api_url',
    'repos.web.promote',
  ]);
  t.match(problems.find((problem) => problem.key === 'repos.web.promote')!.fix, /promote = "pr"/);
  t.match(problems.find((problem) => problem.key === 'repos.web.github_api_url')!.problem, /credentials/);
});
