// provision host gives root's state dir its modes: $STATE root:proxy 0750,
// $STATE/repos and every repos/NAME root-only 0700.
import t from 'tap';
import { planHost, type HostState } from '../../backends/host/provision-host.js';
import { hostLayout } from '../../backends/host/layout.js';

const layout = hostLayout({ AGENT_RUNNER_STATE: '/s', AGENT_RUNNER_CONFIG: '/e/registry.toml' });
const dir = (mode: number, uid = 0, gid = 0) => ({ mode: 0o40000 | mode, uid, gid });
const healthy: HostState = {
  missingTools: [],
  configDir: dir(0o755),
  stateDir: dir(0o750, 0, 13),
  squidStateDir: dir(0o750, 13, 13),
  repoStateDirs: new Map([
    ['/s/repos', dir(0o700)],
    ['/s/repos/web', dir(0o700)],
  ]),
  systemd: false,
  units: new Map(),
  enabledUnits: ['agent-runner-egress.service', 'agent-runner-proxy.service'],
  proxyUid: 13,
  proxyGid: 13,
  brokerAccount: { shell: '/usr/sbin/nologin', supplementaryGroups: [] },
};
const commands = (state: HostState) =>
  planHost(state, layout, '/x/install.sh').map((step) =>
    'command' in step ? step.command.args.join(' ') : step.description,
  );

t.test('a healthy state dir needs nothing', async (t) => {
  t.same(commands(healthy), []);
});

t.test('open repo dirs become root-only; $STATE gets the proxy group', async (t) => {
  const state: HostState = {
    ...healthy,
    stateDir: dir(0o755, 0, 0),
    repoStateDirs: new Map([
      ['/s/repos', dir(0o755)],
      ['/s/repos/web', dir(0o755)],
      ['/s/repos/api', dir(0o700, 1001)],
    ]),
  };
  t.same(commands(state), ['root:proxy /s', '0750 /s', '0700 /s/repos', '0700 /s/repos/web', 'root:root /s/repos/api']);
});

t.test('a missing repos dir is created root-only', async (t) => {
  const state: HostState = { ...healthy, repoStateDirs: new Map([['/s/repos', { mode: undefined, uid: undefined }]]) };
  t.same(commands(state), ['-p -m 0700 /s/repos', 'root:root /s/repos']);
});

t.test(
  'the broker account: created when missing, put back to no login shell and no supplementary groups',
  async (t) => {
    t.same(commands({ ...healthy, brokerAccount: undefined }), [
      '--system --user-group --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin --comment agent-runner provider broker agent-runner-broker',
    ]);
    t.same(
      commands({ ...healthy, brokerAccount: { shell: '/bin/false', supplementaryGroups: [] } }),
      [],
      '/bin/false is no login',
    );
    t.same(commands({ ...healthy, brokerAccount: { shell: '/bin/bash', supplementaryGroups: ['adm', 'sudo'] } }), [
      '--shell /usr/sbin/nologin agent-runner-broker',
      '--groups  agent-runner-broker',
    ]);
  },
);
