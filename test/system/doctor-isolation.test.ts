// doctor against a real provisioned repo in a namespace: green when healthy,
// and red naming the right fix when each layer is broken on purpose.
import t from 'tap';
import { chmodSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { cli } from '../helpers/in-process-cli.js';
import { gitDaemon } from '../helpers/git-daemon.js';
import { systemTestMayRun } from '../helpers/system.js';
import { originAndClone, tempDir } from '../helpers/temp.js';
import { killSquidByPidFile, netns, uniqueName, waitForPort } from '../helpers/netns.js';
import { squidInstanceInNetns } from '../../backends/host/squid-config.js';
import { defaultUserFor } from '../../src/control/registry/parse.js';
import { FIRST_PROXY_PORT } from '../../src/control/registry/proxy-ports.js';
import { useBrokerAccount } from '../helpers/broker-account.js';
import { removeRepoAccounts } from '../helpers/provision-fixture.js';

const UPSTREAM = '203.0.113.2';

interface DoctorReport {
  ok: boolean;
  host: { name: string; ok: boolean; detail: string; fix: string }[];
  repos: {
    repo: string;
    model?: { summary: string; broker: unknown };
    checks: { name: string; ok: boolean; detail: string; fix: string }[];
  }[];
}

if (systemTestMayRun(t, ['ip', 'nft', 'squid', 'setpriv', 'useradd', 'git', 'curl'])) {
  // provision host makes the broker's account: it is shared with the other system tests that need it.
  useBrokerAccount(t);
  const ns = netns(t, [`${UPSTREAM}/32`]);
  const root = tempDir(t, 'agent-runner-doctor-');
  chmodSync(root, 0o755);
  const env = {
    AGENT_RUNNER_CONFIG: path.join(root, 'etc', 'registry.toml'),
    AGENT_RUNNER_STATE: path.join(root, 'state'),
    PATH: process.env.PATH ?? '/usr/bin:/bin',
  };
  const hostsFile = path.join(root, 'hosts');
  writeFileSync(hostsFile, `${UPSTREAM} allowed.test\n`);
  const toolbin = path.join(root, 'toolbin');
  mkdirSync(toolbin);
  writeFileSync(path.join(toolbin, 'claude'), '#!/bin/sh\necho stub\n', { mode: 0o755 });
  const { origin } = originAndClone(t, {
    'README.md': '# demo\n',
    'backlog/config.yml': 'statuses: ["To Do", "In Progress", "Blocked", "Done"]\n',
    '.agent/gates.sh': '#!/bin/sh\nexit 0\n',
  });
  spawnSync('git', ['-C', path.join(path.dirname(origin), 'clone'), 'update-index', '--chmod=+x', '.agent/gates.sh']);
  spawnSync('git', [
    '-C',
    path.join(path.dirname(origin), 'clone'),
    '-c',
    'user.name=T',
    '-c',
    'user.email=t@t',
    'commit',
    '-qm',
    'exec gates',
  ]);
  spawnSync('git', ['-C', path.join(path.dirname(origin), 'clone'), 'push', '-q', 'origin', 'main']);
  const daemon = gitDaemon(t, path.dirname(origin));
  const url = daemon.url('origin.git');
  const name = uniqueName('d');
  const user = defaultUserFor(name);
  const clone = `/home/${user}/${name}`;
  t.teardown(() => {
    killSquidByPidFile(path.join(root, 'state', 'squid', 'squid.pid'), squidInstanceInNetns(ns.name));
    removeRepoAccounts(user);
  });
  ns.start(['node', '-e', `require('http').createServer((q, s) => s.end('ok')).listen(80, '${UPSTREAM}')`]);

  const provision = () =>
    cli(env, [
      'provision',
      'repo',
      name,
      '--url',
      url,
      '--allow',
      'allowed.test',
      '--netns',
      ns.name,
      '--hosts-file',
      hostsFile,
    ]);
  const doctor = async () => {
    const result = await cli(env, [
      'doctor',
      name,
      '--json',
      '--netns',
      ns.name,
      '--direct-address',
      UPSTREAM,
      '--direct-port',
      '80',
      '--allowed-url',
      'http://allowed.test/',
      '--private-url',
      'http://127.0.0.1:9/',
    ]);
    const report = JSON.parse(result.out) as DoctorReport;
    const checks = report.repos[0]!.checks;
    return {
      code: result.code,
      report,
      failed: checks.filter((check) => !check.ok).map((check) => check.name),
      check: (n: string) => checks.find((check) => check.name === n)!,
    };
  };

  // A root listener in the namespace: a local service, or a squatter.
  const squat = async (port: number) => {
    const child = ns.start([
      'python3',
      '-c',
      `import socket, time\ns = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind(("127.0.0.1", ${port})); s.listen(1)\nwhile True: time.sleep(60)`,
    ]);
    await waitForPort(ns, '127.0.0.1', port);
    return child;
  };
  const stop = async (child: {
    pid?: number;
    exitCode: number | null;
    once(event: 'exit', listener: () => void): unknown;
  }) => {
    if (child.exitCode !== null || !child.pid) return;
    const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    process.kill(child.pid, 'SIGKILL');
    await gone;
  };
  const repoPort = () => Number(/proxy_port = (\d+)/.exec(readFileSync(env.AGENT_RUNNER_CONFIG, 'utf8'))![1]);
  // /proc's hidepid is the host's: doctor reports it, the test does not change it.
  const hidepid = /^\S+ \S+ \S+ \S+ \/proc .* - proc \S+ \S*hidepid=(2|invisible|4|ptraceable)/m.test(
    readFileSync('/proc/self/mountinfo', 'utf8'),
  );

  t.before(async () => {
    await waitForPort(ns, UPSTREAM, 80);
    await daemon.ready();
    const host = await cli(env, ['provision', 'host']);
    if (host.code !== 0) throw new Error(host.err);
    // Something already listens on the first proxy port: provision must not hand it out.
    const service = await squat(FIRST_PROXY_PORT);
    const first = await provision();
    await stop(service);
    if (first.code !== 0) throw new Error(first.err);
    // The agent CLI lives on the repo's toolchain PATH.
    const registry = readFileSync(env.AGENT_RUNNER_CONFIG, 'utf8');
    writeFileSync(
      env.AGENT_RUNNER_CONFIG,
      registry.replace(
        `[repos.${name}]\n`,
        `[repos.${name}]\ntoolchain_path = "${toolbin}:/usr/local/bin:/usr/bin:/bin"\n`,
      ),
    );
  });

  t.test('provision skipped the port a local service held, and wrote the registry root-only', async (t) => {
    t.equal(repoPort(), FIRST_PROXY_PORT + 1);
    t.equal(statSync(env.AGENT_RUNNER_CONFIG).mode & 0o777, 0o600);
  });

  t.test('green on a healthy setup', async (t) => {
    const result = await doctor();
    t.same(result.failed, []);
    t.same(
      result.report.host.map((check) => [check.name, check.ok]),
      [
        ['registry is readable by root only', true],
        ["/proc hides other users' processes", hidepid],
        ['run containment', true],
      ],
    );
    t.match(
      result.report.host.find((check) => check.name === 'run containment'),
      { containment: 'user-sweep', misses: /a memory cap and CPU weight for the run as a whole/ },
      'systemd is not PID 1 here: only the user sweep, and what it misses, in --json',
    );
    t.equal(result.code, hidepid ? 0 : 1, "only the host's /proc may fail here");
    t.same(
      result.report.repos[0]!.model,
      { summary: "no broker: agents use logins in the agent's home", broker: null },
      'a repo without a broker: its agents use their own logins',
    );
    t.same(
      result.report.repos[0]!.checks.map((check) => check.name),
      [
        'model access',
        'user exists',
        'egress lock loaded',
        'egress per identity',
        'proxy config parses',
        'allowlist matches the registry',
        'proxy answers',
        'proxy port is privileged',
        'squid owns the proxy port',
        'runner proxy port is privileged',
        'squid owns the runner proxy port',
        'repo owned by its user',
        'home is private',
        'state and lock dirs are safe',
        'run limits',
        'gates script is executable',
        'agent CLI present',
        'direct egress is rejected',
        'proxy refuses unlisted domains',
        'proxy refuses private addresses',
        'the agent cannot reach the git host',
        'allowlisted domain goes through',
        'the runner reaches nothing but the git host',
        'git identity resolves',
      ],
    );
    t.match(result.check('the agent cannot reach the git host').detail, /through the agent's port \d+ -> HTTP 403$/);
    t.match(
      result.check('the runner reaches nothing but the git host').detail,
      /allowed\.test through the runner's port \d+ -> HTTP 403$/,
    );
    t.equal(result.check('allowlisted domain goes through').detail, 'http://allowed.test/ -> HTTP 200');
    t.match(
      result.check('run limits').detail,
      /^rlimits \(systemd is not PID 1\): RLIMIT_NPROC 1024 for the user, RLIMIT_DATA 8G per process; .*memory cap is per process only/,
    );
  });

  t.test('state dirs opened to others: red, fix names the modes; provision host closes them', async (t) => {
    const state = env.AGENT_RUNNER_STATE;
    const repoDir = path.join(state, 'repos', name);
    mkdirSync(repoDir, { recursive: true });
    chmodSync(repoDir, 0o755);
    chmodSync(state, 0o755);
    const result = await doctor();
    t.same(result.failed, ['state and lock dirs are safe']);
    t.match(result.check('state and lock dirs are safe').detail, `${state} is open to every user (mode 0755)`);
    t.match(result.check('state and lock dirs are safe').detail, `${repoDir} is open to other users (mode 0755)`);
    t.match(result.check('state and lock dirs are safe').fix, `chown root:proxy ${state} && chmod 0750 ${state}`);
    t.match(result.check('state and lock dirs are safe').fix, `chmod 0700 ${repoDir}`);
    const host = await cli(env, ['provision', 'host']);
    t.equal(host.code, 0, host.err);
    t.same((await doctor()).failed, [], 'provision host restores the modes');
  });

  t.test('table deleted: red, fix names the reload', async (t) => {
    ns.exec(['nft', 'delete', 'table', 'inet', 'agent_runner']);
    const result = await doctor();
    t.equal(result.code, 1);
    t.same(result.failed, ['egress lock loaded', 'egress per identity', 'direct egress is rejected']);
    t.match(result.check('egress per identity').detail, /NOT LOADED/);
    t.match(result.check('egress lock loaded').fix, `agent-runner provision repo ${name}`);
    t.match(result.check('direct egress is rejected').detail, /got through/);
    t.equal((await provision()).code, 0);
    t.same((await doctor()).failed, [], 'provision restores it');
  });

  t.test('squid stopped: red, fix names the proxy', async (t) => {
    killSquidByPidFile(path.join(root, 'state', 'squid', 'squid.pid'), squidInstanceInNetns(ns.name));
    await new Promise((resolve) => setTimeout(resolve, 200));
    const result = await doctor();
    t.equal(result.code, 1);
    t.same(result.failed, [
      'proxy answers',
      'squid owns the proxy port',
      'squid owns the runner proxy port',
      'proxy refuses unlisted domains',
      'proxy refuses private addresses',
    ]);
    t.match(result.check('proxy answers').fix, 'systemctl start agent-runner-proxy.service');
    t.equal((await provision()).code, 0);
    t.same((await doctor()).failed, [], 'provision restarts it');
  });

  t.test('a squatter on the repo port: doctor names it, provision refuses, both recover', async (t) => {
    const port = repoPort();
    killSquidByPidFile(path.join(root, 'state', 'squid', 'squid.pid'), squidInstanceInNetns(ns.name));
    await new Promise((resolve) => setTimeout(resolve, 200));
    const squatter = await squat(port);
    const result = await doctor();
    t.equal(result.code, 1);
    t.notOk(result.check('squid owns the proxy port').ok);
    t.ok(result.check('proxy answers').ok, 'the squatter answers: answering alone proves nothing');
    t.match(result.check('squid owns the proxy port').detail, `port ${port} is held by python3 (pid ${squatter.pid})`);
    t.match(result.check('squid owns the proxy port').fix, `ss -ltnp 'sport = :${port}'`);
    const refused = await provision();
    t.not(refused.code, 0);
    t.match(refused.err, `proxy port ${port} is held by python3 (pid ${squatter.pid}), not by agent-runner's Squid`);
    await stop(squatter);
    t.equal((await provision()).code, 0, 'with the squatter gone provision restarts Squid');
    const healed = await doctor();
    t.ok(healed.check('squid owns the proxy port').ok);
    t.match(
      healed.check('squid owns the proxy port').detail,
      `127.0.0.1:${port} is held by agent-runner's Squid (squid (pid`,
    );
    t.same(healed.failed, []);
  });

  t.test('registry made world-readable: red with chmod 600, provision fixes it', async (t) => {
    chmodSync(env.AGENT_RUNNER_CONFIG, 0o644);
    const result = await doctor();
    t.same(
      result.report.host.filter((check) => !check.ok).map((check) => check.name),
      ['registry is readable by root only', ...(hidepid ? [] : ["/proc hides other users' processes"])],
    );
    t.equal(
      result.report.host[0]!.fix,
      `chown root:root ${env.AGENT_RUNNER_CONFIG} && chmod 600 ${env.AGENT_RUNNER_CONFIG}`,
    );
    t.equal((await provision()).code, 0);
    t.equal(statSync(env.AGENT_RUNNER_CONFIG).mode & 0o777, 0o600);
  });

  t.test('allowlist changed behind our back: red', async (t) => {
    const list = path.join(root, 'etc', 'allow', `${name}.txt`);
    writeFileSync(list, `${readFileSync(list, 'utf8')}evil.example\n`);
    const result = await doctor();
    t.same(result.failed, ['allowlist matches the registry']);
    t.match(result.check('allowlist matches the registry').fix, `agent-runner provision repo ${name}`);
    t.equal((await provision()).code, 0);
    t.same((await doctor()).failed, []);
  });

  t.test('repo chowned to root: red, fix is the chown', async (t) => {
    spawnSync('chown', ['-R', 'root:root', clone]);
    const result = await doctor();
    t.same(result.failed, ['repo owned by its user', 'git identity resolves']);
    t.equal(result.check('repo owned by its user').fix, `chown -R -h -P ${user}:${user} ${clone}`);
    spawnSync('chown', ['-R', `${user}:${user}`, clone]);
    t.same((await doctor()).failed, []);
  });
}
