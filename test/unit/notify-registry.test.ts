// The registry's webhooks: [[defaults.notify]] and [[repos.NAME.notify]] read,
// resolved per repo, and every bad entry refused at once with its fix; no
// message repeats a URL's path (where the token lives).
import t from 'tap';
import { parseRegistry } from '../../src/control/registry/parse.js';
import { upsertRepo } from '../../src/control/registry/edit.js';
import { cronScheduler } from '../../src/io/cron.js';
import { NOTIFY_EVENT_KINDS } from '../../src/control/notify/index.js';

const TOKEN = 'T0KEN-xyz-9876543210';

const parse = (text: string) => parseRegistry(text, '/etc/agent-runner/registry.toml', cronScheduler);

t.test('a repo takes its own webhooks, else the defaults, and notify = [] turns them off', async (t) => {
  const { registry, problems } = parse(`
[[defaults.notify]]
url = "https://hooks.slack.com/services/${TOKEN}"
format = "slack"
events = ["task-parked", "drain-ended"]

[repos.web]
path = "/srv/web"
proxy_port = 700

[repos.api]
path = "/srv/api"
proxy_port = 701

[[repos.api.notify]]
url = "http://127.0.0.1:9000/hook?token=${TOKEN}"

[repos.docs]
path = "/srv/docs"
proxy_port = 702
notify = []
`);
  t.same(problems, []);
  const byName = Object.fromEntries(registry.repos.map((repo) => [repo.name, repo]));
  t.same(byName.web!.notify, [
    {
      url: `https://hooks.slack.com/services/${TOKEN}`,
      events: ['task-parked', 'drain-ended'],
      format: 'slack',
    },
  ]);
  t.same(byName.api!.notify, [
    { url: `http://127.0.0.1:9000/hook?token=${TOKEN}`, events: [...NOTIFY_EVENT_KINDS], format: 'json' },
  ]);
  t.equal(byName.docs!.notify, undefined, 'an empty list: no webhook');
});

t.test('every bad entry is refused at once, with the fix, and never with the URL path', async (t) => {
  const { registry, problems } = parse(`
[repos.web]
path = "/srv/web"
proxy_port = 700

[[repos.web.notify]]
url = "http://hooks.example.com/services/${TOKEN}"
events = ["task-parked", "task-parkd"]
format = "teams"
colour = "red"

[[repos.web.notify]]
events = ["drain-ended"]

[[repos.web.notify]]
url = "ftp://example.com/${TOKEN}"
events = []
`);
  t.same(registry.repos, [], 'the repo is not run with a broken notify list');
  const lines = problems.map((p) => `${p.key}: ${p.problem}; ${p.fix}`);
  t.same(lines, [
    `repos.web.notify.1.colour: unknown key; remove it; allowed keys: url, events, format`,
    `repos.web.notify.1.url: is plain http to hooks.example.com: the body and the URL's token would cross the network readable; write the webhook's https URL, e.g. url = "https://hooks.slack.com/services/…" (http only to 127.0.0.1 or localhost)`,
    `repos.web.notify.1.events: unknown events: "task-parkd"; list some of: ${NOTIFY_EVENT_KINDS.join(', ')} (or remove events: every one is sent)`,
    `repos.web.notify.1.format: must be "json" or "slack", got "teams"; write format = "slack" for a Slack-compatible incoming webhook ({"text": …}), or format = "json" (the default)`,
    `repos.web.notify.2.url: url is missing; add url = "https://…" to this [[repos.web.notify]]`,
    `repos.web.notify.3.url: has scheme ftp, not https; write the webhook's https URL, e.g. url = "https://hooks.slack.com/services/…" (http only to 127.0.0.1 or localhost)`,
    `repos.web.notify.3.events: is empty: this webhook would never be sent anything; list some of: ${NOTIFY_EVENT_KINDS.join(', ')} (or remove events: every one is sent)`,
  ]);
  t.notOk(JSON.stringify(problems).includes(TOKEN), 'no problem repeats the token');
  t.ok(
    problems.every((p) => p.file.startsWith('/etc/agent-runner/registry.toml')),
    'each names the registry file',
  );
});

t.test('a table instead of a list, a user in the URL and the same webhook twice', async (t) => {
  const { problems } = parse(`
[defaults.notify]
url = "https://example.com/x"

[repos.web]
path = "/srv/web"
proxy_port = 700

[[repos.web.notify]]
url = "https://bot:${TOKEN}@example.com/hook"

[repos.api]
path = "/srv/api"
proxy_port = 701

[[repos.api.notify]]
url = "https://example.com/hook/${TOKEN}"
[[repos.api.notify]]
url = "https://example.com/hook/${TOKEN}"
events = ["repo-skipped"]
`);
  t.same(
    problems.map((p) => `${p.key}: ${p.problem}`),
    [
      'defaults.notify: must be a list of webhooks',
      'repos.web.notify.1.url: carries a user or password (https://example.com/…): put a token in the path or query instead',
      'repos.api.notify.2.url: names the same webhook (https://example.com/…) as an entry before it',
    ],
  );
  t.notOk(JSON.stringify(problems).includes(TOKEN));
});

t.test("rewriting a repo's section (provision) keeps its webhooks", async (t) => {
  const text = `[repos.web]
path = "/srv/web"
proxy_port = 700

[[repos.web.notify]]
url = "https://example.com/hook/${TOKEN}"
events = ["drain-ended"]

[repos.api]
path = "/srv/api"
proxy_port = 701
`;
  const after = upsertRepo(text, { name: 'web', path: '/srv/web2' });
  const { registry, problems } = parse(after);
  t.same(problems, []);
  const web = registry.repos.find((repo) => repo.name === 'web')!;
  t.equal(web.path, '/srv/web2');
  t.same(web.notify, [{ url: `https://example.com/hook/${TOKEN}`, events: ['drain-ended'], format: 'json' }]);
  t.ok(registry.repos.some((repo) => repo.name === 'api' && repo.notify === undefined));
});
