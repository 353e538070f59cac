// squid.conf and the allowlists for two repos, text asserted exactly, and
// the allowlist validator.
import t from 'tap';
import { squidConfig, squidProblems } from '../../backends/host/squid-config.js';
import { aRepo } from '../helpers/host-fixtures.js';

const layout = {
  configFile: '/etc/agent-runner/squid.conf',
  allowlistDir: '/etc/agent-runner/allow',
  stateDir: '/var/lib/agent-runner/squid',
};
const alpha = aRepo('alpha', { proxyPort: 700, allow: ['GitHub.com', '.npmjs.org'] });
const beta = aRepo('beta', { proxyPort: 701, allow: [] });

t.test('two repos', async (t) => {
  const rendered = squidConfig([beta, alpha], layout);
  t.equal(rendered.configFile, '/etc/agent-runner/squid.conf');
  t.equal(
    rendered.config,
    `# agent-runner allowlist proxy. Generated from the registry by
# \`agent-runner provision\`; edits here are overwritten.
# Two ports per repo: the port a request arrives on names the repo and the
# identity, and only that list applies: the agent's (the repo's allow, not
# the git host) or the runner's (the git host alone). nftables lets each
# identity reach only its own port.

pid_filename /var/lib/agent-runner/squid/squid.pid
cache_log /var/lib/agent-runner/squid/cache.log
logformat agent_runner %ts.%03tu repo=%{repo}note client=%>a:%>p status=%Ss/%03>Hs bytes=%<st method=%rm url=%ru upstream=%<a identity=%{identity}note
access_log stdio:/var/lib/agent-runner/squid/access.log agent_runner
coredump_dir /var/lib/agent-runner/squid
cache_effective_user proxy
visible_hostname agent-runner

# No cache and no side channels: a pure filtering forwarder.
cache deny all
cache_mem 0 MB
pinger_enable off
icp_port 0
htcp_port 0
snmp_port 0
forwarded_for delete
httpd_suppress_version_string on

acl Safe_ports port 80 443
acl SSL_ports port 443
acl CONNECT method CONNECT
acl to_private dst 0.0.0.0/8 10.0.0.0/8 100.64.0.0/10 127.0.0.0/8 169.254.0.0/16 172.16.0.0/12 192.168.0.0/16 ::1 fc00::/7 fe80::/10

# repo alpha (user agent-alpha): the agent's port
http_port 127.0.0.1:700 name=alpha
acl repo_alpha myportname alpha
acl allow_alpha dstdomain -n "/etc/agent-runner/allow/alpha.txt"
note repo alpha repo_alpha
note identity agent repo_alpha

# repo beta (user agent-beta): the agent's port
http_port 127.0.0.1:701 name=beta
acl repo_beta myportname beta
acl allow_beta dstdomain -n "/etc/agent-runner/allow/beta.txt"
note repo beta repo_beta
note identity agent repo_beta

# Order matters: refusals first, then one allow per repo (its port, its
# list, and never a private destination), then deny.
http_access deny manager
http_access deny !Safe_ports
http_access deny CONNECT !SSL_ports
http_access allow repo_alpha allow_alpha !to_private
http_access allow repo_beta allow_beta !to_private
http_access deny all
`,
  );
  t.same(rendered.allowlists, [
    {
      path: '/etc/agent-runner/allow/alpha.txt',
      text: '# repo alpha: domains its agents may reach (from the registry)\ngithub.com\n.npmjs.org\n',
    },
    {
      path: '/etc/agent-runner/allow/beta.txt',
      text: '# repo beta: domains its agents may reach (from the registry)\n',
    },
  ]);
});

t.test('hosts_file and effective user are options', async (t) => {
  const rendered = squidConfig([alpha], layout, { hostsFile: '/tmp/hosts', effectiveUser: 'nobody' });
  t.match(rendered.config, /\ncache_effective_user nobody\nvisible_hostname agent-runner\nhosts_file \/tmp\/hosts\n/);
});

t.test('allowlist problems, all at once', async (t) => {
  const bad = aRepo('bad', {
    proxyPort: 700,
    allow: [
      'github.com',
      '10.0.0.1',
      'no_underscores.com',
      'localhost',
      'www.example.org',
      '.example.org',
      'github.com',
    ],
  });
  t.same(
    squidProblems([bad, beta, aRepo('gamma', { proxyPort: 701 })], 'registry.toml').map(
      (p) => `${p.key}: ${p.problem}`,
    ),
    [
      'repos.bad.allow[1]: "10.0.0.1" is not a domain name',
      'repos.bad.allow[2]: "no_underscores.com" is not a domain name',
      'repos.bad.allow[3]: "localhost" is not a domain name',
      'repos.bad.allow[4]: "www.example.org" is already covered by ".example.org"',
      'repos.bad.allow[6]: "github.com" is already covered by "github.com"',
      'repos.gamma.proxy_port: port 701 is also the proxy port of "beta"',
    ],
  );
  t.same(squidProblems([alpha, beta], 'registry.toml'), []);
  t.same(
    squidProblems([alpha, aRepo('delta', { proxyPort: 702, runnerProxyPort: 700 })], 'r').map(
      (p) => `${p.key}: ${p.problem}`,
    ),
    ['repos.delta.runner_proxy_port: port 700 is also the proxy port of "alpha"'],
    'a runner port counts with the proxy ports',
  );
  t.same(
    squidProblems([aRepo('x', { allow: ['example.org', '.example.org'] })], 'r').map((p) => p.problem),
    ['"example.org" is already covered by ".example.org"'],
  );
});

t.test("the runner's port: the git host alone; the agent's list without it", async (t) => {
  const web = aRepo('web', {
    proxyPort: 700,
    runnerProxyPort: 701,
    url: 'git@github.com:o/web.git',
    allow: ['github.com', 'registry.npmjs.org'],
  });
  const local = aRepo('local', { proxyPort: 702, runnerProxyPort: 703, url: undefined, allow: ['pypi.org'] });
  const rendered = squidConfig([web, local], layout);
  t.match(
    rendered.config,
    `# repo web: the runner's port, the git host alone
http_port 127.0.0.1:701 name=web.runner
acl runner_web myportname web.runner
acl runnerallow_web dstdomain -n "/etc/agent-runner/allow/web.runner.txt"
note repo web runner_web
note identity runner runner_web
`,
  );
  t.match(rendered.config, 'http_access allow runner_web runnerallow_web !to_private\n');
  t.same(rendered.allowlists, [
    {
      path: '/etc/agent-runner/allow/local.txt',
      text: '# repo local: domains its agents may reach (from the registry)\npypi.org\n',
    },
    {
      path: '/etc/agent-runner/allow/local.runner.txt',
      text: "# repo local: the git host its runner may reach (from the registry's url)\n",
    },
    {
      path: '/etc/agent-runner/allow/web.txt',
      text: '# repo web: domains its agents may reach (from the registry)\nregistry.npmjs.org\n',
    },
    {
      path: '/etc/agent-runner/allow/web.runner.txt',
      text: "# repo web: the git host its runner may reach (from the registry's url)\ngithub.com\napi.github.com\n",
    },
  ]);
  t.notMatch(rendered.config, /githost_/, 'nothing left on the list covers the git host: no deny needed');

  const covered = squidConfig([{ ...web, allow: ['.github.com'] }], layout);
  t.match(
    covered.config,
    /acl githost_web dstdomain -n github.com\n[^]*http_access deny CONNECT !SSL_ports\nhttp_access deny repo_web githost_web\nhttp_access allow repo_web allow_web/,
    '".github.com" still covers the git host: denied on the agent port before the list',
  );
  const anonymous = squidConfig([{ ...web, anonymousFetch: true }], layout);
  t.match(
    anonymous.allowlists[0]!.text,
    /\ngithub\.com\nregistry\.npmjs\.org\n$/,
    'anonymous_fetch: the agent keeps it',
  );
  const unallocated = squidConfig([{ ...web, runnerProxyPort: undefined }], layout);
  t.notMatch(unallocated.config, /myportname web.runner/, 'no runner_proxy_port yet: no runner port at all');
});
