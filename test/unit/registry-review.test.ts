// The registry's review key: "required" turns review on for a repo whatever
// its .agent/config.json says; per repo and in [defaults], errors at their
// line with the fix.
import t from 'tap';
import { parseRegistry } from '../../src/control/registry/parse.js';
import { cronScheduler } from '../../src/io/cron.js';

t.test('the registry review key: per repo and in [defaults], errors at file:line with the fix', async (t) => {
  const text = `[defaults]
review = "required"

[repos.web]
path = "/srv/web"
proxy_port = 700

[repos.api]
path = "/srv/api"
proxy_port = 701
review = "optional"
`;
  const { registry, problems } = parseRegistry(text, 'reg.toml', cronScheduler);
  t.same(problems, []);
  t.same(
    registry.repos.map((repo) => [repo.name, repo.review]),
    [
      ['web', 'required'],
      ['api', undefined],
    ],
    '"optional" leaves review to the repo; a repo table wins over [defaults]',
  );
  t.notOk('review' in registry.repos[1]!, 'optional is carried as no key');

  const bad = parseRegistry(
    `[defaults]
review = true

[repos.web]
path = "/srv/web"
proxy_port = 700
review = "always"
`,
    'reg.toml',
    cronScheduler,
  );
  t.same(
    bad.problems.map((p) => `${p.file} ${p.key}: ${p.problem}; ${p.fix}`),
    [
      'reg.toml:2 defaults.review: must be "required" or "optional", got true; write review = "required" (every task is reviewed, whatever the repo\'s .agent/config.json says) or review = "optional" (the repo decides)',
      'reg.toml:7 repos.web.review: must be "required" or "optional", got "always"; write review = "required" (every task is reviewed, whatever the repo\'s .agent/config.json says) or review = "optional" (the repo decides)',
    ],
  );
  const typo = parseRegistry(
    '[repos.web]\npath = "/srv/web"\nproxy_port = 700\nreveiw = "required"\n',
    'reg.toml',
    cronScheduler,
  );
  t.same(
    typo.problems.map((p) => `${p.file} ${p.key}: ${p.fix}`),
    ['reg.toml:4 repos.web.reveiw: did you mean "review"? (see control/registry.example.toml)'],
  );
});
