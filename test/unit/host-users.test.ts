// The repo user as commands, secrets extraction and redaction, and the
// repo planner over builder states.
import t from 'tap';
import { createUserCommands, cloneCommand } from '../../backends/host/users.js';
import { extractSecrets, redactSecrets, secretValues } from '../../src/agent/secrets.js';
import { committerEnvironment } from '../../src/git/git.js';
import { planRepo, withBlockedStatus, type RepoState } from '../../backends/host/provision-plan.js';
import { emptyRepoState, provisionedIdentities } from '../helpers/host-fixtures.js';
import { hostLayout } from '../../backends/host/layout.js';
import { egressRuleset, renderRuleset, repoUids } from '../../backends/host/nftables.js';
import { squidConfig } from '../../backends/host/squid-config.js';
import { parseRegistry } from '../../src/control/registry/parse.js';
import { cronScheduler } from '../../src/io/cron.js';

t.test('user commands are data', async (t) => {
  t.same(
    createUserCommands('agent-web', '/home/agent-web', 'web').map((c) => [c.program, ...c.args]),
    [
      [
        'useradd',
        '--create-home',
        '--home-dir',
        '/home/agent-web',
        '--user-group',
        '--shell',
        '/bin/bash',
        '--comment',
        'agent-runner repo web',
        'agent-web',
      ],
      ['chmod', '0700', '/home/agent-web'],
    ],
  );
  const clone = cloneCommand(
    'agent-web',
    '/home/agent-web',
    'https://example.org/web.git',
    '/home/agent-web/web',
    'main',
  );
  t.equal(clone.program, 'setpriv');
  t.same(clone.args, [
    '--reuid=agent-web',
    '--regid=agent-web',
    '--init-groups',
    '--no-new-privs',
    '--',
    '/usr/bin/env',
    '-i',
    'HOME=/home/agent-web',
    'USER=agent-web',
    'LOGNAME=agent-web',
    'PATH=/usr/local/bin:/usr/bin:/bin',
    'LANG=C.UTF-8',
    'GIT_CONFIG_NOSYSTEM=1',
    'GIT_TERMINAL_PROMPT=0',
    'git',
    'clone',
    '--quiet',
    '--branch',
    'main',
    '--',
    'https://example.org/web.git',
    '/home/agent-web/web',
  ]);
  t.same(committerEnvironment(), { GIT_COMMITTER_NAME: 'agent-runner', GIT_COMMITTER_EMAIL: 'agent-runner@localhost' });
});

t.test('secrets are found and redacted', async (t) => {
  t.same(extractSecrets('.git-credentials', 'https://bot:ghp_abcdefghijklmnop@github.com\nhttps://x:short@h\n'), [
    'ghp_abcdefghijklmnop',
  ]);
  t.same(
    extractSecrets(
      '.claude/.credentials.json',
      JSON.stringify({
        claudeAiOauth: {
          accessToken: 'sk-ant-oat01-AAAA',
          refreshToken: 'sk-ant-ort01-BBBB',
          expiresAt: 1,
          scopes: ['user:inference'],
        },
      }),
    ),
    ['sk-ant-oat01-AAAA', 'sk-ant-ort01-BBBB'],
  );
  t.same(
    extractSecrets(
      '.codex/auth.json',
      JSON.stringify({
        OPENAI_API_KEY: 'sk-proj-123456789',
        tokens: { id_token: 'eyJhbGciOi.x.y' },
        last_refresh: '2026-01-01',
      }),
    ),
    ['sk-proj-123456789', 'eyJhbGciOi.x.y'],
  );
  t.equal(
    redactSecrets('push https://bot:ghp_abcdefghijklmnop@github.com with ghp_abcdefghijklmnop', [
      'ghp_abcdefghijklmnop',
      'ghp_abcd',
    ]),
    'push https://bot:[redacted]@github.com with [redacted]',
  );
  t.equal(redactSecrets('nothing here', []), 'nothing here');
  const files: Record<string, string> = { '/home/u/.git-credentials': 'https://u:tok_0123456789@example.org\n' };
  t.same(await secretValues({ readTextIfExists: async (p) => files[p] }, '/home/u'), ['tok_0123456789']);
});

t.test('the Blocked status is added once, before the finished status', async (t) => {
  t.equal(
    withBlockedStatus('project_name: "x"\nstatuses: ["To Do", "In Progress", "Done"]\n'),
    'project_name: "x"\nstatuses: ["To Do", "In Progress", "Blocked", "Done"]\n',
  );
  t.equal(withBlockedStatus("statuses: ['To Do', 'Done']\n"), 'statuses: ["To Do", "Blocked", "Done"]\n');
  t.equal(
    withBlockedStatus('statuses: ["To Do", "Blocked", "Done"]\n'),
    'statuses: ["To Do", "Blocked", "Done"]\n',
    'already in place: unchanged',
  );
  t.equal(
    withBlockedStatus('statuses: ["To Do", "Done", "Blocked"]\n'),
    'statuses: ["To Do", "Blocked", "Done"]\n',
    'after Done (the old demo config) it would be the finished status: moved',
  );
});

t.test('the repo planner: a new repo, then a provisioned one plans nothing', async (t) => {
  const layout = hostLayout({ AGENT_RUNNER_CONFIG: '/cfg/registry.toml', AGENT_RUNNER_STATE: '/state' });
  const empty: RepoState = emptyRepoState();
  const request = { name: 'web', url: 'https://example.org/web.git', base: undefined, allow: ['github.com'] };
  const first = planRepo(request, empty, layout);
  t.same(
    first.steps.map((step) => step.description),
    [
      'create user agent-web (own group, home /home/agent-web 0700, shell /bin/bash, no sudo)',
      'create user agent-web (own group, home /home/agent-web 0700, shell /bin/bash, no sudo)',
      'create agent identity agent-web-agent (own group, home /home/agent-web-agent 0700, password locked, shell /bin/bash)',
      'create agent identity agent-web-agent (own group, home /home/agent-web-agent 0700, password locked, shell /bin/bash)',
      'create gate identity agent-web-gate (own group, home /home/agent-web-gate 0700, password locked, shell /bin/bash)',
      'create gate identity agent-web-gate (own group, home /home/agent-web-gate 0700, password locked, shell /bin/bash)',
      'create hand-off folder /home/agent-web.handoff (root:root mode 0755)',
      'create hand-off folder /home/agent-web.handoff/to-agent (agent-web:agent-web-agent mode 2750)',
      'create hand-off folder /home/agent-web.handoff/from-agent (agent-web-agent:agent-web mode 2750)',
      'create hand-off folder /home/agent-web.handoff/to-gate (agent-web:agent-web-gate mode 2750)',
      'clone https://example.org/web.git (main) into /home/agent-web/web as agent-web',
      'author of agent commits: user.name "agent-web"',
      'author of agent commits: user.email "agent-web@localhost"',
      'register repo web in /cfg/registry.toml (proxy port 700, runner proxy port 701, allow: github.com), mode 0600',
      'regenerate and load the egress ruleset (1 repo), saved to /cfg/egress.json',
      "regenerate the proxy config and reload it (port 700 for web's agent, 701 for its runner)",
    ],
  );
  t.equal(
    (first.steps.find((step) => 'write' in step) as { write: { mode: number } }).write.mode,
    0o600,
    'the registry is written root-only',
  );
  const registryText = (first.steps.find((step) => 'write' in step) as { write: { text: string } }).write.text;
  const repos = parseRegistry(registryText, 'r', cronScheduler).registry.repos;
  const uids = new Map([['agent-web', 1500]]);
  const rendered = squidConfig(repos, layout.squid);
  const ruleset = egressRuleset(repos, repoUids(repos, uids));
  const live = { nftables: ruleset.nftables.slice(3).map((entry) => entry.add as object) };
  const done: RepoState = {
    ...empty,
    registryText,
    uids,
    account: {
      name: 'agent-web',
      uid: 1500,
      gid: 1500,
      home: '/home/agent-web',
      shell: '/bin/bash',
      comment: 'agent-runner repo web',
    },
    identities: provisionedIdentities(),
    clone: { exists: true, ownerUid: 1500, isGit: true },
    gitIdentity: { name: 'agent-web', email: 'agent-web@localhost' },
    backlogConfig: 'statuses: ["To Do", "Blocked", "Done"]\n',
    liveTable: live,
    egressFileText: renderRuleset(ruleset),
    squidFiles: new Map([
      [rendered.configFile, rendered.config],
      ...rendered.allowlists.map((file) => [file.path, file.text] as [string, string]),
    ]),
    squidRunning: true,
  };
  t.same(planRepo({ ...request, allow: undefined }, done, layout).steps, []);
  t.same(
    planRepo({ ...request, allow: ['github.com', '.npmjs.org'] }, done, layout).steps.map((step) => step.description),
    [
      'register repo web in /cfg/registry.toml (proxy port 700, runner proxy port 701, allow: github.com, .npmjs.org), mode 0600',
      "regenerate the proxy config and reload it (port 700 for web's agent, 701 for its runner)",
    ],
  );
  t.throws(() => planRepo({ ...request, allow: ['10.0.0.1'] }, done, layout), /"10\.0\.0\.1" is not a domain name/);
});
