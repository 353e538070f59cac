// Proxy ports: only privileged ones, never one something else holds; the
// planner moves old unprivileged ports and refuses squatted ones; the
// registry is root-only; a repo user is one agent-runner made for the repo.
import t from 'tap';
import {
  describeHolders,
  describePortBudget,
  foreignHolder,
  freeProxyPort,
  morePortsFix,
  parseListeners,
  proxyPortBudget,
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
  proxyPortPool,
  proxyPortProblem,
  FIRST_PROXY_PORT as REGISTRY_FIRST_PORT,
} from '../../src/control/registry/proxy-ports.js';
import { parseRegistry, proxyPortsBelowOf } from '../../src/control/registry/parse.js';
import { UsageError } from '../../src/errors.js';
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
  t.equal(
    nextProxyPort(new Set(), proxyPortPool(600)),
    undefined,
    'no privileged port left when the sysctl is below the range',
  );
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
  const text =
    '[repos.web]\npath = "/home/agent-web/web"\nproxy_port = 700\nrunner_proxy_port = 701\nurl = "https://example.org/web.git"\n';
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
    /proxy port of repo web moves from 3200 to 700 .*runner proxy port of repo web: 701 .*proxy port of repo api moves from 3201 to 702 .*runner proxy port of repo api: 703/,
  );
  t.same(
    parseRegistry(registryOf(plan)!.text, 'r', cronScheduler).registry.repos.map((repo) => [
      repo.name,
      repo.proxyPort,
      repo.runnerProxyPort,
    ]),
    [
      ['web', 700, 701],
      ['api', 702, 703],
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

t.test('the pool is the repo limit: 324 ports on a default host, counted, and the fix when none is left', async (t) => {
  t.same(proxyPortPool(), { first: 700, below: 1024, size: 324 }, 'a default host: 700-1023');
  t.same(
    proxyPortPool(4096),
    { first: 700, below: 1024, size: 324 },
    'a raised sysctl alone: the registry still says 1024',
  );
  t.same(
    proxyPortPool(1024, 4096),
    { first: 700, below: 1024, size: 324 },
    "the registry's word alone: the kernel says 1024",
  );
  t.same(proxyPortPool(2048, 2048), { first: 700, below: 2048, size: 1348 }, 'both raised');
  t.equal(freeProxyPort(new Set(), { listeners: [], unprivilegedStart: 2048 }, 2048), 700);
  const fullUpTo = (below: number) => new Set(Array.from({ length: below - 700 }, (_, index) => 700 + index));
  t.equal(freeProxyPort(fullUpTo(1024), { listeners: [], unprivilegedStart: 2048 }, 2048), 1024, 'on past 1023');
  t.equal(freeProxyPort(fullUpTo(1024), { listeners: [], unprivilegedStart: 1024 }), undefined);

  const budget = proxyPortBudget(new Set([700, 705, 3200]), state);
  t.same(
    { left: budget.left, byRepos: budget.byRepos, byOthers: budget.byOthers },
    { left: 320, byRepos: 2, byOthers: 2 },
    '700 is a repo port and a listener at once: counted once; 3200 is not in the pool',
  );
  t.equal(
    describePortBudget(budget),
    "320 of 324 proxy ports left (700-1023, below net.ipv4.ip_unprivileged_port_start 1024; held: 2 by repos, 2 by other listeners): room for 160 more repos at 2 ports each (the agent's and the runner's)",
  );

  const full = proxyPortBudget(fullUpTo(1024), { listeners: [], unprivilegedStart: 1024 });
  t.equal(full.left, 0);
  const fix = morePortsFix(full, '/etc/agent-runner/registry.toml');
  t.match(fix, /where you accept that on this host every port below 2048 needs root to bind/);
  t.match(fix, /sysctl -w net.ipv4.ip_unprivileged_port_start=2048 and make it last \(echo .* > \/etc\/sysctl.d\//);
  t.match(fix, /add proxy_ports_below = 2048 at the top of \/etc\/agent-runner\/registry.toml/);
  t.match(fix, /or provision the repo on another host/);
  t.match(
    morePortsFix({ ...full, live: 4096 }, 'r.toml'),
    /^the kernel already keeps ports below 4096 for root: add proxy_ports_below = 4096 at the top of r.toml/,
  );
  t.match(
    morePortsFix({ ...full, live: 702 }, 'r.toml'),
    /^net.ipv4.ip_unprivileged_port_start is 702, under the kernel's default 1024, so ports 702-1023 are open to every user: set it back: sysctl -w net.ipv4.ip_unprivileged_port_start=1024/,
  );
  t.match(
    morePortsFix({ ...full, declared: 4096 }, 'r.toml'),
    /^r.toml says proxy_ports_below = 4096 but the kernel's limit is 1024: sysctl -w net.ipv4.ip_unprivileged_port_start=4096/,
  );
});

t.test('provision says how many ports are left, and refuses with the fix when none is', async (t) => {
  const plan = planRepo(request, fresh, layout);
  t.match(
    plan.proxyPorts,
    { left: 322, byRepos: 2, pool: { first: 700, below: 1024, size: 324 } },
    'after this repo: its agent port and its runner port',
  );
  t.equal(plan.repo!.runnerProxyPort, 701);
  // Every port of the pool but one taken by registered repos, two each (one more held by another service).
  const sections = Array.from(
    { length: 161 },
    (_, index) =>
      `[repos.r${index}]\npath = "/srv/r${index}"\nproxy_port = ${700 + 2 * index}\nrunner_proxy_port = ${701 + 2 * index}\n`,
  );
  const busy: RepoState = {
    ...fresh,
    registryText: sections.join('\n'),
    ports: {
      ...fresh.ports,
      listeners: parseListeners('LISTEN 0 5 0.0.0.0:1022 0.0.0.0:* users:(("cupsd",pid=8,fd=3))\n'),
    },
  };
  t.throws(
    () => planRepo(request, busy, layout),
    new RegExp(
      "/cfg/registry.toml: only one proxy port is left, and a repo takes two \\(its agent's and its runner's\\) for repo \"web\": 1 of 324 proxy ports left \\(700-1023, below net.ipv4.ip_unprivileged_port_start 1024; held: 322 by repos, 1 by other listeners\\): room for 0 more repos at 2 ports each \\(the agent's and the runner's\\); " +
        'a proxy port must be below net.ipv4.ip_unprivileged_port_start so that no agent can bind it. Fix: where you accept .*sysctl -w net.ipv4.ip_unprivileged_port_start=2048.*proxy_ports_below = 2048 at the top of /cfg/registry.toml; or provision the repo on another host',
    ),
  );
  t.throws(() => planRepo(request, busy, layout), UsageError, 'a usage error: exit 2');
  // The operator raises both: the next repo gets 1024.
  const raised: RepoState = {
    ...busy,
    registryText: `proxy_ports_below = 2048\n\n${busy.registryText}`,
    ports: { ...busy.ports, unprivilegedStart: 2048 },
  };
  const more = planRepo(request, raised, layout);
  t.equal(more.repo!.proxyPort, 1023);
  t.equal(more.repo!.runnerProxyPort, 1024);
  t.match(more.proxyPorts, { left: 1023, pool: { below: 2048, size: 1348 } });
  t.match(registryOf(more)!.text, /^proxy_ports_below = 2048\n/, 'the declaration is kept');
  // The sysctl lost on a reboot, the registry still raised: every port from 1024 up is refused, with the way back.
  const withWeb = registryOf(more)!.text;
  t.throws(
    () =>
      planRepo(
        request,
        { ...raised, registryText: withWeb, ports: { ...raised.ports, unprivilegedStart: 1024 } },
        layout,
      ),
    /repo "web": port 1024 is not below net.ipv4.ip_unprivileged_port_start \(1024\).*set it to what proxy_ports_below in the registry says: sysctl -w net.ipv4.ip_unprivileged_port_start=2048/,
  );
});

t.test('registry: proxy_ports_below moves the limit, and only up', async (t) => {
  const repo = (port: number) => `[repos.a]\npath = "/a"\nproxy_port = ${port}\n`;
  t.match(parseRegistry(repo(1500), 'r.toml', cronScheduler).problems[0], {
    file: 'r.toml:3',
    key: 'repos.a.proxy_port',
    problem: /must be a privileged port 1-1023, got 1500/,
  });
  const raised = parseRegistry(`proxy_ports_below = 2048\n${repo(1500)}`, 'r.toml', cronScheduler);
  t.same(raised.problems, []);
  t.equal(raised.registry.proxyPortsBelow, 2048);
  t.equal(proxyPortsBelowOf(raised.registry), 2048);
  t.equal(proxyPortsBelowOf(parseRegistry(repo(700), 'r', cronScheduler).registry), 1024, 'the default');
  t.match(parseRegistry(`proxy_ports_below = 2048\n${repo(2048)}`, 'r.toml', cronScheduler).problems[0], {
    problem: /must be a privileged port 1-2047 \(proxy_ports_below = 2048\), got 2048/,
  });
  for (const bad of ['512', '70000', '"2048"', '1500.5'])
    t.match(
      parseRegistry(`proxy_ports_below = ${bad}\n${repo(700)}`, 'r.toml', cronScheduler).problems[0],
      {
        file: 'r.toml:1',
        key: 'proxy_ports_below',
        problem: /must be an integer 1024-65535/,
        fix: /sysctl -n net.ipv4.ip_unprivileged_port_start/,
      },
      bad,
    );
  t.match(parseRegistry(`proxy_ports_belo = 2048\n${repo(700)}`, 'r.toml', cronScheduler).problems[0], {
    problem: 'unknown top-level key',
    fix: /only proxy_ports_below, \[defaults\] and \[repos.NAME\]/,
  });
});
