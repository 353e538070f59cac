// Host isolation across a reboot, under a real systemd (systemd-nspawn):
// `agent-runner provision host` installs and enables the egress and proxy
// units, `provision repo` registers a repo served by a git daemon inside the
// container, and after `systemctl reboot` (a fresh network namespace, so no
// table can be left over) the egress unit has restored `inet agent_runner`
// (the agent's and the runner's rules) before the repo's watch unit started,
// and the proxy answers on both of the repo's ports. Everything runs inside the container; the host's ruleset is never
// touched.
import t from 'tap';
import { cpSync, mkdirSync, readFileSync, realpathSync } from 'node:fs';
import * as path from 'node:path';
import { systemTestMayRun } from '../helpers/system.js';
import { originAndClone } from '../helpers/temp.js';
import { PROJECT_ROOT, waitFor } from '../helpers/drain-fixture.js';
import { bootContainer, type Container } from '../helpers/nspawn.js';
import { defaultUserFor } from '../../src/control/registry/parse.js';

// The documented install path; the project is bind-mounted there read-only.
const INSTALL = '/opt/agent-runner';
const UNIT_DIR = '/etc/systemd/system';
const EGRESS = 'agent-runner-egress.service';
const PROXY = 'agent-runner-proxy.service';
const GIT_PORT = 9418;
const REPO = 'bootdemo';
// The agent's proxy port and the runner's (its git proxy): the first two of the pool.
const PROXY_PORT = 700;
const RUNNER_PROXY_PORT = 701;

interface Report {
  changed: boolean;
  steps: { description: string; outcome: string; detail?: string }[];
}

function agentRunner(container: Container, args: readonly string[]) {
  return container.exec([
    'env',
    '-i',
    'PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
    'HOME=/root',
    'LANG=C.UTF-8',
    path.join(INSTALL, 'bin', 'agent-runner'),
    ...args,
  ]);
}

function show(container: Container, unit: string, property: string): string {
  return container.exec(['systemctl', 'show', '-p', property, '--value', unit]).stdout.trim();
}

function journal(container: Container, unit: string): string {
  return container.exec(['journalctl', '-u', unit, '-o', 'cat', '--no-pager', '-n', '15']).stdout;
}

t.test('the egress lock and the proxy come back on their own after a reboot', async (t) => {
  if (!systemTestMayRun(t, ['systemd-nspawn', 'nsenter', 'nft', 'squid', 'git', 'setpriv', 'useradd', 'curl'])) return;
  const { origin } = originAndClone(t, {
    'README.md': '# demo\n',
    'backlog/config.yml': 'project_name: "demo"\nstatuses: ["To Do", "In Progress", "Done"]\n',
  });
  const container = await bootContainer(t, {
    // node_modules may be a link out of the checkout (a worktree sharing one): mount its target too.
    bindsReadOnly: [`${PROJECT_ROOT}:${INSTALL}`, realpathSync(path.join(PROJECT_ROOT, 'node_modules'))].filter(
      (dir, index) => index === 0 || !dir.startsWith(`${PROJECT_ROOT}/`),
    ),
    // The origin lives inside the container: its loopback is not the host's.
    prepare: (root) => {
      mkdirSync(path.join(root, 'srv', 'origin'), { recursive: true });
      cpSync(origin, path.join(root, 'srv', 'origin', 'origin.git'), { recursive: true });
    },
  });
  const watchUnit = `agent-runner-watch@${REPO}.service`;
  const user = defaultUserFor(REPO);

  await t.test('provision host installs and enables the units; a second run changes nothing', async (t) => {
    const first = agentRunner(container, ['provision', 'host', '--json']);
    t.equal(first.status, 0, first.stderr);
    const report = JSON.parse(first.stdout) as Report;
    t.equal(report.changed, true);
    const units = ['agent-runner-egress.service', 'agent-runner-proxy.service', 'agent-runner-watch@.service'];
    t.same(
      report.steps
        .filter((step) => /^(install \/etc\/systemd|systemctl|enable )/.test(step.description))
        .map((step) => [step.description, step.outcome]),
      [
        ...units.map((unit) => [`install ${UNIT_DIR}/${unit}`, 'done']),
        ['systemctl daemon-reload', 'done'],
        [`enable ${EGRESS}, ${PROXY} (egress lock at boot, the proxy)`, 'done'],
      ],
    );
    t.same(
      report.steps.filter((step) => step.outcome !== 'done'),
      [],
      'nothing skipped: systemd is PID 1 here',
    );
    for (const unit of units) {
      t.equal(
        readFileSync(path.join(container.root, UNIT_DIR, unit), 'utf8'),
        readFileSync(path.join(PROJECT_ROOT, 'systemd', unit), 'utf8'),
        `${unit} installed as shipped`,
      );
    }
    for (const unit of [EGRESS, PROXY])
      t.equal(container.exec(['systemctl', 'is-enabled', unit]).stdout.trim(), 'enabled', `${unit} is enabled`);
    const second = agentRunner(container, ['provision', 'host']);
    t.equal(second.status, 0, second.stderr);
    t.equal(second.stdout.split('\n')[0], 'host: no change');
  });

  await t.test('provision repo registers a repo, saves the ruleset and starts its units', async (t) => {
    const daemon = container.exec([
      'systemd-run',
      '--unit=agent-runner-test-origin',
      '--quiet',
      'git',
      'daemon',
      '--reuseaddr',
      '--export-all',
      '--base-path=/srv/origin',
      '--listen=127.0.0.1',
      `--port=${GIT_PORT}`,
      '/srv/origin',
    ]);
    t.equal(daemon.status, 0, daemon.stderr);
    const url = `git://127.0.0.1:${GIT_PORT}/origin.git`;
    await waitFor(
      () => container.exec(['git', 'ls-remote', url]).status === 0,
      10_000,
      'the git daemon in the container',
    );
    const first = agentRunner(container, [
      'provision',
      'repo',
      REPO,
      '--url',
      url,
      '--allow',
      'allowed.test',
      '--json',
    ]);
    t.equal(first.status, 0, first.stderr);
    const report = JSON.parse(first.stdout) as Report;
    t.equal(report.changed, true);
    t.same(
      report.steps
        .filter((step) => /^(regenerate|enable)/.test(step.description))
        .map((step) => step.description.split(' ').slice(0, 4).join(' ')),
      ['regenerate and load the', 'regenerate the proxy config', `enable and start ${watchUnit}`],
    );
    t.equal(container.exec(['systemctl', 'is-enabled', watchUnit]).stdout.trim(), 'enabled');
    t.equal(
      container.exec(['systemctl', 'is-active', PROXY]).stdout.trim(),
      'active',
      'provisioning started the proxy through its unit',
    );
    const uid = Number(container.exec(['id', '-u', user]).stdout.trim());
    t.match(
      readFileSync(path.join(container.root, 'etc', 'agent-runner', 'egress.json'), 'utf8'),
      new RegExp(`"right": ${uid}\\b`),
      'the ruleset is saved for the boot unit',
    );
    const second = agentRunner(container, ['provision', 'repo', REPO]);
    t.equal(second.status, 0, second.stderr);
    t.equal(second.stdout.split('\n')[0], `repo ${REPO}: no change`);
    container.exec(['systemctl', 'stop', 'agent-runner-test-origin.service']);
    // The watch unit is running now: the state dirs must still be as provisioned.
    t.equal(
      container.exec(['stat', '-c', '%n %U:%G %a', '/var/lib/agent-runner', '/var/lib/agent-runner/squid']).stdout,
      '/var/lib/agent-runner root:proxy 750\n/var/lib/agent-runner/squid proxy:proxy 750\n',
    );
    const host = agentRunner(container, ['provision', 'host']);
    t.equal(host.stdout.split('\n')[0], 'host: no change', host.stdout);
  });

  await t.test('after a reboot the table is back before the watch unit, and the proxy answers', async (t) => {
    // A marker table: gone after the reboot shows the ruleset starts empty,
    // so inet agent_runner can only come from the boot unit.
    const marker = container.exec(['nft', 'add', 'table', 'inet', 'boot_marker']);
    t.equal(marker.status, 0, marker.stderr);
    const systemdBefore = container.pid;
    await container.reboot();
    t.not(container.pid, systemdBefore, 'a new systemd');
    t.equal(
      container.exec(['nft', 'list', 'tables']).stdout.includes('boot_marker'),
      false,
      'a fresh ruleset: nothing left over from before the reboot',
    );
    const settled = (unit: string) => /^(active|failed)$/.test(show(container, unit, 'ActiveState'));
    for (const unit of [EGRESS, PROXY, watchUnit]) {
      await waitFor(() => settled(unit), 30_000, `${unit} to start at boot`).catch((error: Error) => {
        throw new Error(`${error.message}: ${show(container, unit, 'ActiveState')}\n${journal(container, unit)}`);
      });
    }
    t.equal(show(container, EGRESS, 'ActiveState'), 'active', journal(container, EGRESS));
    t.equal(show(container, EGRESS, 'Result'), 'success');
    const uid = Number(container.exec(['id', '-u', user]).stdout.trim());
    const agentUid = Number(container.exec(['id', '-u', `${user}-agent`]).stdout.trim());
    const table = container.exec(['nft', 'list', 'table', 'inet', 'agent_runner']);
    t.equal(table.status, 0, table.stderr);
    t.match(
      table.stdout,
      new RegExp(`meta skuid ${agentUid} ip daddr 127\\.0\\.0\\.1 tcp dport ${PROXY_PORT} accept`),
      "the agent's rule is back",
    );
    t.match(
      table.stdout,
      new RegExp(`meta skuid ${uid} ip daddr 127\\.0\\.0\\.1 tcp dport ${RUNNER_PROXY_PORT} accept`),
      "the runner's rule is back",
    );

    // Ordering: the watch unit requires the lock and started after it was up.
    t.match(show(container, watchUnit, 'Requires'), new RegExp(`\\b${EGRESS.replace('.', '\\.')}\\b`));
    t.match(show(container, watchUnit, 'After'), new RegExp(`\\b${EGRESS.replace('.', '\\.')}\\b`));
    const egressUp = Number(show(container, EGRESS, 'ActiveEnterTimestampMonotonic'));
    const watchStarting = Number(show(container, watchUnit, 'InactiveExitTimestampMonotonic'));
    t.ok(egressUp > 0, `the egress unit came up at boot (${egressUp} µs)`);
    t.ok(
      watchStarting >= egressUp,
      `the watch unit started (${watchStarting} µs) after the table was loaded (${egressUp} µs)`,
    );

    t.equal(show(container, PROXY, 'ActiveState'), 'active', journal(container, PROXY));
    // Squid answers on the repo's port: a domain off the allowlist is refused by Squid itself.
    for (const port of [PROXY_PORT, RUNNER_PROXY_PORT]) {
      await waitFor(
        () => container.exec(['bash', '-c', `exec 3<>/dev/tcp/127.0.0.1/${port}`]).status === 0,
        10_000,
        `Squid to listen on ${port}`,
      ).catch((error: Error) => {
        const cacheLog = container.exec(['tail', '-n', '15', '/var/lib/agent-runner/squid/cache.log']).stdout;
        throw new Error(`${error.message}\n${journal(container, PROXY)}\ncache.log:\n${cacheLog}`);
      });
    }
    const refused = container.exec([
      'curl',
      '-s',
      '-o',
      '/dev/null',
      '-w',
      '%{http_code}',
      '-x',
      `http://127.0.0.1:${PROXY_PORT}`,
      'http://denied.test/',
    ]);
    t.equal(refused.stdout, '403', `Squid refuses a domain off the allowlist: ${refused.stderr}`);
  });
});
