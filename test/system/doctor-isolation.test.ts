// doctor against a real provisioned repo in a namespace: green when healthy,
// and red naming the right fix when each layer is broken on purpose.
import t from 'tap';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { cli } from '../helpers/in-process-cli.js';
import { gitDaemon } from '../helpers/git-daemon.js';
import { systemTestMayRun } from '../helpers/system.js';
import { originAndClone, tempDir } from '../helpers/temp.js';
import { killSquidByPidFile, netns, uniqueName, waitForPort } from '../helpers/netns.js';
import { defaultUserFor } from '../../src/control/registry.js';

const UPSTREAM = '203.0.113.2';

interface DoctorReport {
  ok: boolean;
  repos: { repo: string; checks: { name: string; ok: boolean; detail: string; fix: string }[] }[];
}

if (systemTestMayRun(t, ['ip', 'nft', 'squid', 'setpriv', 'useradd', 'git', 'curl'])) {
  const ns = netns(t, [`${UPSTREAM}/32`]);
  const root = tempDir(t, 'agent-runner-doctor-');
  chmodSync(root, 0o755);
  const env = { AGENT_RUNNER_CONFIG: path.join(root, 'etc', 'registry.toml'), AGENT_RUNNER_STATE: path.join(root, 'state'), PATH: process.env.PATH ?? '/usr/bin:/bin' };
  const hostsFile = path.join(root, 'hosts');
  writeFileSync(hostsFile, `${UPSTREAM} allowed.test\n`);
  const toolbin = path.join(root, 'toolbin');
  mkdirSync(toolbin);
  writeFileSync(path.join(toolbin, 'claude'), '#!/bin/sh\necho stub\n', { mode: 0o755 });
  const { origin } = originAndClone(t, { 'README.md': '# demo\n', 'backlog/config.yml': 'statuses: ["To Do", "In Progress", "Done", "Blocked"]\n', '.agent/gates.sh': '#!/bin/sh\nexit 0\n' });
  spawnSync('git', ['-C', path.join(path.dirname(origin), 'clone'), 'update-index', '--chmod=+x', '.agent/gates.sh']);
  spawnSync('git', ['-C', path.join(path.dirname(origin), 'clone'), '-c', 'user.name=T', '-c', 'user.email=t@t', 'commit', '-qm', 'exec gates']);
  spawnSync('git', ['-C', path.join(path.dirname(origin), 'clone'), 'push', '-q', 'origin', 'main']);
  const daemon = gitDaemon(t, path.dirname(origin));
  const url = daemon.url('origin.git');
  const name = uniqueName('d');
  const user = defaultUserFor(name);
  const clone = `/home/${user}/${name}`;
  t.teardown(() => {
    killSquidByPidFile(path.join(root, 'state', 'squid', 'squid.pid'));
    spawnSync('userdel', ['--force', '--remove', user]);
  });
  ns.start(['node', '-e', `require('http').createServer((q, s) => s.end('ok')).listen(80, '${UPSTREAM}')`]);

  const provision = () => cli(env, ['provision', 'repo', name, '--url', url, '--allow', 'allowed.test', '--netns', ns.name, '--hosts-file', hostsFile]);
  const doctor = async () => {
    const result = await cli(env, ['doctor', name, '--json', '--netns', ns.name, '--direct-address', UPSTREAM, '--direct-port', '80', '--allowed-url', 'http://allowed.test/', '--private-url', 'http://127.0.0.1:9/']);
    const report = JSON.parse(result.out) as DoctorReport;
    const checks = report.repos[0]!.checks;
    return { code: result.code, report, failed: checks.filter((check) => !check.ok).map((check) => check.name), check: (n: string) => checks.find((check) => check.name === n)! };
  };

  t.before(async () => {
    await waitForPort(ns, UPSTREAM, 80);
    await daemon.ready();
    const host = await cli(env, ['provision', 'host']);
    if (host.code !== 0) throw new Error(host.err);
    const first = await provision();
    if (first.code !== 0) throw new Error(first.err);
    // The agent CLI lives on the repo's toolchain PATH.
    const registry = readFileSync(env.AGENT_RUNNER_CONFIG, 'utf8');
    writeFileSync(env.AGENT_RUNNER_CONFIG, registry.replace(`[repos.${name}]\n`, `[repos.${name}]\ntoolchain_path = "${toolbin}:/usr/local/bin:/usr/bin:/bin"\n`));
  });

  t.test('green on a healthy setup', async (t) => {
    const result = await doctor();
    t.same(result.failed, []);
    t.equal(result.code, 0);
    t.same(result.report.repos[0]!.checks.map((check) => check.name), [
      'user exists',
      'egress lock loaded',
      'proxy config parses',
      'allowlist matches the registry',
      'proxy answers',
      'repo owned by its user',
      'home is private',
      'state and lock dirs are safe',
      'gates script is executable',
      'agent CLI present',
      'direct egress is rejected',
      'proxy refuses unlisted domains',
      'proxy refuses private addresses',
      'allowlisted domain goes through',
      'git identity resolves',
    ]);
    t.equal(result.check('allowlisted domain goes through').detail, 'http://allowed.test/ -> HTTP 200');
  });

  t.test('table deleted: red, fix names the reload', async (t) => {
    ns.exec(['nft', 'delete', 'table', 'inet', 'agent_runner']);
    const result = await doctor();
    t.equal(result.code, 1);
    t.same(result.failed, ['egress lock loaded', 'direct egress is rejected']);
    t.match(result.check('egress lock loaded').fix, `agent-runner provision repo ${name}`);
    t.match(result.check('direct egress is rejected').detail, /got through/);
    t.equal((await provision()).code, 0);
    t.same((await doctor()).failed, [], 'provision restores it');
  });

  t.test('squid stopped: red, fix names the proxy', async (t) => {
    killSquidByPidFile(path.join(root, 'state', 'squid', 'squid.pid'));
    await new Promise((resolve) => setTimeout(resolve, 200));
    const result = await doctor();
    t.equal(result.code, 1);
    t.same(result.failed, ['proxy answers', 'proxy refuses unlisted domains', 'proxy refuses private addresses']);
    t.match(result.check('proxy answers').fix, 'systemctl start agent-runner-proxy.service');
    t.equal((await provision()).code, 0);
    t.same((await doctor()).failed, [], 'provision restarts it');
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
