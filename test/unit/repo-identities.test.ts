// The runner, agent and gate of a repo as pure decisions: which accounts
// and hand-off folders provisioning creates, repairs or refuses (the
// migration of a one-user repo included), which accounts dispatch accepts,
// what the launcher gets for each, and the orchestrate flags that name them.
import t from 'tap';
import { planRemove, planRepo, type RemoveState, type RepoState } from '../../backends/host/provision-plan.js';
import { planIdentities } from '../../backends/host/provision-identities.js';
import { hostLayout } from '../../backends/host/layout.js';
import { anAccount, emptyRepoState, provisionedIdentities } from '../helpers/host-fixtures.js';
import { identityProblems, launchIdentities } from '../../src/control/repo-user/identities.js';
import { accountHandoffRules, handoffDirProblem } from '../../src/control/repo-user/handoff-folders.js';
import { mergeSweeps } from '../../src/control/dispatch/user-sweep.js';
import { orchestrateCommand } from '../../src/control/dispatch/dispatch.js';
import { cronScheduler } from '../../src/io/cron.js';
import { aRepo } from '../helpers/host-fixtures.js';

const runner = anAccount('agent-web', 1500, 'web');
const root = '/home/agent-web.handoff';
const argv = (step: { command?: { program: string; args: readonly string[] } }) =>
  step.command ? [step.command.program, ...step.command.args] : [];

t.test('a repo with only its runner gets the agent, the gate and the hand-off folders: the migration', async (t) => {
  const steps = planIdentities(
    { name: 'web', user: 'agent-web' },
    { ...runner, shell: '/bin/zsh' },
    runner.home,
    { agent: undefined, gate: undefined, handoff: new Map() },
    1000,
  );
  t.same(steps.map((step) => ('done' in step ? step.done : undefined)).filter(Boolean), [
    'created agent identity agent-web-agent',
    'created gate identity agent-web-gate',
    `created hand-off folder ${root}`,
    `created hand-off folder ${root}/to-agent`,
    `created hand-off folder ${root}/from-agent`,
    `created hand-off folder ${root}/to-gate`,
  ]);
  t.same(argv(steps[0]! as never), [
    'useradd',
    '--create-home',
    '--home-dir',
    '/home/agent-web-agent',
    '--user-group',
    '--shell',
    '/bin/zsh',
    '--comment',
    'agent-runner repo web agent',
    'agent-web-agent',
  ]);
  t.same(argv(steps[1]! as never), ['chmod', '0700', '/home/agent-web-agent']);
  t.equal(argv(steps[2]! as never).at(-2), 'agent-runner repo web gate', 'the gate has its own comment');
  // The runner exists (by id), the accounts made in this plan by name (useradd --user-group names the group so).
  t.same(argv(steps[5]! as never).slice(-4), [`${root}/to-agent`, '1500:agent-web-agent', '2750', 'create']);
  t.same(argv(steps[6]! as never).slice(-4), [`${root}/from-agent`, 'agent-web-agent:1500', '2750', 'create']);
  t.same(argv(steps[4]! as never).slice(-4), [root, '0:0', '0755', 'create']);
});

t.test('a provisioned repo plans nothing; a wrong folder is repaired, a link or a file refused', async (t) => {
  const plan = (handoff: Parameters<typeof provisionedIdentities>[0]) =>
    planIdentities({ name: 'web', user: 'agent-web' }, runner, runner.home, provisionedIdentities(handoff), 1000);
  t.same(plan({}), []);
  const dir = { uid: 1500, gid: 1500, mode: 0o40755, isDirectory: true, isSymlink: false };
  t.same(
    plan({ [`${root}/to-agent`]: dir }).map((step) => step.description),
    [
      `repair hand-off folder ${root}/to-agent to agent-web:agent-web-agent mode 2750 (${root}/to-agent is 1500:1500 mode 0755, not 1500:1501 mode 2750)`,
    ],
  );
  t.same(argv(plan({ [`${root}/to-agent`]: dir })[0]! as never).slice(-4), [
    `${root}/to-agent`,
    '1500:1501',
    '2750',
    'repair',
  ]);
  t.throws(
    () => plan({ [`${root}/to-gate`]: { ...dir, isSymlink: true, isDirectory: false } }),
    new RegExp(`hand-off folder ${root}/to-gate is a symbolic link`),
  );
  t.throws(() => plan({ [root]: { ...dir, isDirectory: false } }), new RegExp(`${root} is not a directory`));
});

t.test('an agent or gate account agent-runner did not make for this part of this repo is refused', async (t) => {
  const plan = (agent: ReturnType<typeof anAccount>) =>
    planIdentities(
      { name: 'web', user: 'agent-web' },
      runner,
      runner.home,
      { ...provisionedIdentities(), agent },
      1000,
    );
  t.throws(
    () => plan(anAccount('agent-web-agent', 1501, 'other', 'agent')),
    /agent identity "agent-web-agent" was not created by agent-runner for this repo \(its comment is "agent-runner repo other agent", not "agent-runner repo web agent"\)/,
  );
  t.throws(() => plan(anAccount('agent-web-agent', 1501, 'web', 'gate')), /not "agent-runner repo web agent"/);
  t.throws(() => plan(anAccount('agent-web-agent', 999, 'web', 'agent')), /is a system account/);
});

t.test('a registry user too long for the suffixes is refused naming repos.NAME.user', async (t) => {
  const layout = hostLayout({ AGENT_RUNNER_CONFIG: '/cfg/registry.toml', AGENT_RUNNER_STATE: '/state' });
  const state: RepoState = {
    ...emptyRepoState(),
    registryText: `[repos.web]\npath = "/srv/web"\nuser = "${'a'.repeat(27)}"\nproxy_port = 700\nurl = "https://e.org/w.git"\n`,
  };
  t.throws(
    () => planRepo({ name: 'web', url: undefined, base: undefined, allow: undefined }, state, layout),
    /\/cfg\/registry\.toml: repos\.web\.user: "a{27}" is 27 characters; .* at most 26/,
  );
});

t.test('--remove deletes the agent and gate too and moves their homes and the hand-off root aside', async (t) => {
  const layout = hostLayout({ AGENT_RUNNER_CONFIG: '/cfg/registry.toml', AGENT_RUNNER_STATE: '/state' });
  const identities = provisionedIdentities();
  const state: RemoveState = {
    registryText: '',
    schedules: cronScheduler,
    uids: new Map(),
    account: runner,
    homeExists: true,
    identities: {
      agent: identities.agent,
      gate: identities.gate,
      existing: new Set(['/home/agent-web-agent', '/home/agent-web-gate', root]),
    },
    liveTable: undefined,
    egressFileText: undefined,
    squidFiles: new Map(),
    squidRunning: false,
    systemd: false,
    watchEnabled: false,
  };
  const plan = planRemove('web', state, layout, '20270101T000000Z');
  const aside = '/state/removed/web-20270101T000000Z';
  t.same(plan.steps.filter((step) => 'command' in step).map(argv), [
    ['userdel', 'agent-web'],
    ['userdel', 'agent-web-agent'],
    ['userdel', 'agent-web-gate'],
    ['mkdir', '-p', '-m', '0700', '/state/removed'],
    ['mv', '--no-target-directory', '/home/agent-web', aside],
    ['chown', '-R', '-h', '-P', 'root:root', '--', aside],
    ['mv', '--no-target-directory', '/home/agent-web-agent', `${aside}.agent`],
    ['chown', '-R', '-h', '-P', 'root:root', '--', `${aside}.agent`],
    ['mv', '--no-target-directory', '/home/agent-web-gate', `${aside}.gate`],
    ['chown', '-R', '-h', '-P', 'root:root', '--', `${aside}.gate`],
    ['mv', '--no-target-directory', root, `${aside}.handoff`],
    ['chown', '-R', '-h', '-P', 'root:root', '--', `${aside}.handoff`],
  ]);
  t.throws(
    () =>
      planRemove(
        'web',
        { ...state, identities: { ...state.identities, gate: anAccount('agent-web-gate', 1502, 'other', 'gate') } },
        layout,
        '20270101T000000Z',
      ),
    /gate identity "agent-web-gate" was not created by agent-runner for this repo/,
  );
});

t.test('dispatch accepts the three accounts only as provisioning made them, and says every missing one', async (t) => {
  const repo = { name: 'web', user: 'agent-web' };
  const { agent, gate } = provisionedIdentities();
  t.same(identityProblems(repo, { runner, agent, gate }, 1000), []);
  t.same(identityProblems(repo, { runner, agent: undefined, gate: undefined }, 1000), [
    'repo "web": agent identity "agent-web-agent" does not exist; create it with: agent-runner provision repo web',
    'repo "web": gate identity "agent-web-gate" does not exist; create it with: agent-runner provision repo web',
  ]);
  t.match(identityProblems(repo, { runner, agent: gate, gate }, 1000), [/not "agent-runner repo web agent"/]);
  t.match(identityProblems({ name: 'web', user: 'x'.repeat(30) }, { runner, agent, gate }, 1000), [
    /repos\.web\.user: "x{30}" is 30 characters/,
  ]);
});

t.test('the launcher gets each identity with its own variables; the gate no proxy', async (t) => {
  const { agent, gate } = provisionedIdentities();
  const launched = launchIdentities({ proxyPort: 712 }, agent!, gate!);
  t.same([...launched.keys()], ['agent', 'gate']);
  t.same(launched.get('agent')!.env, {
    HOME: '/home/agent-web-agent',
    USER: 'agent-web-agent',
    LOGNAME: 'agent-web-agent',
    http_proxy: 'http://127.0.0.1:712',
    https_proxy: 'http://127.0.0.1:712',
    HTTP_PROXY: 'http://127.0.0.1:712',
    HTTPS_PROXY: 'http://127.0.0.1:712',
    no_proxy: '127.0.0.1,localhost,::1',
    NO_PROXY: '127.0.0.1,localhost,::1',
  });
  t.same(launched.get('gate')!.env, {
    HOME: '/home/agent-web-gate',
    USER: 'agent-web-gate',
    LOGNAME: 'agent-web-gate',
  });
  t.equal(launched.get('gate')!.account, gate);
});

t.test('orchestrate is told where the other identities work and hand over', async (t) => {
  const { agent, gate } = provisionedIdentities();
  const command = orchestrateCommand(
    {
      repo: aRepo('web'),
      state: '/state',
      install: { node: '/usr/bin/node', main: '/opt/ar/dist/src/main.js' },
      orchestrateArgs: ['--drain'],
      trigger: 'manual',
      progress: 'json',
      runId: 'r1',
    },
    runner,
    { runner, agent: agent!, gate: gate! },
  );
  const at = command.args.indexOf('--agent-home');
  t.same(command.args.slice(at, at + 8), [
    '--agent-home',
    '/home/agent-web-agent',
    '--gate-home',
    '/home/agent-web-gate',
    '--handoff',
    root,
    '--agent-uid',
    '1501',
  ]);
});

t.test('the hand-off rule and the sweep of three users', async (t) => {
  const rules = accountHandoffRules(runner.home, { runner, ...provisionedIdentities() } as never);
  t.same(
    rules.map((rule) => [rule.path, rule.owner, rule.group, rule.mode.toString(8)]),
    [
      [root, 0, 0, '755'],
      [`${root}/to-agent`, 1500, 1501, '2750'],
      [`${root}/from-agent`, 1501, 1500, '2750'],
      [`${root}/to-gate`, 1500, 1502, '2750'],
    ],
  );
  t.equal(handoffDirProblem(rules[1]!, undefined), `${root}/to-agent does not exist`);
  t.same(
    mergeSweeps([
      { found: 1, termed: true, killed: false, survivors: [] },
      { found: 2, termed: false, killed: true, survivors: [], failure: 'x' },
      { found: 0, termed: false, killed: false, survivors: [] },
    ]),
    { found: 3, termed: true, killed: true, survivors: [], failure: 'x' },
  );
});
