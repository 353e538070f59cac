// The isolation promise, tried for real: a repo user in a network namespace
// with our nftables lock and our Squid, and a fake upstream on 203.0.113.2
// (an address on the namespace's lo that is not in any private range, so the
// proxy may reach it). Every attack an agent could try is attempted as that
// user through setpriv, and the outcome asserted exactly.
import t from 'tap';
import { chmodSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import * as path from 'node:path';
import { systemTestMayRun } from '../helpers/system.js';
import { tempDir } from '../helpers/temp.js';
import { killSquidByPidFile, netns, testUser, uniqueName, waitForPort, type TestUser } from '../helpers/netns.js';
import { aRepo, squidLayoutUnder } from '../helpers/host-fixtures.js';
import { realPorts } from '../../src/io/real-ports.js';
import { agentEnvironment, dropPrivileges } from '../../src/control/repo-user/privdrop.js';
import { egressRuleset, rulesetDifferences } from '../../backends/host/nftables.js';
import { applyRuleset, listEgressTable } from '../../backends/host/apply-nft.js';
import { applySquid, squidRunning } from '../../backends/host/apply-squid.js';
import { FailedError } from '../../src/errors.js';

const UPSTREAM = '203.0.113.2';
const ALPHA_PORT = 701;
const BETA_PORT = 702;

if (systemTestMayRun(t, ['ip', 'nft', 'squid', 'setpriv', 'curl', 'useradd'])) {
  const ports = realPorts();
  const ns = netns(t, [`${UPSTREAM}/32`]);
  const alphaUser = testUser(t);
  const betaUser = testUser(t);
  const root = tempDir(t, 'agent-runner-isolation-');
  chmodSync(root, 0o755); // Squid drops to "proxy" and must reach its state dir
  const layout = squidLayoutUnder(root);
  mkdirSync(path.dirname(layout.configFile), { recursive: true });
  mkdirSync(path.dirname(layout.stateDir), { recursive: true, mode: 0o755 });
  const hostsFile = path.join(root, 'etc', 'hosts');
  writeFileSync(
    hostsFile,
    [
      `${UPSTREAM} allowed.test www.allowed.test other.test`,
      '127.0.0.1 internal.allowed.test',
      '10.0.0.5 lan.allowed.test',
      '169.254.169.254 metadata.allowed.test',
      '',
    ].join('\n'),
  );
  const instance = uniqueName('artest');
  const deps = { ...ports, wrap: ns.wrap, instance };
  t.teardown(() => killSquidByPidFile(path.join(layout.stateDir, 'squid.pid'), instance));

  const alpha = aRepo('alpha', { user: alphaUser.name, proxyPort: ALPHA_PORT, allow: ['.allowed.test'] });
  const beta = aRepo('beta', { user: betaUser.name, proxyPort: BETA_PORT, allow: ['other.test'] });
  // Each test user plays its repo's agent (the identity that runs agent sessions).
  const uids = new Map([
    ['alpha', { agent: alphaUser.uid }],
    ['beta', { agent: betaUser.uid }],
  ]);
  const ruleset = egressRuleset([alpha, beta], uids);
  const squidOptions = { hostsFile };

  // The fake upstream: plain HTTP on 80, 443 (reached through CONNECT) and
  // 8080, answering with the Host it was asked for.
  const upstream = ns.start([
    'node',
    '-e',
    `const http = require('http'); for (const port of [80, 443, 8080]) http.createServer((q, s) => s.end('upstream ' + port + ' ' + q.headers.host)).listen(port, '${UPSTREAM}');`,
  ]);
  upstream.stderr?.on('data', (chunk: Buffer) => process.stderr.write(chunk));

  const asUser = async (user: TestUser, program: string, args: string[], proxyPort?: number) => {
    const account = { name: user.name, uid: user.uid, gid: user.gid, home: user.home, shell: '/bin/bash' };
    const env = agentEnvironment({ user: account, path: '/usr/local/bin:/usr/bin:/bin', proxyPort, extra: {} });
    const started = Date.now();
    const result = await ports.process.run(ns.wrap(dropPrivileges(account, { program, args, env, cwd: '/' })));
    return { ...result, ms: Date.now() - started };
  };
  // curl through alpha's proxy: the HTTP status (000 when no connection).
  const viaProxy = (user: TestUser, proxyPort: number, url: string, extra: string[] = []) =>
    asUser(
      user,
      'curl',
      [
        '-s',
        '-o',
        '/dev/null',
        '-w',
        '%{http_code}',
        '--max-time',
        '10',
        '--noproxy',
        '',
        '-x',
        `http://127.0.0.1:${proxyPort}`,
        ...extra,
        url,
      ],
      proxyPort,
    );

  t.before(async () => {
    await waitForPort(ns, UPSTREAM, 80);
    await applyRuleset(deps, ruleset);
    const outcome = await applySquid(deps, { repos: [alpha, beta], layout, options: squidOptions });
    if (outcome !== 'started') throw new Error(`expected a fresh start, got ${outcome}`);
  });

  t.test('the live table is exactly the generated one', async (t) => {
    t.same(rulesetDifferences(await listEgressTable(deps), ruleset), []);
  });

  t.test('an allowlisted domain goes through the proxy', async (t) => {
    const result = await viaProxy(alphaUser, ALPHA_PORT, 'http://allowed.test/');
    t.equal(result.stdout, '200');
    const body = await asUser(
      alphaUser,
      'curl',
      ['-s', '--max-time', '10', '-x', `http://127.0.0.1:${ALPHA_PORT}`, 'http://www.allowed.test/'],
      ALPHA_PORT,
    );
    t.equal(body.stdout, 'upstream 80 www.allowed.test', 'a subdomain of a leading-dot entry is allowed');
  });

  t.test('CONNECT to 443 of an allowlisted domain is tunnelled', async (t) => {
    const body = await asUser(
      alphaUser,
      'curl',
      ['-s', '--max-time', '10', '-p', '-x', `http://127.0.0.1:${ALPHA_PORT}`, 'http://allowed.test:443/'],
      ALPHA_PORT,
    );
    t.equal(body.stdout, 'upstream 443 allowed.test:443');
  });

  t.test('a domain not on the list is refused with 403', async (t) => {
    t.equal((await viaProxy(alphaUser, ALPHA_PORT, 'http://other.test/')).stdout, '403');
  });

  t.test("another repo's domain is refused on this repo's port", async (t) => {
    t.equal((await viaProxy(betaUser, BETA_PORT, 'http://other.test/')).stdout, '200', 'beta reaches its own domain');
    t.equal(
      (await viaProxy(betaUser, BETA_PORT, 'http://allowed.test/')).stdout,
      '403',
      "beta cannot use alpha's list",
    );
  });

  t.test('private, loopback and link-local destinations are refused', async (t) => {
    t.equal(
      (await viaProxy(alphaUser, ALPHA_PORT, 'http://internal.allowed.test/')).stdout,
      '403',
      'allowlisted name resolving to 127.0.0.1',
    );
    t.equal(
      (await viaProxy(alphaUser, ALPHA_PORT, 'http://lan.allowed.test/')).stdout,
      '403',
      'allowlisted name resolving to 10.0.0.5',
    );
    t.equal(
      (await viaProxy(alphaUser, ALPHA_PORT, 'http://metadata.allowed.test/')).stdout,
      '403',
      'allowlisted name resolving to the metadata address',
    );
    t.equal((await viaProxy(alphaUser, ALPHA_PORT, 'http://127.0.0.1/')).stdout, '403', 'bare loopback IP');
    t.equal(
      (await viaProxy(alphaUser, ALPHA_PORT, 'http://169.254.169.254/latest/meta-data/')).stdout,
      '403',
      'bare metadata IP',
    );
    t.equal(
      (await viaProxy(alphaUser, ALPHA_PORT, `http://${UPSTREAM}/`)).stdout,
      '403',
      'bare public IP (only names are allowlisted)',
    );
  });

  t.test('ports other than 80/443 are refused, CONNECT only to 443', async (t) => {
    t.equal((await viaProxy(alphaUser, ALPHA_PORT, 'http://allowed.test:8080/')).stdout, '403', 'plain HTTP to 8080');
    const tunnel = await viaProxy(alphaUser, ALPHA_PORT, 'http://allowed.test:80/', ['-p']);
    t.equal(tunnel.stdout, '000', 'CONNECT to port 80 gets no tunnel');
    t.match(tunnel.stderr + String(tunnel.exitCode), /56/, 'curl reports the refused CONNECT (exit 56)');
  });

  t.test('direct TCP to the upstream is rejected fast', async (t) => {
    const result = await asUser(alphaUser, 'curl', ['-s', '--noproxy', '*', '--max-time', '10', `http://${UPSTREAM}/`]);
    t.equal(result.exitCode, 7, 'connection refused (tcp reset), not a timeout');
    t.ok(result.ms < 2000, `failed in ${result.ms} ms`);
    const root = await ports.process.run(
      ns.wrap({
        program: 'curl',
        args: ['-s', '--max-time', '10', `http://${UPSTREAM}/`],
        env: { PATH: '/usr/bin:/bin' },
        cwd: '/',
      }),
    );
    t.equal(root.stdout, `upstream 80 ${UPSTREAM}`, 'a non-agent uid is untouched (the test can tell the difference)');
  });

  t.test("another repo's proxy port is rejected", async (t) => {
    const result = await viaProxy(alphaUser, BETA_PORT, 'http://other.test/');
    t.equal(result.stdout, '000');
    t.equal(result.exitCode, 7, 'connection refused by the lock');
  });

  t.test('DNS and other UDP never leave', async (t) => {
    const listener = ns.start([
      'node',
      '-e',
      `const s = require('dgram').createSocket('udp4'); s.on('message', (m) => process.stdout.write('got ' + m + '\\n')); s.bind(53, '${UPSTREAM}', () => process.stdout.write('ready\\n'));`,
    ]);
    let received = '';
    listener.stdout?.on('data', (chunk: Buffer) => (received += chunk.toString()));
    await new Promise<void>((resolve) => {
      const poll = setInterval(() => {
        if (received.includes('ready')) {
          clearInterval(poll);
          resolve();
        }
      }, 20);
    });
    const send = (who: string) =>
      `const s = require('dgram').createSocket('udp4'); s.send('${who}', 53, '${UPSTREAM}', (e) => { console.log(e ? e.code : 'sent'); s.close(); });`;
    const agent = await asUser(alphaUser, 'node', ['-e', send('agent')]);
    t.equal(agent.stdout.trim(), 'EPERM', 'the send itself is refused');
    const rootSend = await ports.process.run(
      ns.wrap({ program: 'node', args: ['-e', send('root')], env: { PATH: '/usr/bin:/bin' }, cwd: '/' }),
    );
    t.equal(rootSend.stdout.trim(), 'sent');
    await new Promise((resolve) => setTimeout(resolve, 300));
    t.equal(received, 'ready\ngot root\n', "only root's datagram arrived");
    listener.kill('SIGKILL');
  });

  t.test('IPv6 loopback is rejected too', async (t) => {
    const result = await asUser(alphaUser, 'curl', [
      '-s',
      '--noproxy',
      '*',
      '--max-time',
      '10',
      `http://[::1]:${ALPHA_PORT}/`,
    ]);
    t.equal(result.exitCode, 7);
  });

  t.test('a broken allowlist is refused; the previous config keeps serving and the lock stays closed', async (t) => {
    const configBefore = readFileSync(layout.configFile, 'utf8');
    const listBefore = readFileSync(path.join(layout.allowlistDir, 'alpha.txt'), 'utf8');
    const broken = { ...alpha, allow: ['www.allowed.test', '.allowed.test', 'other.test'] };
    await t.rejects(applySquid(deps, { repos: [broken, beta], layout, options: squidOptions }), FailedError);
    await t.rejects(
      applySquid(deps, { repos: [broken, beta], layout, options: squidOptions }),
      /squid refused the new proxy config .*www\.allowed\.test/,
    );
    t.equal(readFileSync(layout.configFile, 'utf8'), configBefore, 'squid.conf untouched');
    t.equal(readFileSync(path.join(layout.allowlistDir, 'alpha.txt'), 'utf8'), listBefore, 'allowlist untouched');
    t.equal(await squidRunning(deps, layout.configFile), true, 'squid still runs');
    t.equal(
      (await viaProxy(alphaUser, ALPHA_PORT, 'http://allowed.test/')).stdout,
      '200',
      'still serving the previous list',
    );
    t.equal(
      (await viaProxy(alphaUser, ALPHA_PORT, 'http://other.test/')).stdout,
      '403',
      'the broken list never took effect',
    );
    t.same(rulesetDifferences(await listEgressTable(deps), ruleset), [], 'the nft table is unchanged');
    t.equal(
      (await asUser(alphaUser, 'curl', ['-s', '--noproxy', '*', '--max-time', '10', `http://${UPSTREAM}/`])).exitCode,
      7,
      'direct egress still rejected',
    );
  });

  t.test('a changed allowlist is reloaded live', async (t) => {
    const widened = { ...alpha, allow: ['.allowed.test', 'other.test'] };
    t.equal(await applySquid(deps, { repos: [widened, beta], layout, options: squidOptions }), 'reconfigured');
    let status = '';
    for (let attempt = 0; attempt < 30 && status !== '200'; attempt += 1) {
      status = (await viaProxy(alphaUser, ALPHA_PORT, 'http://other.test/')).stdout;
      if (status !== '200') await new Promise((resolve) => setTimeout(resolve, 100));
    }
    t.equal(status, '200');
    t.equal(
      await applySquid(deps, { repos: [widened, beta], layout, options: squidOptions }),
      'unchanged',
      'a second apply changes nothing',
    );
  });

  t.test('with the proxy dead the agent has no way out (fails closed)', async (t) => {
    killSquidByPidFile(path.join(layout.stateDir, 'squid.pid'), instance);
    let result = await viaProxy(alphaUser, ALPHA_PORT, 'http://allowed.test/');
    for (let attempt = 0; attempt < 20 && result.exitCode !== 7; attempt += 1) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      result = await viaProxy(alphaUser, ALPHA_PORT, 'http://allowed.test/');
    }
    t.equal(result.exitCode, 7, 'nothing listens on the proxy port');
    t.equal(
      (await asUser(alphaUser, 'curl', ['-s', '--noproxy', '*', '--max-time', '10', `http://${UPSTREAM}/`])).exitCode,
      7,
      'and direct is still rejected',
    );
  });

  t.test('the access log names the repo', async (t) => {
    const log = readFileSync(path.join(layout.stateDir, 'access.log'), 'utf8');
    t.match(log, /repo=alpha client=127\.0\.0\.1:\d+ status=TCP_MISS\/200 .*url=http:\/\/allowed\.test\//);
    t.match(log, /repo=beta .*status=TCP_DENIED\/403 .*url=http:\/\/allowed\.test\//);
  });
}
