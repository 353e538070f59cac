// The registry's broker keys: broker_port and [repos.NAME.broker] over
// [defaults.broker], every problem at its own line, keys never inline,
// provider hosts out of a brokered repo's allowlist, and the upsert round trip.
import t from 'tap';
import { parseRegistry } from '../../src/control/registry/parse.js';
import { upsertRepo } from '../../src/control/registry/edit.js';
import { DEFAULT_MAX_BODY_BYTES } from '../../src/broker/config.js';
import { BROKER_ACCOUNT } from '../../src/control/broker/index.js';
import { cronScheduler } from '../../src/io/cron.js';

const parse = (text: string) => parseRegistry(text, 'r.toml', cronScheduler);
const lines = (text: string) => parse(text).problems.map((p) => `${p.file} ${p.key}: ${p.problem}; ${p.fix}`);

t.test('a broker from [defaults.broker] and the repo table, key by key, with the broker defaults', async (t) => {
  const { registry, problems } = parse(`[defaults.broker]
anthropic_key_file = "/etc/agent-runner/keys/all-anthropic"
openai_key_file = "/etc/agent-runner/keys/all-openai"
max_body_bytes = 4096

[repos.web]
path = "/web"
proxy_port = 700
runner_proxy_port = 701
broker_port = 702

[repos.web.broker]
anthropic_key_file = "/etc/agent-runner/keys/web-anthropic"
anthropic_key_kind = "subscription-token"
anthropic_origin = "http://127.0.0.1:9000"
proxy = "http://127.0.0.1:701"

[repos.api]
path = "/api"
proxy_port = 703
broker_port = 704
`);
  t.same(problems, []);
  const [web, api] = registry.repos;
  t.same(web!.broker, {
    port: 702,
    providers: {
      anthropic: {
        origin: 'http://127.0.0.1:9000',
        keyFile: '/etc/agent-runner/keys/web-anthropic',
        keyKind: 'subscription-token',
      },
      openai: { origin: 'https://api.openai.com', keyFile: '/etc/agent-runner/keys/all-openai', keyKind: 'api-key' },
    },
    maxBodyBytes: 4096,
    proxy: 'http://127.0.0.1:701',
  });
  t.same(api!.broker, {
    port: 704,
    providers: {
      anthropic: {
        origin: 'https://api.anthropic.com',
        keyFile: '/etc/agent-runner/keys/all-anthropic',
        keyKind: 'api-key',
      },
      openai: { origin: 'https://api.openai.com', keyFile: '/etc/agent-runner/keys/all-openai', keyKind: 'api-key' },
    },
    maxBodyBytes: 4096,
  });
  const own = parse('[repos.own]\npath = "/own"\nproxy_port = 705\n');
  t.same(own.problems, []);
  t.equal(own.registry.repos[0]!.broker, undefined, 'no key file: no broker, and no broker_port needed');
  t.equal(
    parse('[repos.a]\npath = "/a"\nproxy_port = 700\n\n[repos.a.broker]\nopenai_key_file = "/k"\n').registry.repos
      .length,
    0,
  );
  const alone = parse('[repos.a]\npath = "/a"\nproxy_port = 700\nbroker_port = 701\n').registry.repos[0]!;
  t.equal(alone.broker, undefined, 'broker_port without a key file: no broker');
  const body = parse(
    '[repos.a]\npath = "/a"\nproxy_port = 700\nbroker_port = 701\nbroker = { openai_key_file = "/k" }\n',
  ).registry.repos[0]!;
  t.equal(body.broker?.maxBodyBytes, DEFAULT_MAX_BODY_BYTES, 'an inline table reads the same');
});

t.test('every broker problem at once, each at its own line', async (t) => {
  const cases: [string, string, string[]][] = [
    [
      'a repo with a key file and no broker_port',
      '[defaults.broker]\nanthropic_key_file = "/k/a"\n\n[repos.a]\npath = "/a"\nproxy_port = 700\n',
      [
        'r.toml:4 repos.a.broker_port: broker_port is missing: a key file applies to this repo, so its agents reach their model through a broker; run agent-runner provision repo a (it allocates a free privileged port), or add broker_port = <a free port below the proxy port limit, one per repo>',
      ],
    ],
    [
      'an unprivileged broker_port, and one in [defaults]',
      '[defaults]\nbroker_port = 800\n\n[repos.a]\npath = "/a"\nproxy_port = 700\nbroker_port = 2000\nbroker = { openai_key_file = "/k" }\n',
      [
        'r.toml:2 defaults.broker_port: "broker_port" belongs in [repos.NAME], not in [defaults]; remove it; allowed keys here: broker, notify, anonymous_fetch, gate_egress, base, schedule, remote_poll_sec, max_parallel, allow, loopback_ports, toolchain_path, env, enabled, author_name, author_email, promote, auto_merge, github_api_url, retention_days, review, webhook_port, webhook_secret_file, backend, kubernetes, tasks_max, memory_max, cpu_weight, daily_usd, daily_tokens, task_usd, rate_limit_wait_min_sec, rate_limit_wait_max_sec',
        "r.toml:7 repos.a.broker_port: must be a privileged port 1-1023, got 2000: any user, an agent too, can bind a port from 1024 up and pose as the repo's broker, collecting its agents' capability tokens; run agent-runner provision repo a: it moves the repo to a free port from 700 up (or set one below 1024 yourself, one per repo)",
      ],
    ],
    [
      'every bad key of a broker table',
      `[repos.a]
path = "/a"
proxy_port = 700
broker_port = 701

[repos.a.broker]
anthropic_key_file = "keys/a"
anthropic_key_kind = "oauth"
anthropic_origin = "https://api.anthropic.com/v1"
openai_key_file = 7
openai_origin = "ftp://x"
max_body_bytes = 10
proxy = "http://user:pw@127.0.0.1:3128"
anthropic_kye_file = "/k"
`,
      [
        'r.toml:7 repos.a.broker.anthropic_key_file: must be an absolute path, got "keys/a"; write the full path of the key file, e.g. anthropic_key_file = "/etc/agent-runner/keys/a-anthropic"',
        'r.toml:8 repos.a.broker.anthropic_key_kind: must be "api-key" or "subscription-token", got "oauth"; write anthropic_key_kind = "api-key" (an API key, the documented path and the default) or "subscription-token" (a claude setup-token, opt-in)',
        'r.toml:9 repos.a.broker.anthropic_origin: anthropic_origin https://api.anthropic.com/v1 must be scheme://host[:port] and nothing more; write scheme://host[:port], e.g. anthropic_origin = "https://api.anthropic.com" (the default: remove the key)',
        'r.toml:10 repos.a.broker.openai_key_file: must be the path of a key file; e.g. openai_key_file = "/etc/agent-runner/keys/a-openai"',
        'r.toml:11 repos.a.broker.openai_origin: openai_origin ftp://x must be http:// or https://; write scheme://host[:port], e.g. openai_origin = "https://api.openai.com" (the default: remove the key)',
        `r.toml:12 repos.a.broker.max_body_bytes: must be a whole number of bytes 1024-268435456, got 10; e.g. max_body_bytes = ${DEFAULT_MAX_BODY_BYTES} (the default, Anthropic's own limit: remove the key)`,
        "r.toml:13 repos.a.broker.proxy: proxy http://user:pw@127.0.0.1:3128 must not carry a user or password; write the broker's egress proxy as http://127.0.0.1:PORT, or remove the key (the broker then connects to each origin directly)",
        'r.toml:14 repos.a.broker.anthropic_kye_file: unknown key; remove it; allowed keys in [repos.a.broker]: anthropic_key_file, anthropic_key_kind, anthropic_origin, openai_key_file, openai_origin, max_body_bytes, proxy',
      ],
    ],
    [
      'a [defaults.broker] problem at its line',
      '[defaults.broker]\nopenai_origin = "nope"\n',
      [
        'r.toml:2 defaults.broker.openai_origin: openai_origin "nope" is not a URL; write scheme://host[:port], e.g. openai_origin = "https://api.openai.com" (the default: remove the key)',
      ],
    ],
    [
      'a broker that is not a table',
      '[repos.a]\npath = "/a"\nproxy_port = 700\nbroker = "/k"\n',
      ['r.toml:4 repos.a.broker: must be a table; write it as a [repos.a.broker] section'],
    ],
    [
      "broker_port shared with another repo's proxy port and another broker",
      '[defaults.broker]\nopenai_key_file = "/k"\n\n[repos.a]\npath = "/a"\nproxy_port = 700\nbroker_port = 701\n\n[repos.b]\npath = "/b"\nproxy_port = 701\nbroker_port = 702\n\n[repos.c]\npath = "/c"\nproxy_port = 703\nbroker_port = 702\nloopback_ports = [701]\n',
      [
        'r.toml:11 repos.b.proxy_port: proxy port 701 is already used by repo "a" as its broker port; give every repo its own proxy_port',
        'r.toml:17 repos.c.broker_port: broker port 702 is already used by repo "b"; give every repo its own broker_port, apart from every proxy_port and runner_proxy_port (or remove repos.c.broker_port: provision allocates a free one)',
        'r.toml:18 repos.c.loopback_ports: port 701 is the broker port of repo "a": repo "c"\'s agent would reach another repo\'s broker; remove 701 from loopback_ports of repo "c" (or from [defaults])',
      ],
    ],
  ];
  for (const [name, text, want] of cases) t.same(lines(text), want, name);
});

t.test('a key written in the registry is refused, and never repeated in the message', async (t) => {
  const fix = (table: string, name: string) =>
    `put the key in a file owned by ${BROKER_ACCOUNT}, mode 0600 (e.g. /etc/agent-runner/keys/${name}-anthropic), and name it with anthropic_key_file or openai_key_file in [${table}.broker]; remove this line`;
  const found = lines(`[defaults]
anthropic_key = "sk-ant-api03-secretsecretsecret"

[defaults.broker]
openai_api_key = "sk-proj-secretsecret"

[repos.a]
path = "/a"
proxy_port = 700
broker_port = 701
api_key = "x"

[repos.a.broker]
anthropic_key_file = "sk-ant-api03-secretsecretsecret"
openai_key_file = "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"
`);
  t.same(found, [
    `r.toml:2 defaults.anthropic_key: keys are never written in the registry; ${fix('defaults', 'NAME')}`,
    `r.toml:5 defaults.broker.openai_api_key: keys are never written in the registry; ${fix('defaults', 'NAME')}`,
    `r.toml:11 repos.a.api_key: keys are never written in the registry; ${fix('repos.a', 'a')}`,
    `r.toml:14 repos.a.broker.anthropic_key_file: holds what looks like a key, not a path: keys are never written in the registry; ${fix('repos.a', 'a')}`,
    `r.toml:15 repos.a.broker.openai_key_file: holds what looks like a key, not a path: keys are never written in the registry; ${fix('repos.a', 'a')}`,
  ]);
  t.notOk(
    found.some((line) => line.includes('secret') || line.includes('AbCdEf')),
    'no key in any message',
  );
});

t.test('a repo with a broker may not allow its providers hosts; one without keeps them', async (t) => {
  const text = `[defaults]
allow = [".openai.com"]

[repos.a]
path = "/a"
proxy_port = 700
broker_port = 701
allow = ["registry.npmjs.org", "api.anthropic.com", "fake.example.com"]

[repos.a.broker]
anthropic_key_file = "/k/a"
openai_key_file = "/k/o"
openai_origin = "https://fake.example.com"

[repos.b]
path = "/b"
proxy_port = 702
allow = ["api.anthropic.com"]
`;
  t.same(lines(text), [
    'r.toml:8 repos.a.allow: "api.anthropic.com" is the host of the anthropic origin https://api.anthropic.com, and repo "a" has a broker: its agents reach their model through the broker on 127.0.0.1:701, never directly; remove "api.anthropic.com" from repos.a.allow',
    'r.toml:8 repos.a.allow: "fake.example.com" is the host of the openai origin https://fake.example.com, and repo "a" has a broker: its agents reach their model through the broker on 127.0.0.1:701, never directly; remove "fake.example.com" from repos.a.allow',
  ]);
  const fromDefaults = text.replace('openai_origin = "https://fake.example.com"\n', '');
  t.same(lines(fromDefaults), [
    'r.toml:2 repos.a.allow: ".openai.com" covers api.openai.com, which is the host of the openai origin https://api.openai.com, and repo "a" has a broker: its agents reach their model through the broker on 127.0.0.1:701, never directly; remove ".openai.com" from allow in [defaults] (list it in the [repos.NAME] allow of repos without a broker, whose agents use their own logins)',
    'r.toml:8 repos.a.allow: "api.anthropic.com" is the host of the anthropic origin https://api.anthropic.com, and repo "a" has a broker: its agents reach their model through the broker on 127.0.0.1:701, never directly; remove "api.anthropic.com" from repos.a.allow',
  ]);
  const valid = parse(fromDefaults.replace(', "api.anthropic.com"', '').replace('[".openai.com"]', '[]'));
  t.same(valid.problems, []);
  t.same(
    valid.registry.repos.map((repo) => [repo.name, repo.allow]),
    [
      ['a', ['registry.npmjs.org', 'fake.example.com']],
      ['b', ['api.anthropic.com']],
    ],
    'repo b, without a broker, keeps its provider host',
  );
});

t.test('upsertRepo keeps broker_port and the broker table: the round trip parses to the same repo', async (t) => {
  const text = `[defaults.broker]
openai_key_file = "/etc/agent-runner/keys/all-openai"

[repos.web]
path = "/web"
proxy_port = 700
broker_port = 702
broker = { anthropic_key_file = "/k/web", anthropic_key_kind = "subscription-token", max_body_bytes = 2048 }

[repos.api]
path = "/api"
proxy_port = 703
broker_port = 704
`;
  const before = parse(text);
  t.same(before.problems, []);
  const again = upsertRepo(text, { name: 'web', path: '/web', maxParallel: 4 });
  t.match(again, /^broker_port = 702$/m);
  t.match(
    again,
    /^\[repos\.web\.broker\]\nanthropic_key_file = "\/k\/web"\nanthropic_key_kind = "subscription-token"\nmax_body_bytes = 2048$/m,
  );
  const after = parse(again);
  t.same(after.problems, []);
  t.same(after.registry.repos[0], { ...before.registry.repos[0], maxParallel: 4 });
  t.same(after.registry.repos[1], before.registry.repos[1], 'the next repo is untouched');
  t.equal(upsertRepo(again, { name: 'web', path: '/web', maxParallel: 4 }), again, 'a second upsert changes nothing');
  const fresh = upsertRepo(text, { name: 'new', path: '/new' });
  t.match(fresh, /\[repos\.new\]\npath = "\/new"\nproxy_port = 701\n/, 'a new repo skips the broker ports');
  const moved = upsertRepo(text, { name: 'web', path: '/web', brokerPort: 705, broker: { openai_key_file: '/k/o' } });
  t.match(parse(moved).registry.repos[0]!.broker, { port: 705, providers: { openai: { keyFile: '/k/o' } } });
});
