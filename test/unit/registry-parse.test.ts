// Registry validation: every problem at once, with line, key and fix.
import t from 'tap';
import { SPEND_DEFAULTS } from '../../src/control/registry/spend.js';
import {
  defaultUserFor,
  findRepo,
  parseRegistry,
  readRegistry,
  REPO_NAME_PATTERN,
} from '../../src/control/registry/parse.js';
import { removeRepo, upsertRepo } from '../../src/control/registry/edit.js';
import { realFs } from '../../src/io/real-ports.js';
import { UsageError } from '../../src/errors.js';
import { tempDir } from '../helpers/temp.js';
import { writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { cronScheduler } from '../../src/io/cron.js';

const GOOD = `# fleet
[defaults]
schedule = "*/5 * * * *"
max_parallel = 3
allow = ["registry.npmjs.org"]
env = { NODE_ENV = "test" }
author_email = "bot@example.com"
memory_max = "4G"

[repos.web]
path = "/srv/repos/web/"
proxy_port = 700
allow = [".pythonhosted.org", "registry.npmjs.org"]
env = { LOG = "1" }

[repos.api]
path = "/srv/repos/api"
user = "svc-api"
base = "trunk"
proxy_port = 701
max_parallel = 1
enabled = false
loopback_ports = [5432]
toolchain_path = "/opt/node/bin:/usr/bin:/bin"
tasks_max = 64
cpu_weight = 50
`;

t.test('a valid registry with defaults applied', async (t) => {
  const { registry, problems } = parseRegistry(GOOD, '/etc/agent-runner/registry.toml', cronScheduler);
  t.same(problems, []);
  t.same(registry.repos, [
    {
      name: 'web',
      path: '/srv/repos/web',
      user: 'agent-web',
      baseBranch: 'main',
      proxyPort: 700,
      anonymousFetch: false,
      gateEgress: 'none',
      schedule: '*/5 * * * *',
      remotePollSec: 15,
      maxParallel: 3,
      allow: ['registry.npmjs.org', '.pythonhosted.org'],
      loopbackPorts: [],
      toolchainPath: '/usr/local/bin:/usr/bin:/bin',
      env: { NODE_ENV: 'test', LOG: '1' },
      enabled: true,
      url: undefined,
      authorName: undefined,
      authorEmail: 'bot@example.com',
      limits: { tasksMax: 1024, memoryMax: 4 * 1024 ** 3, cpuWeight: 100 },
      spend: SPEND_DEFAULTS,
    },
    {
      name: 'api',
      path: '/srv/repos/api',
      user: 'svc-api',
      baseBranch: 'trunk',
      proxyPort: 701,
      anonymousFetch: false,
      gateEgress: 'none',
      schedule: '*/5 * * * *',
      remotePollSec: 15,
      maxParallel: 1,
      allow: ['registry.npmjs.org'],
      loopbackPorts: [5432],
      toolchainPath: '/opt/node/bin:/usr/bin:/bin',
      env: { NODE_ENV: 'test' },
      enabled: false,
      url: undefined,
      authorName: undefined,
      authorEmail: 'bot@example.com',
      limits: { tasksMax: 64, memoryMax: 4 * 1024 ** 3, cpuWeight: 50 },
      spend: SPEND_DEFAULTS,
    },
  ]);
});

t.test('every problem is reported at once, with line, key and fix', async (t) => {
  const text = `[defaults]
shedule = "* * * * *"
path = "/x"

[repos.web]
path = "relative/web"
proxy_port = 3130
schedule = "every minute"
max_parallel = 0
allow = ["https://evil.example/x"]
env = { GITHUB_TOKEN = "x", PATH = "/bin", OK = "1" }
enabled = "yes"
author_email = "nobody"
user = "root"

[repos.api]
path = "/srv/api"
proxy_port = 700
user = "agent-web"

[repos.db]
path = "/srv/db"
proxy_port = 700
user = "agent-web"
maxparallel = 2

[repos.Bad_Name]
path = "/srv/bad"
proxy_port = 4000

[repos.nopath]
proxy_port = 702

[extra]
x = 1
`;
  const { registry, problems } = parseRegistry(text, 'reg.toml', cronScheduler);
  const lines = problems.map((p) => `${p.file} ${p.key}: ${p.problem}`);
  t.same(lines, [
    'reg.toml:34 extra: unknown top-level key',
    'reg.toml:2 defaults.shedule: unknown key',
    'reg.toml:3 defaults.path: "path" belongs in [repos.NAME], not in [defaults]',
    'reg.toml:6 repos.web.path: must be an absolute path, got "relative/web"',
    'reg.toml:7 repos.web.proxy_port: must be a privileged port 1-1023, got 3130: any user, an agent too, can bind a port from 1024 up and cut the repo off from its proxy',
    'reg.toml:8 repos.web.schedule: not a valid cron expression: "every minute"',
    'reg.toml:9 repos.web.max_parallel: must be an integer 1-16, got 0',
    'reg.toml:10 repos.web.allow: not domain names: "https://evil.example/x"',
    'reg.toml:11 repos.web.env.GITHUB_TOKEN: looks like a secret; the registry is not a secret store',
    'reg.toml:11 repos.web.env.PATH: is set by agent-runner itself',
    'reg.toml:12 repos.web.enabled: must be true or false, got "yes"',
    'reg.toml:13 repos.web.author_email: not an email address: "nobody"',
    'reg.toml:14 repos.web.user: agents never run as root',
    'reg.toml:25 repos.db.maxparallel: unknown key',
    'reg.toml:27 repos.Bad_Name: repo name "Bad_Name" is not allowed',
    'reg.toml:31 repos.nopath: path is missing',
  ]);
  t.equal(problems[1]!.fix, 'did you mean "schedule"? (see control/registry.example.toml)');
  t.equal(problems[8]!.fix, "put secrets in the repo user's home (mode 0600), never in the registry");
  t.same(
    registry.repos.map((r) => r.name),
    ['api'],
  );
});

t.test('duplicate proxy ports, users and paths across repos', async (t) => {
  const text = `[repos.a]
path = "/srv/a"
proxy_port = 700

[repos.b]
path = "/srv/a"
proxy_port = 700
user = "agent-a"
`;
  const { registry, problems } = parseRegistry(text, 'r.toml', cronScheduler);
  t.same(
    problems.map((p) => `${p.file} ${p.key}: ${p.problem}`),
    [
      'r.toml:7 repos.b.proxy_port: proxy port 700 is already used by repo "a"',
      'r.toml:8 repos.b.user: user "agent-a" is already used by repo "a"',
      'r.toml:6 repos.b.path: path "/srv/a" is already used by repo "a"',
    ],
  );
  t.same(
    registry.repos.map((r) => r.name),
    ['a'],
  );
});

t.test('a syntax error names its line', async (t) => {
  const { problems } = parseRegistry('[repos.a]\npath = "/x"\nproxy_port = [\n', 'r.toml', cronScheduler);
  t.equal(problems.length, 1);
  t.equal(problems[0]!.file, 'r.toml:4');
  t.equal(problems[0]!.key, '(syntax)');
});

t.test('readRegistry throws one UsageError listing every problem', async (t) => {
  const dir = tempDir(t);
  const file = path.join(dir, 'registry.toml');
  writeFileSync(file, '[repos.a]\nproxy_port = 1024\n');
  const error = await readRegistry({ fs: realFs, scheduler: cronScheduler }, file).catch((e: unknown) => e);
  t.ok(error instanceof UsageError);
  t.equal(
    (error as UsageError).message,
    `the registry has 2 problems:\n${file}:2: repos.a.proxy_port: must be a privileged port 1-1023, got 1024: any user, an agent too, can bind a port from 1024 up and cut the repo off from its proxy; run agent-runner provision repo a: it moves the repo to a free port from 700 up (or set one below 1024 yourself, one per repo)\n${file}:1: repos.a: path is missing; add path = "/absolute/path/of/the/checkout"`,
  );
  const missing = await readRegistry({ fs: realFs, scheduler: cronScheduler }, path.join(dir, 'none.toml')).catch(
    (e: unknown) => e,
  );
  t.match((missing as Error).message, /the registry does not exist; create it/);
  writeFileSync(file, GOOD);
  const registry = await readRegistry({ fs: realFs, scheduler: cronScheduler }, file);
  t.equal(findRepo(registry, 'api', file).user, 'svc-api');
  t.throws(() => findRepo(registry, 'nope', file), {
    message: `${file}: repos.nope: no such repo; registered repos: web, api`,
  });
});

t.test('upsertRepo adds, replaces and keeps everything else byte for byte', async (t) => {
  const added = upsertRepo(GOOD, { name: 'docs', path: '/srv/docs', allow: ['pypi.org'], env: { A: 'b c' } });
  t.ok(added.startsWith(GOOD.trimEnd()), 'the old text is untouched');
  t.equal(
    added.slice(GOOD.trimEnd().length),
    '\n\n[repos.docs]\npath = "/srv/docs"\nproxy_port = 702\nallow = ["pypi.org"]\nenv = { A = "b c" }\n',
  );
  const parsed = parseRegistry(added, 'r', cronScheduler);
  t.same(parsed.problems, []);
  t.same(
    parsed.registry.repos.map((r) => [r.name, r.proxyPort, r.user]),
    [
      ['web', 700, 'agent-web'],
      ['api', 701, 'svc-api'],
      ['docs', 702, 'agent-docs'],
    ],
  );

  const replaced = upsertRepo(added, { name: 'web', path: '/srv/web2', maxParallel: 5 });
  const again = parseRegistry(replaced, 'r', cronScheduler);
  t.same(again.problems, []);
  const web = again.registry.repos.find((r) => r.name === 'web')!;
  t.equal(web.path, '/srv/web2');
  t.equal(web.proxyPort, 700, 'an existing repo keeps its proxy port');
  t.equal(web.maxParallel, 5);
  t.same(web.allow, ['registry.npmjs.org'], 'keys not given fall back to the defaults');
  t.ok(replaced.includes('# fleet\n[defaults]'), 'comments survive');
  t.equal(
    upsertRepo('', { name: 'x', path: '/x', proxyPort: 4000, enabled: false }),
    '[repos.x]\npath = "/x"\nproxy_port = 4000\nenabled = false\n',
  );
  t.throws(() => upsertRepo('', { name: 'Bad', path: '/x' }), UsageError);
});

t.test('removeRepo removes the section and its sub-tables only', async (t) => {
  const text = `[repos.a]\npath = "/a"\nproxy_port = 700\n\n[repos.a.env]\nX = "1"\n\n# b is next\n[repos.b]\npath = "/b"\nproxy_port = 701\n`;
  t.equal(removeRepo(text, 'a'), '\n# b is next\n[repos.b]\npath = "/b"\nproxy_port = 701\n');
  t.equal(removeRepo(text, 'zzz'), text);
  t.same(
    parseRegistry(removeRepo(text, 'b'), 'r', cronScheduler).registry.repos.map((r) => [r.name, r.env]),
    [['a', { X: '1' }]],
  );
});

t.test('names and users', async (t) => {
  t.equal(defaultUserFor('web'), 'agent-web');
  t.equal(defaultUserFor('a'.repeat(24)).length, 30);
  t.ok(REPO_NAME_PATTERN.test('my-repo-2'));
  t.notOk(REPO_NAME_PATTERN.test('2repo'));
  t.notOk(REPO_NAME_PATTERN.test('a'.repeat(25)));
  t.notOk(REPO_NAME_PATTERN.test('../etc'));
});

t.test('runner_proxy_port, anonymous_fetch, gate_egress: read, validated, and unique across both kinds', async (t) => {
  const good = parseRegistry(
    '[defaults]\ngate_egress = "agent"\n\n[repos.a]\npath = "/a"\nproxy_port = 700\nrunner_proxy_port = 701\nanonymous_fetch = true\n',
    'r.toml',
    cronScheduler,
  );
  t.same(good.problems, []);
  t.match(good.registry.repos[0], { runnerProxyPort: 701, anonymousFetch: true, gateEgress: 'agent' });
  const absent = parseRegistry('[repos.a]\npath = "/a"\nproxy_port = 700\n', 'r.toml', cronScheduler).registry;
  t.match(absent.repos[0], { runnerProxyPort: undefined, anonymousFetch: false, gateEgress: 'none' }, 'the defaults');

  const bad = parseRegistry(
    '[repos.a]\npath = "/a"\nproxy_port = 700\nrunner_proxy_port = 1500\nanonymous_fetch = "yes"\ngate_egress = "all"\n',
    'r.toml',
    cronScheduler,
  ).problems;
  t.same(
    bad.map((p) => `${p.file} ${p.key}: ${p.problem}; ${p.fix}`),
    [
      'r.toml:4 repos.a.runner_proxy_port: must be a privileged port 1-1023, got 1500: any user, an agent too, can bind a port from 1024 up and cut the repo off from its proxy; run agent-runner provision repo a: it moves the repo to a free port from 700 up (or set one below 1024 yourself, one per repo)',
      'r.toml:5 repos.a.anonymous_fetch: must be true or false, got "yes"; write anonymous_fetch = true or anonymous_fetch = false',
      'r.toml:6 repos.a.gate_egress: must be "none" or "agent", got "all"; write gate_egress = "none" (the gate reaches nothing) or gate_egress = "agent" (what the agent reaches)',
    ],
  );

  const clashes = parseRegistry(
    '[repos.a]\npath = "/a"\nproxy_port = 700\nrunner_proxy_port = 700\n\n[repos.b]\npath = "/b"\nproxy_port = 701\nrunner_proxy_port = 701\n\n[repos.c]\npath = "/c"\nproxy_port = 702\nrunner_proxy_port = 703\nloopback_ports = [703]\n\n[repos.d]\npath = "/d"\nproxy_port = 703\n',
    'r.toml',
    cronScheduler,
  ).problems;
  t.same(
    clashes.map((p) => `${p.file} ${p.key}: ${p.problem}; ${p.fix}`),
    [
      'r.toml:4 repos.a.runner_proxy_port: runner proxy port 700 is already used by repo "a" as its proxy port; give every repo its own runner_proxy_port, apart from every proxy_port (or remove repos.a.runner_proxy_port: provision allocates a free one)',
      'r.toml:9 repos.b.runner_proxy_port: runner proxy port 701 is already used by repo "b" as its proxy port; give every repo its own runner_proxy_port, apart from every proxy_port (or remove repos.b.runner_proxy_port: provision allocates a free one)',
      'r.toml:19 repos.d.proxy_port: proxy port 703 is already used by repo "c" as its runner proxy port; give every repo its own proxy_port',
      'r.toml:15 repos.c.loopback_ports: port 703 is the runner proxy port of repo "c": the agent would reach the git host through it; remove 703 from loopback_ports of repo "c" (or from [defaults])',
    ],
  );
});

t.test(
  'upsert keeps runner_proxy_port and the egress keys, and skips runner ports when picking a proxy port',
  async (t) => {
    const one = upsertRepo('', {
      name: 'a',
      path: '/a',
      runnerProxyPort: 700,
      anonymousFetch: true,
      gateEgress: 'agent',
    });
    t.match(one, /^proxy_port = 701$/m, 'the runner port is taken');
    t.match(one, /^runner_proxy_port = 700$\nanonymous_fetch = true\ngate_egress = "agent"$/m);
    const again = upsertRepo(one, { name: 'a', path: '/a2' });
    t.match(again, /^proxy_port = 701\nrunner_proxy_port = 700$/m, 'an upsert without them keeps both ports');
  },
);

t.test('metrics_port: read, outside the proxy pool, distinct from every other port, off by default', async (t) => {
  const good = parseRegistry(
    '[repos.a]\npath = "/a"\nproxy_port = 700\nmetrics_port = 9470\n\n[repos.b]\npath = "/b"\nproxy_port = 701\n',
    'r.toml',
    cronScheduler,
  );
  t.same(good.problems, []);
  t.equal(good.registry.repos[0]!.metricsPort, 9470);
  t.notOk('metricsPort' in good.registry.repos[1]!, 'absent: no metrics');

  const bad = parseRegistry(
    '[repos.a]\npath = "/a"\nproxy_port = 700\nmetrics_port = 800\n\n[repos.b]\npath = "/b"\nproxy_port = 701\nmetrics_port = "9470"\n\n[repos.c]\npath = "/c"\nproxy_port = 702\nmetrics_port = 70000\n\n[defaults]\nmetrics_port = 9471\n',
    'r.toml',
    cronScheduler,
  ).problems;
  t.same(
    bad.map((p) => `${p.file} ${p.key}: ${p.problem}; ${p.fix}`),
    [
      'r.toml:17 defaults.metrics_port: "metrics_port" belongs in [repos.NAME], not in [defaults]; remove it; allowed keys here: ' +
        bad[0]!.fix.split('allowed keys here: ')[1],
      'r.toml:4 repos.a.metrics_port: must be a TCP port outside 700-1023 (where provision hands out proxy and broker ports), got 800; pick a free port from 1024 up, one per repo, e.g. metrics_port = 9470; Prometheus scrapes 127.0.0.1:PORT',
      'r.toml:9 repos.b.metrics_port: must be a TCP port outside 700-1023 (where provision hands out proxy and broker ports), got "9470"; pick a free port from 1024 up, one per repo, e.g. metrics_port = 9470; Prometheus scrapes 127.0.0.1:PORT',
      'r.toml:14 repos.c.metrics_port: must be a TCP port outside 700-1023 (where provision hands out proxy and broker ports), got 70000; pick a free port from 1024 up, one per repo, e.g. metrics_port = 9470; Prometheus scrapes 127.0.0.1:PORT',
    ],
  );

  const clashes = parseRegistry(
    '[repos.a]\npath = "/a"\nproxy_port = 600\nmetrics_port = 9470\n\n[repos.b]\npath = "/b"\nproxy_port = 701\nmetrics_port = 9470\n\n[repos.c]\npath = "/c"\nproxy_port = 702\nmetrics_port = 600\nloopback_ports = [9470]\n',
    'r.toml',
    cronScheduler,
  ).problems;
  t.same(
    clashes.map((p) => `${p.file} ${p.key}: ${p.problem}; ${p.fix}`),
    [
      'r.toml:9 repos.b.metrics_port: metrics port 9470 is already used by repo "a"; give every repo its own metrics_port, apart from every proxy, runner proxy and broker port',
      'r.toml:14 repos.c.metrics_port: metrics port 600 is already used by repo "a" as its proxy port; give every repo its own metrics_port, apart from every proxy, runner proxy and broker port',
      'r.toml:15 repos.c.loopback_ports: port 9470 is the metrics port of repo "a": repo "c"\'s agent would read root\'s metrics; remove 9470 from loopback_ports of repo "c" (or from [defaults])',
    ],
  );

  const raised = parseRegistry(
    'proxy_ports_below = 10000\n\n[repos.a]\npath = "/a"\nproxy_port = 700\nmetrics_port = 9470\n',
    'r.toml',
    cronScheduler,
  ).problems;
  t.match(
    raised.map((p) => p.problem),
    ['must be a TCP port outside 700-9999 (where provision hands out proxy and broker ports), got 9470'],
    'a raised proxy_ports_below moves the pool up',
  );

  const kept = upsertRepo('[repos.a]\npath = "/a"\nproxy_port = 700\nmetrics_port = 9470\n', {
    name: 'a',
    path: '/a',
    metricsPort: 9470,
  });
  t.match(kept, /\nmetrics_port = 9470\n/, 'an edited section keeps it');
});
