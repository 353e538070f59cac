// Proxy ports no agent can squat, tried for real in a network namespace: as
// a repo user (setpriv), binding its own proxy port, another repo's, or a
// free privileged one fails with EACCES, also in the moment Squid closes and
// reopens its ports on `squid -k reconfigure`; Squid keeps serving on them.
// The old unprivileged scheme is shown to be squattable by the same user.
import t from 'tap';
import { chmodSync, mkdirSync } from 'node:fs';
import { spawn } from 'node:child_process';
import * as path from 'node:path';
import { systemTestMayRun } from '../helpers/system.js';
import { tempDir } from '../helpers/temp.js';
import { killSquidByPidFile, netns, testUser, uniqueName, type TestUser } from '../helpers/netns.js';
import { aRepo, squidLayoutUnder } from '../helpers/host-fixtures.js';
import { realPorts } from '../../src/io/real-ports.js';
import { dropPrivileges } from '../../src/control/repo-user/privdrop.js';
import { applySquid } from '../../backends/host/apply-squid.js';
import { readPortsState, squidOwns } from '../../backends/host/ports.js';
import { systemCommand } from '../../backends/host/exec.js';

const ALPHA_PORT = 711;
const BETA_PORT = 712;
const FREE_PRIVILEGED = 713;
const UNPRIVILEGED = 3200;

// Tries to bind 127.0.0.1:PORT for each port given; prints "PORT ok" or "PORT errno-name".
const BIND = `
import errno, socket, sys
for port in map(int, sys.argv[1:]):
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", port)); s.listen(1); print(port, "ok")
    except OSError as e:
        print(port, errno.errorcode.get(e.errno, e.errno))
    finally:
        s.close()
`;

// Binds in a loop for SECONDS; prints how many binds succeeded and the errors seen.
const BIND_LOOP = `
import errno, socket, sys, time
ports = list(map(int, sys.argv[2:])); end = time.time() + float(sys.argv[1]); ok = 0; tries = 0; errs = set()
while time.time() < end:
    for port in ports:
        s = socket.socket(); tries += 1
        try:
            s.bind(("127.0.0.1", port)); s.listen(1); ok += 1
        except OSError as e:
            errs.add(errno.errorcode.get(e.errno, str(e.errno)))
        finally:
            s.close()
print(ok, tries, ",".join(sorted(errs)))
`;

if (systemTestMayRun(t, ['ip', 'squid', 'setpriv', 'useradd', 'python3', 'ss'])) {
  const ports = realPorts();
  const ns = netns(t);
  const agent = testUser(t);
  const root = tempDir(t, 'agent-runner-ports-');
  chmodSync(root, 0o755);
  const layout = squidLayoutUnder(root);
  mkdirSync(path.dirname(layout.configFile), { recursive: true });
  mkdirSync(path.dirname(layout.stateDir), { recursive: true, mode: 0o755 });
  const instance = uniqueName('artest');
  const deps = { ...ports, wrap: ns.wrap, instance };
  t.teardown(() => killSquidByPidFile(path.join(layout.stateDir, 'squid.pid'), instance));
  const repos = [aRepo('alpha', { user: agent.name, proxyPort: ALPHA_PORT }), aRepo('beta', { proxyPort: BETA_PORT })];

  const asAgent = (user: TestUser, script: string, args: string[]) =>
    ports.process.run(
      ns.wrap(
        dropPrivileges(
          { uid: user.uid, gid: user.gid },
          {
            program: 'python3',
            args: ['-c', script, ...args],
            env: { PATH: '/usr/bin:/bin', HOME: user.home },
            cwd: '/',
          },
        ),
      ),
    );

  t.before(async () => {
    const outcome = await applySquid(deps, { repos, layout });
    if (outcome !== 'started') throw new Error(`expected a fresh start, got ${outcome}`);
  });

  t.test('the namespace has the kernel default: ports below 1024 are privileged', async (t) => {
    t.equal(ns.exec(['cat', '/proc/sys/net/ipv4/ip_unprivileged_port_start']).stdout.trim(), '1024');
  });

  t.test('Squid serves on privileged ports and owns them', async (t) => {
    const state = await readPortsState(deps, layout.stateDir);
    t.ok(state.squidPids.length >= 2, `master and kid found: ${state.squidPids.join(', ')}`);
    t.ok(squidOwns(ALPHA_PORT, state), 'alpha port held by our Squid');
    t.ok(squidOwns(BETA_PORT, state), 'beta port held by our Squid');
  });

  t.test("an agent cannot bind its own, another repo's or a free privileged port", async (t) => {
    const result = await asAgent(agent, BIND, [
      String(ALPHA_PORT),
      String(BETA_PORT),
      String(FREE_PRIVILEGED),
      String(UNPRIVILEGED),
    ]);
    t.equal(result.exitCode, 0, result.stderr);
    t.same(
      result.stdout.trim().split('\n'),
      [`${ALPHA_PORT} EACCES`, `${BETA_PORT} EACCES`, `${FREE_PRIVILEGED} EACCES`, `${UNPRIVILEGED} ok`],
      'the old unprivileged scheme was squattable by the same user',
    );
  });

  t.test('squid -k reconfigure: Squid keeps its ports, the agent never gets one', async (t) => {
    // The agent hammers both proxy ports while Squid closes and reopens them.
    const loop = dropPrivileges(
      { uid: agent.uid, gid: agent.gid },
      {
        program: 'python3',
        args: ['-c', BIND_LOOP, '3', String(ALPHA_PORT), String(BETA_PORT)],
        env: { PATH: '/usr/bin:/bin' },
        cwd: '/',
      },
    );
    const wrapped = ns.wrap(loop);
    const child = spawn(wrapped.program, wrapped.args, { env: wrapped.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    const done = new Promise<void>((resolve) => child.on('close', () => resolve()));
    await new Promise((resolve) => setTimeout(resolve, 300));
    for (let i = 0; i < 3; i += 1) {
      const reconfigure = await ports.process.run(
        ns.wrap(systemCommand('squid', ['-k', 'reconfigure', '-n', instance, '-f', layout.configFile])),
      );
      t.equal(reconfigure.exitCode, 0, reconfigure.stderr);
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    await done;
    const [ok, tries, errors] = out.trim().split(' ');
    t.equal(ok, '0', `no bind succeeded in ${tries} tries`);
    t.ok(Number(tries) > 100, `the agent really tried (${tries})`);
    t.equal(errors, 'EACCES');
    let state = await readPortsState(deps, layout.stateDir);
    for (let i = 0; i < 50 && !(squidOwns(ALPHA_PORT, state) && squidOwns(BETA_PORT, state)); i += 1) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      state = await readPortsState(deps, layout.stateDir);
    }
    t.ok(
      squidOwns(ALPHA_PORT, state) && squidOwns(BETA_PORT, state),
      'after the reconfigure Squid holds both ports again',
    );
    t.equal(
      ns.exec(['bash', '-c', `exec 3<>/dev/tcp/127.0.0.1/${ALPHA_PORT} && exec 4<>/dev/tcp/127.0.0.1/${BETA_PORT}`])
        .status,
      0,
      'and serves on both',
    );
  });
}
