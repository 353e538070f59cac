// Proxy ports: only privileged ones, never one something else holds; the
// planner moves old unprivileged ports and refuses squatted ones; the
// registry is root-only; a repo user is one agent-runner made for the repo.
import t from 'tap';
import {
  describeHolders,
  foreignHolder,
  freeProxyPort,
  parseListeners,
  proxyPortProblems,
  squidOwns,
  type PortsState,
} from '../../backends/host/ports.js';
import { planRepo, type RepoState } from '../../backends/host/provision-plan.js';
import { emptyRepoState } from '../helpers/host-fixtures.js';
import { registryModeStep } from '../../backends/host/provision-ports.js';
import { hostLayout } from '../../backends/host/layout.js';
import {
  FIRST_PROXY_PORT,
  nextProxyPort,
  PRIVILEGED_PORT_LIMIT,
  proxyPortProblem,
  FIRST_PROXY_PORT as REGISTRY_FIRST_PORT,
} from '../../src/control/registry/proxy-ports.js';
import { parseRegistry } from '../../src/control/registry/parse.js';
import { upsertRepo } from '../../src/control/registry/edit.js';
import { accountComment, accountProblem, parseUidMin } from '../../src/control/repo-user/account.js';
import { cronScheduler } from '../../src/io/cron.js';

const SS = [
  'LISTEN 0      4096   127.0.0.1:700 0.0.0.0:* users:(("squid",pid=41,fd=9))',
  'LISTEN 0      5      0.0.0.0:701 0.0.0.0:* users:(("python3",pid=77,fd=3))',
  'LISTEN 0      128    [::]:702 [::]:* users:(("sshd",pid=5,fd=4),("sshd",pid=6,fd=4))',
  'LISTEN 0      128    127.0.0.1:2024 0.0.0.0:*',
  '',
].join('\n');

const listeners = parseListeners(SS);
const state: PortsState = { unprivilegedStart: 1024, listeners, squidPids: [40, 41] };

t.test('ss output: address, port and every holder', async (t) => {
  t.same(listeners, [
    { address: '127.0.0.1', port: 700, holders: [{ command: 'squid', pid: 41 }] },
    { address: '0.0.0.0', port: 701, holders: [{ command: 'python3', pid: 77 }] },
    {
      address: '[::]',
      port: 702,
      holders: [
        { command: 'sshd', pid: 5 },
        { command: 'sshd', pid: 6 },
      ],
    },
    { address: '127.0.0.1', port: 2024, holders: [] },
  ]);
  t.equal(describeHolders(listeners.filter((l) => l.port === 702)), 'sshd (pid 5), sshd (pid 6)');
});

t.test('ownership: only our Squid counts', async (t) => {
  t.equal(foreignHolder(700, state), undefined);
  t.ok(squidOwns(700, state));
  t.equal(foreignHolder(701, state), 'python3 (pid 77)');
  t.notOk(squidOwns(701, state));
  t.equal(foreignHolder(2024, state), 'an unknown process on 127.0.0.1', 'a holder we cannot see is not ours');
  t.equal(foreignHolder(703, state), undefined);
  t.notOk(squidOwns(703, state), 'nothing listening is not owning');
  t.notOk(squidOwns(700, { ...state, squidPids: [] }), 'a Squid that is not ours (no pid file) does not own it');
});

t.test('the one range: privileged, from FIRST_PROXY_PORT, skipping what is taken or listened on', async (t) => {
  t.equal(REGISTRY_FIRST_PORT, FIRST_PROXY_PORT, 'registry and provision share one first port');
  t.ok(FIRST_PROXY_PORT < PRIVILEGED_PORT_LIMIT);
  t.equal(proxyPortProblem(700), undefined);
  t.match(proxyPortProblem(1024)!, /not below net.ipv4.ip_unprivileged_port_start \(1024\)/);
  t.match(proxyPortProblem(800, 500)!, /not below .* \(500\)/);
  t.equal(nextProxyPort(new Set([700, 701])), 702);
  t.equal(nextProxyPort(new Set(), 600), undefined, 'no privileged port left when the sysctl is below the range');
  t.equal(freeProxyPort(new Set(), state), 703, '700-702 are listened on');
  t.same(proxyPortProblems([{ name: 'a', proxyPort: 700 }], state), []);
  t.match(
    proxyPortProblems([{ name: 'a', proxyPort: 701 }], state)[0]!,
    /repo "a": proxy port 701 is held by python3 \(pid 77\), not by agent-runner's Squid/,
  );
  t.match(
    proxyPortProblems([{ name: 'a', proxyPort: 700 }], { ...state, unprivilegedStart: 600 })[0]!,
    /sysctl -w net.ipv4.ip_unprivileged_port_start=1024/,
  );
});

const layout = hostLayout({ AGENT_RUNNER_CONFIG: '/cfg/registry.toml', AGENT_RUNNER_STATE: '/state' });
const fresh: RepoState = emptyRepoState();
const request = { name: 'web', url: 'https://example.org/web.git', base: undefined, allow: undefined };
const registryOf = (plan: ReturnType<typeof planRepo>) =>
  (plan.steps.find((step) => 'write' in step) as { write: { text: string; mode: number } } | undefined)?.write;

t.test('provision hands out a port nothing listens on', async (t) => {
  const squatted = {
    ...fresh,
    ports: {
      ...fresh.ports,
      listeners: parseListeners(
        'LISTEN 0 5 127.0.0.1:700 0.0.0.0:* users:(("python3",pid=9,fd=3))\nLISTEN 0 5 0.0.0.0:701 0.0.0.0:*\n',
      ),
    },
  };
  const plan = planRepo(request, squatted, layout);
  t.equal(parseRegistry(registryOf(plan)!.text, 'r', cronScheduler).registry.repos[0]!.proxyPort, 702);
});

t.test('an existing repo whose port a stranger holds: refused, naming port and holder', async (t) => {
  const text = '[repos.web]\npath = "/home/agent-web/web"\nproxy_port = 700\nurl = "https://example.org/web.git"\n';
  const held = {
    ...fresh,
    registryText: text,
    ports: {
      ...fresh.ports,
      listeners: parseListeners('LISTEN 0 5 127.0.0.1:700 0.0.0.0:* users:(("nc",pid=31,fd=3))\n'),
    },
  };
  t.throws(
    () => planRepo(request, held, layout),
    /repo "web": proxy port 700 is held by nc \(pid 31\), not by agent-runner's Squid; stop that service/,
  );
  const ours = {
    ...held,
    ports: {
      ...held.ports,
      listeners: parseListeners('LISTEN 0 5 127.0.0.1:700 0.0.0.0:* users:(("squid",pid=31,fd=3))\n'),
      squidPids: [30, 31],
    },
  };
  t.doesNotThrow(() => planRepo(request, ours, layout), 'held by our Squid is fine');
  t.throws(
    () => planRepo(request, { ...ours, ports: { ...ours.ports, unprivilegedStart: 500 } }, layout),
    /port 700 is not below net.ipv4.ip_unprivileged_port_start \(500\)/,
    'the live sysctl counts',
  );
});

t.test('repos still on unprivileged ports are moved, each with a line', async (t) => {
  const text =
    '[repos.web]\npath = "/home/agent-web/web"\nproxy_port = 3200\nurl = "https://example.org/web.git"\n\n[repos.api]\npath = "/srv/api"\nproxy_port = 3201\n';
  t.match(
    parseRegistry(text, 'r', cronScheduler)
      .problems.map((p) => `${p.key}: ${p.problem}; ${p.fix}`)
      .join('\n'),
    /repos.web.proxy_port: must be a privileged port 1-1023, got 3200.*; run agent-runner provision repo web: it moves the repo/,
  );
  const plan = planRepo(request, { ...fresh, registryText: text }, layout);
  const step = plan.steps.find((entry) => 'write' in entry)!;
  t.match(
    step.description,
    /proxy port of repo web moves from 3200 to 700 .*proxy port of repo api moves from 3201 to 701/,
  );
  t.same(
    parseRegistry(registryOf(plan)!.text, 'r', cronScheduler).registry.repos.map((repo) => [repo.name, repo.proxyPort]),
    [
      ['web', 700],
      ['api', 701],
    ],
  );
});

t.test('the registry is root-only: written 0600, an old 0644 file is chmodded', async (t) => {
  t.equal(registryOf(planRepo(request, fresh, layout))!.mode, 0o600);
  t.same(registryModeStep('/cfg/registry.toml', 0o100600), []);
  t.same(registryModeStep('/cfg/registry.toml', undefined), []);
  const step = registryModeStep('/cfg/registry.toml', 0o100644)[0]! as unknown as {
    description: string;
    command: { program: string; args: string[] };
  };
  t.equal(step.description, 'make /cfg/registry.toml readable by root only (mode 644 -> 600)');
  t.same([step.command.program, ...step.command.args], ['chmod', '600', '/cfg/registry.toml']);
});

t.test('a repo user must be one agent-runner made for that repo', async (t) => {
  t.equal(parseUidMin('# x\nUID_MIN\t\t\t 1000\nUID_MAX 60000\n'), 1000);
  t.equal(parseUidMin('UID_MIN 500\n'), 500);
  t.equal(parseUidMin(undefined), 1000);
  t.equal(parseUidMin('#UID_MIN 10\n'), 1000);
  t.equal(accountProblem('web', { name: 'agent-web', uid: 1500, comment: accountComment('web') }, 1000), undefined);
  t.match(
    accountProblem('web', { name: 'proxy', uid: 13, comment: 'proxy' }, 1000)!,
    /user "proxy" is a system account \(uid 13 is below UID_MIN 1000/,
  );
  t.match(accountProblem('web', { name: 'root', uid: 0, comment: 'root' }, 1000)!, /uid 0/);
  t.match(
    accountProblem('web', { name: 'alice', uid: 1001, comment: 'Alice' }, 1000)!,
    /user "alice" was not created by agent-runner for this repo \(its comment is "Alice", not "agent-runner repo web"\).*agent-runner provision repo web/,
  );
  t.match(
    accountProblem('web', { name: 'agent-api', uid: 1002, comment: accountComment('api') }, 1000)!,
    /not created by agent-runner for this repo/,
    "another repo's user is refused too",
  );
  const proxyUser = {
    ...fresh,
    registryText: '[repos.web]\npath = "/srv/web"\nuser = "proxy"\nproxy_port = 700\nurl = "x"\n',
    account: { name: 'proxy', uid: 13, gid: 13, home: '/bin', shell: '/usr/sbin/nologin', comment: 'proxy' },
  };
  t.throws(() => planRepo(request, proxyUser, layout), /repo "web": user "proxy" is a system account/);
});

t.test("registry: loopback_ports may not name a proxy port, its own or another repo's", async (t) => {
  const text =
    '[repos.a]\npath = "/a"\nproxy_port = 700\nloopback_ports = [5432, 701]\n\n[repos.b]\npath = "/b"\nproxy_port = 701\nloopback_ports = [701]\n';
  const { problems, registry } = parseRegistry(text, 'r.toml', cronScheduler);
  t.same(
    problems.map((p) => `${p.file} ${p.key}: ${p.problem}`),
    [
      'r.toml:4 repos.a.loopback_ports: port 701 is the proxy port of repo "b": repo "a" would use "b"\'s allowlist',
      'r.toml:9 repos.b.loopback_ports: port 701 is repo "b"\'s own proxy port',
    ],
  );
  t.same(registry.repos, []);
  const defaults = parseRegistry(
    '[defaults]\nloopback_ports = [700]\n\n[repos.a]\npath = "/a"\nproxy_port = 700\n',
    'r.toml',
    cronScheduler,
  ).problems;
  t.match(defaults[0]!.problem, /own proxy port/, 'a [defaults] entry counts too');
  t.equal(
    parseRegistry('[repos.a]\npath = "/a"\nproxy_port = 700\nloopback_ports = [5432]\n', 'r.toml', cronScheduler)
      .problems.length,
    0,
  );
});

t.test('upsert picks ports from the shared first port', async (t) => {
  const one = upsertRepo('', { name: 'a', path: '/a' });
  const two = upsertRepo(one, { name: 'b', path: '/b' });
  t.same(
    parseRegistry(two, 'r', cronScheduler).registry.repos.map((repo) => repo.proxyPort),
    [700, 701],
  );
});
