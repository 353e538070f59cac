// The proxy port pool is the host's repo limit, tried for real inside a
// network namespace: with ports 700-1021 taken (by listeners of other
// services, which provision skips as it skips other repos' ports),
// provision gives the next repo the last two privileged ports (its agent's
// and its runner's) and says none is left; the one after is refused (exit 2)
// with the fix, and nothing of it is made; once the operator raises
// net.ipv4.ip_unprivileged_port_start (in this namespace only: it is per
// network namespace) and says so in the registry (proxy_ports_below), the
// same command gives it ports 1024 and 1025 and Squid serves them there,
// where no agent can bind.
import t from 'tap';
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { cli } from '../helpers/in-process-cli.js';
import { gitDaemon } from '../helpers/git-daemon.js';
import { systemTestMayRun } from '../helpers/system.js';
import { originAndClone, tempDir } from '../helpers/temp.js';
import { killSquidByPidFile, netns, uniqueName } from '../helpers/netns.js';
import { squidInstanceInNetns } from '../../backends/host/squid-config.js';
import { defaultUserFor, parseRegistry } from '../../src/control/registry/parse.js';
import { cronScheduler } from '../../src/io/cron.js';
import { useBrokerAccount } from '../helpers/broker-account.js';

/** Ports other services hold in the namespace before the test's repos come: 700 up to this one, not included. */
const HELD_BELOW = 1022;

/** Listens on every port from argv[1] to argv[2] - 1 and says "ready" once all are held. */
const HOLD_PORTS = `
import socket, sys, time
held = []
for port in range(int(sys.argv[1]), int(sys.argv[2])):
    s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", port)); s.listen(1); held.append(s)
print("ready", flush=True)
time.sleep(3600)
`;
import { removeRepoAccounts } from '../helpers/provision-fixture.js';

if (systemTestMayRun(t, ['ip', 'nft', 'squid', 'setpriv', 'useradd', 'git', 'sysctl', 'python3'])) {
  // provision host makes the broker's account: it is shared with the other system tests that need it.
  useBrokerAccount(t);
  const ns = netns(t);
  const root = tempDir(t, 'agent-runner-port-pool-');
  chmodSync(root, 0o755);
  const env = {
    AGENT_RUNNER_CONFIG: path.join(root, 'etc', 'registry.toml'),
    AGENT_RUNNER_STATE: path.join(root, 'state'),
    PATH: process.env.PATH ?? '/usr/bin:/bin',
  };
  const { origin } = originAndClone(t, {
    'README.md': '# demo\n',
    'backlog/config.yml': 'project_name: "demo"\nstatuses: ["To Do", "In Progress", "Done"]\n',
  });
  const daemon = gitDaemon(t, path.dirname(origin));
  const url = daemon.url('origin.git');
  const last = uniqueName('l');
  const refused = uniqueName('r');
  t.teardown(() => {
    killSquidByPidFile(path.join(root, 'state', 'squid', 'squid.pid'), squidInstanceInNetns(ns.name));
    for (const name of [last, refused]) removeRepoAccounts(defaultUserFor(name));
  });
  const provision = (name: string, json = false) =>
    cli(env, ['provision', 'repo', name, '--url', url, '--netns', ns.name, ...(json ? ['--json'] : [])]);
  const registryText = () => readFileSync(env.AGENT_RUNNER_CONFIG, 'utf8');
  const repoOf = (name: string) =>
    parseRegistry(registryText(), 'r', cronScheduler).registry.repos.find((repo) => repo.name === name);
  const portOf = (name: string) => repoOf(name)?.proxyPort;
  const runnerPortOf = (name: string) => repoOf(name)?.runnerProxyPort;
  const unprivilegedStart = (value: number) => {
    const set = ns.exec(['sysctl', '-w', `net.ipv4.ip_unprivileged_port_start=${value}`]);
    if (set.status !== 0) throw new Error(set.stderr);
  };

  t.before(async () => {
    await daemon.ready();
    unprivilegedStart(1024);
    const host = await cli(env, ['provision', 'host']);
    if (host.code !== 0) throw new Error(host.err);
    const holder = ns.start(['python3', '-c', HOLD_PORTS, '700', String(HELD_BELOW)]);
    await new Promise<void>((resolve, reject) => {
      holder.stdout!.on('data', (chunk: Buffer) => (String(chunk).includes('ready') ? resolve() : undefined));
      holder.on('exit', (code) => reject(new Error(`the port holder exited ${code}`)));
    });
  });

  t.test('the last two privileged ports go to the next repo; provision says none is left', async (t) => {
    const result = await provision(last, true);
    t.equal(result.code, 0, result.err);
    t.equal(portOf(last), 1022);
    t.equal(runnerPortOf(last), 1023);
    const report = JSON.parse(result.out) as { proxyPorts: Record<string, number> };
    t.same(report.proxyPorts, {
      left: 0,
      total: 324,
      first: 700,
      last: 1023,
      heldByRepos: 2,
      heldByOthers: 322,
      unprivilegedPortStart: 1024,
      proxyPortsBelow: 1024,
    });
    const again = await provision(last);
    t.equal(again.code, 0, again.err);
    t.match(
      again.out,
      /^proxy ports: 0 of 324 proxy ports left \(700-1023, below net.ipv4.ip_unprivileged_port_start 1024; held: 2 by repos, 322 by other listeners\): room for 0 more repos at 2 ports each \(the agent's and the runner's\)\n {2}when none is left, provision refuses new repos; where you accept/m,
      'a human run says it too, with the way to more',
    );
  });

  t.test('the next repo is refused with the fix, and nothing of it is made', async (t) => {
    const before = registryText();
    const result = await provision(refused);
    t.equal(result.code, 2, 'a usage/config error');
    t.match(
      result.err,
      `no proxy port is left for repo "${refused}": 0 of 324 proxy ports left (700-1023, below net.ipv4.ip_unprivileged_port_start 1024; held: 2 by repos, 322 by other listeners): room for 0 more repos at 2 ports each (the agent's and the runner's)`,
    );
    t.match(
      result.err,
      /Fix: where you accept that on this host every port below 2048 needs root to bind .*sysctl -w net.ipv4.ip_unprivileged_port_start=2048 .*add proxy_ports_below = 2048 at the top of .*registry.toml; or provision the repo on another host/,
    );
    t.equal(spawnSync('getent', ['passwd', defaultUserFor(refused)]).status, 2, 'no user created');
    t.equal(registryText(), before, 'the registry is unchanged');
  });

  t.test('raised where the operator accepts it, the same command succeeds past 1023', async (t) => {
    unprivilegedStart(2048);
    const kernelOnly = await provision(refused);
    t.equal(kernelOnly.code, 2, 'the sysctl alone is not enough: the registry still says 1024');
    t.match(kernelOnly.err, /the kernel already keeps ports below 2048 for root: add proxy_ports_below = 2048/);
    writeFileSync(env.AGENT_RUNNER_CONFIG, `proxy_ports_below = 2048\n\n${registryText()}`, { mode: 0o600 });
    const result = await provision(refused, true);
    t.equal(result.code, 0, result.err);
    t.equal(portOf(refused), 1024);
    t.equal(runnerPortOf(refused), 1025);
    t.match(JSON.parse(result.out), {
      proxyPorts: { left: 1022, total: 1348, last: 2047, heldByRepos: 4, heldByOthers: 322, proxyPortsBelow: 2048 },
    });
    t.equal(ns.exec(['bash', '-c', 'exec 3<>/dev/tcp/127.0.0.1/1024']).status, 0, 'Squid serves the agent on 1024');
    t.equal(ns.exec(['bash', '-c', 'exec 3<>/dev/tcp/127.0.0.1/1025']).status, 0, 'and the runner on 1025');
    t.match(registryText(), /^proxy_ports_below = 2048\n/, 'provision kept the declaration');
  });
}
