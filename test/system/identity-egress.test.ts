// Egress per identity, tried for real: one repo's runner, agent and gate as
// three throwaway users in a network namespace with our nftables lock, our
// Squid and a fake upstream on 203.0.113.2 that serves both the git host
// (git.test) and an allowlisted name (other.test). Every refusal has a
// control row: the same request succeeds for the identity that may make it.
import t from 'tap';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { systemTestMayRun } from '../helpers/system.js';
import { tempDir } from '../helpers/temp.js';
import { killSquidByPidFile, netns, testUser, uniqueName, waitForPort, type TestUser } from '../helpers/netns.js';
import { aRepo, squidLayoutUnder } from '../helpers/host-fixtures.js';
import { realPorts } from '../../src/io/real-ports.js';
import { agentEnvironment, dropPrivileges } from '../../src/control/repo-user/privdrop.js';
import { egressRuleset, rulesetDifferences, uidRulesLoaded, type RepoUids } from '../../backends/host/nftables.js';
import { applyRuleset, listEgressTable } from '../../backends/host/apply-nft.js';
import { applySquid } from '../../backends/host/apply-squid.js';
import type { RegistryRepo } from '../../src/types.js';

const UPSTREAM = '203.0.113.2';
const AGENT_PORT = 711;
const RUNNER_PORT = 712;
const LOOPBACK_PORT = 5433;
const BROKER_PORT = 713;
const OTHER_BROKER_PORT = 714;

if (systemTestMayRun(t, ['ip', 'nft', 'squid', 'setpriv', 'curl', 'useradd'])) {
  const ports = realPorts();
  const ns = netns(t, [`${UPSTREAM}/32`]);
  const runner = testUser(t);
  const agent = testUser(t);
  const gate = testUser(t);
  const root = tempDir(t, 'agent-runner-identities-');
  chmodSync(root, 0o755); // Squid drops to "proxy" and must reach its state dir
  const layout = squidLayoutUnder(root);
  mkdirSync(path.dirname(layout.configFile), { recursive: true });
  mkdirSync(path.dirname(layout.stateDir), { recursive: true, mode: 0o755 });
  const hostsFile = path.join(root, 'etc', 'hosts');
  writeFileSync(hostsFile, `${UPSTREAM} git.test other.test\n`);
  const instance = uniqueName('artest');
  const deps = { ...ports, wrap: ns.wrap, instance };
  t.teardown(() => killSquidByPidFile(path.join(layout.stateDir, 'squid.pid'), instance));

  // The git host is on the repo's allow list too: the agent's list must drop it all the same.
  const repo = aRepo('web', {
    user: runner.name,
    url: 'https://git.test/o/web.git',
    proxyPort: AGENT_PORT,
    runnerProxyPort: RUNNER_PORT,
    allow: ['git.test', 'other.test'],
    loopbackPorts: [LOOPBACK_PORT],
  });
  const uids = new Map([['web', { runner: runner.uid, agent: agent.uid, gate: gate.uid }]]);
  const squidOptions = { hostsFile };
  const load = async (entry: RegistryRepo) => {
    await applyRuleset(deps, egressRuleset([entry], uids));
    await applySquid(deps, { repos: [entry], layout, options: squidOptions });
  };

  const upstream = ns.start([
    'node',
    '-e',
    `const http = require('http'); for (const port of [80, 443]) http.createServer((q, s) => s.end('upstream ' + port + ' ' + q.headers.host)).listen(port, '${UPSTREAM}'); http.createServer((q, s) => s.end('loopback')).listen(${LOOPBACK_PORT}, '127.0.0.1'); for (const port of [${BROKER_PORT}, ${OTHER_BROKER_PORT}]) http.createServer((q, s) => s.end('broker ' + port)).listen(port, '127.0.0.1');`,
  ]);
  upstream.stderr?.on('data', (chunk: Buffer) => process.stderr.write(chunk));

  const asUser = async (user: TestUser, args: string[]) => {
    const account = { name: user.name, uid: user.uid, gid: user.gid, home: user.home, shell: '/bin/bash' };
    const env = agentEnvironment({
      user: account,
      path: '/usr/local/bin:/usr/bin:/bin',
      proxyPort: undefined,
      extra: {},
    });
    const started = Date.now();
    const result = await ports.process.run(
      ns.wrap(dropPrivileges(account, { program: 'curl', args: ['-s', '--max-time', '10', ...args], env, cwd: '/' })),
    );
    return { ...result, ms: Date.now() - started };
  };
  /** The HTTP status through a proxy port (000: no connection), and the body. */
  const via = async (user: TestUser, port: number, url: string, extra: string[] = []) => {
    const result = await asUser(user, [
      '-w',
      '\n%{http_code}',
      '--noproxy',
      '',
      '-x',
      `http://127.0.0.1:${port}`,
      ...extra,
      url,
    ]);
    const lines = result.stdout.split('\n');
    return { status: lines.pop()!, body: lines.join('\n'), exitCode: result.exitCode, ms: result.ms };
  };

  t.before(async () => {
    await waitForPort(ns, UPSTREAM, 80);
    await waitForPort(ns, '127.0.0.1', LOOPBACK_PORT);
    await waitForPort(ns, '127.0.0.1', BROKER_PORT);
    await waitForPort(ns, '127.0.0.1', OTHER_BROKER_PORT);
    await load(repo);
  });

  t.test("the live table holds each identity's rules", async (t) => {
    const ruleset = egressRuleset([repo], uids);
    const live = await listEgressTable(deps);
    t.same(rulesetDifferences(live, ruleset), []);
    for (const [who, user] of [
      ['runner', runner],
      ['agent', agent],
      ['gate', gate],
    ] as const)
      t.ok(uidRulesLoaded(live, ruleset, user.uid), who);
  });

  t.test('the agent reaches an allowlisted name; the git host is refused it, not the runner', async (t) => {
    const other = await via(agent, AGENT_PORT, 'http://other.test/');
    t.same([other.status, other.body], ['200', 'upstream 80 other.test'], 'agent: other.test through its port');
    t.equal((await via(agent, AGENT_PORT, 'http://git.test/')).status, '403', 'agent: the git host is refused');
    const git = await via(runner, RUNNER_PORT, 'http://git.test/');
    t.same([git.status, git.body], ['200', 'upstream 80 git.test'], 'control: the runner reaches it');
    // git over https goes through CONNECT: refused for the agent, tunnelled for the runner.
    const agentTunnel = await via(agent, AGENT_PORT, 'http://git.test:443/', ['-p']);
    t.equal(agentTunnel.status, '000', 'agent: no CONNECT to the git host');
    const runnerTunnel = await via(runner, RUNNER_PORT, 'http://git.test:443/', ['-p']);
    t.same(
      [runnerTunnel.status, runnerTunnel.body],
      ['200', 'upstream 443 git.test:443'],
      'control: the runner tunnels',
    );
  });

  t.test("the runner reaches the git host only: other names and the agent's port are refused", async (t) => {
    t.equal((await via(runner, RUNNER_PORT, 'http://other.test/')).status, '403', 'runner: other.test is refused');
    t.equal((await via(agent, AGENT_PORT, 'http://other.test/')).status, '200', 'control: the agent reaches it');
    const agentPort = await via(runner, AGENT_PORT, 'http://other.test/');
    t.same([agentPort.status, agentPort.exitCode], ['000', 7], "runner: the agent's port is rejected by the lock");
    t.ok(agentPort.ms < 2000, `rejected in ${agentPort.ms} ms`);
    t.equal((await via(agent, AGENT_PORT, 'http://other.test/')).status, '200', 'control: the agent uses it');
    const agentAtRunner = await via(agent, RUNNER_PORT, 'http://git.test/');
    t.same([agentAtRunner.status, agentAtRunner.exitCode], ['000', 7], "agent: the runner's port is rejected");
    const loopback = await asUser(runner, ['--noproxy', '*', `http://127.0.0.1:${LOOPBACK_PORT}/`]);
    t.equal(loopback.exitCode, 7, "runner: the agent's loopback port is rejected");
    const own = await asUser(agent, ['--noproxy', '*', `http://127.0.0.1:${LOOPBACK_PORT}/`]);
    t.equal(own.stdout, 'loopback', 'control: the agent reaches its loopback port');
  });

  t.test('the gate reaches nothing: both proxy ports and loopback fail in milliseconds', async (t) => {
    for (const [port, url] of [
      [AGENT_PORT, 'http://other.test/'],
      [RUNNER_PORT, 'http://git.test/'],
    ] as const) {
      const result = await via(gate, port, url);
      t.same([result.status, result.exitCode], ['000', 7], `gate: port ${port} is rejected (curl 7, not a timeout)`);
      t.ok(result.ms < 1000, `gate: port ${port} failed in ${result.ms} ms`);
    }
    const loopback = await asUser(gate, ['--noproxy', '*', `http://127.0.0.1:${LOOPBACK_PORT}/`]);
    t.equal(loopback.exitCode, 7, 'gate: loopback too');
    const direct = await asUser(gate, ['--noproxy', '*', `http://${UPSTREAM}/`]);
    t.equal(direct.exitCode, 7, 'gate: direct too');
    t.equal((await via(agent, AGENT_PORT, 'http://other.test/')).status, '200', "control: the agent's port serves");
    t.equal((await via(runner, RUNNER_PORT, 'http://git.test/')).status, '200', "control: the runner's port serves");
  });

  t.test('anonymous_fetch = true: the agent reaches the git host', async (t) => {
    await load({ ...repo, anonymousFetch: true });
    let status = '';
    for (let attempt = 0; attempt < 30 && status !== '200'; attempt += 1) {
      status = (await via(agent, AGENT_PORT, 'http://git.test/')).status;
      if (status !== '200') await new Promise((resolve) => setTimeout(resolve, 100));
    }
    t.equal(status, '200', 'agent: the git host through its own port');
    t.equal(
      (await via(runner, RUNNER_PORT, 'http://other.test/')).status,
      '403',
      'the runner still only has the git host',
    );
  });

  t.test('gate_egress = "agent": the gate reaches what the agent reaches, and no more', async (t) => {
    const open = { ...repo, gateEgress: 'agent' as const };
    await load(open);
    t.equal((await via(gate, AGENT_PORT, 'http://other.test/')).status, '200', "gate: the agent's port");
    t.equal((await via(gate, AGENT_PORT, 'http://git.test/')).status, '403', 'gate: not the git host');
    t.equal((await via(gate, RUNNER_PORT, 'http://git.test/')).exitCode, 7, "gate: never the runner's port");
    await load(repo);
    t.equal((await via(gate, AGENT_PORT, 'http://other.test/')).exitCode, 7, 'back to "none": rejected again');
  });

  t.test("a repo with a broker: its agent reaches its broker port, not another repo's; nobody else does", async (t) => {
    const otherAgent = testUser(t);
    const broker = { port: BROKER_PORT, providers: {}, maxBodyBytes: 1024 };
    const brokered = { ...repo, broker };
    const other = aRepo('api', { proxyPort: 715, broker: { ...broker, port: OTHER_BROKER_PORT } });
    const both = new Map<string, RepoUids>([...uids, ['api', { agent: otherAgent.uid }]]);
    await applyRuleset(deps, egressRuleset([brokered, other], both));
    const direct = (user: TestUser, port: number) => asUser(user, ['--noproxy', '*', `http://127.0.0.1:${port}/`]);
    const own = await direct(agent, BROKER_PORT);
    t.same([own.exitCode, own.stdout], [0, `broker ${BROKER_PORT}`], 'agent: its broker port');
    t.equal((await direct(agent, OTHER_BROKER_PORT)).exitCode, 7, "agent: another repo's broker port is rejected");
    const theirs = await direct(otherAgent, OTHER_BROKER_PORT);
    t.same([theirs.exitCode, theirs.stdout], [0, `broker ${OTHER_BROKER_PORT}`], 'control: the other agent, its own');
    t.equal((await direct(otherAgent, BROKER_PORT)).exitCode, 7, "the other agent: not this repo's broker");
    t.equal((await direct(runner, BROKER_PORT)).exitCode, 7, 'runner: never the broker');
    t.equal((await direct(gate, BROKER_PORT)).exitCode, 7, 'gate: never the broker');
    t.equal((await via(agent, AGENT_PORT, 'http://other.test/')).status, '200', 'agent: its proxy still serves');
    await load(repo);
    t.equal((await direct(agent, BROKER_PORT)).exitCode, 7, 'without a broker: the port is rejected again');
  });
}
