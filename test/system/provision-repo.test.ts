// Provisioning for real, inside a namespace: a repo from a local bare origin
// gets its user, clone, identity, board status, registry entry, egress lock
// and proxy; the second run reports no change; --remove undoes it without
// losing the clone.
import t from 'tap';
import { chmodSync, existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { cli } from '../helpers/in-process-cli.js';
import { removeRepoAccounts } from '../helpers/provision-fixture.js';
import { gitDaemon } from '../helpers/git-daemon.js';
import { systemTestMayRun } from '../helpers/system.js';
import { originAndClone, tempDir, git } from '../helpers/temp.js';
import { killSquidByPidFile, netns, uniqueName } from '../helpers/netns.js';
import { squidInstanceInNetns } from '../../backends/host/squid-config.js';
import { defaultUserFor, parseRegistry } from '../../src/control/registry/parse.js';
import { cronScheduler } from '../../src/io/cron.js';
import { useBrokerAccount } from '../helpers/broker-account.js';

if (systemTestMayRun(t, ['ip', 'nft', 'squid', 'setpriv', 'useradd', 'git'])) {
  // provision host makes the broker's account: it is shared with the other system tests that need it.
  useBrokerAccount(t);
  const ns = netns(t);
  const root = tempDir(t, 'agent-runner-provision-');
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
  const name = uniqueName('t');
  const user = defaultUserFor(name);
  t.teardown(() => {
    killSquidByPidFile(path.join(root, 'state', 'squid', 'squid.pid'), squidInstanceInNetns(ns.name));
    removeRepoAccounts(user);
  });
  const args = ['provision', 'repo', name, '--url', url, '--allow', 'allowed.test', '.example.org', '--netns', ns.name];

  t.before(() => daemon.ready());

  t.test('provision host prepares the directories', async (t) => {
    const result = await cli(env, ['provision', 'host']);
    t.equal(result.code, 0, result.err);
    t.equal(statSync(path.join(root, 'state')).mode & 0o7777, 0o750);
    t.equal(statSync(path.join(root, 'etc')).mode & 0o7777, 0o755);
    t.equal(
      statSync(path.join(root, 'state', 'squid')).uid,
      Number(spawnSync('id', ['-u', 'proxy'], { encoding: 'utf8' }).stdout.trim()),
    );
    t.equal((await cli(env, ['provision', 'host'])).out.split('\n')[0], 'host: no change');
  });

  t.test('a dry run plans without doing', async (t) => {
    const result = await cli(env, [...args, '--dry-run', '--json']);
    t.equal(result.code, 0, result.err);
    const report = JSON.parse(result.out) as { changed: boolean; plan: string[] };
    t.equal(report.changed, false);
    t.match(report.plan[0], new RegExp(`^create user ${user}`));
    t.equal(spawnSync('getent', ['passwd', user]).status, 2, 'no user created');
    t.equal(existsSync(env.AGENT_RUNNER_CONFIG), false, 'no registry written');
  });

  t.test('the first run provisions everything', async (t) => {
    const result = await cli(env, [...args, '--json']);
    t.equal(result.code, 0, result.err);
    const report = JSON.parse(result.out) as {
      changed: boolean;
      steps: { description: string; outcome: string }[];
      checklist: string[];
    };
    t.equal(report.changed, true);
    t.same(
      report.steps.map((step) => step.description.split(' ').slice(0, 3).join(' ')),
      [
        'create user ' + user,
        'create user ' + user,
        'create agent identity',
        'create agent identity',
        'create gate identity',
        'create gate identity',
        'create hand-off folder',
        'create hand-off folder',
        'create hand-off folder',
        'create hand-off folder',
        'clone ' + url + ' (main)',
        'author of agent',
        'author of agent',
        'register repo ' + name,
        'regenerate and load',
        'regenerate the proxy',
        'add the Blocked',
        'commit the board',
      ],
    );
    t.match(report.checklist.join('\n'), /\.git-credentials/);
    const { registry, problems } = parseRegistry(
      readFileSync(env.AGENT_RUNNER_CONFIG, 'utf8'),
      'registry.toml',
      cronScheduler,
    );
    t.same(problems, []);
    t.same(
      registry.repos.map((repo) => [repo.name, repo.user, repo.proxyPort, repo.allow, repo.path]),
      [[name, user, 700, ['allowed.test', '.example.org'], `/home/${user}/${name}`]],
    );
    const uid = Number(spawnSync('id', ['-u', user], { encoding: 'utf8' }).stdout.trim());
    t.equal(statSync(`/home/${user}`).mode & 0o777, 0o700, 'home 0700');
    t.equal(statSync(`/home/${user}/${name}`).uid, uid, 'clone owned by the user');
    t.equal(spawnSync('id', ['-nG', user], { encoding: 'utf8' }).stdout.trim(), user, 'only its own group (no sudo)');
    const clone = `/home/${user}/${name}`;
    t.match(
      readFileSync(path.join(clone, 'backlog', 'config.yml'), 'utf8'),
      /statuses: \["To Do", "In Progress", "Blocked", "Done"\]/,
    );
    t.equal(
      git(clone, '-c', `safe.directory=${clone}`, 'log', '-1', '--format=%an|%cn|%s'),
      `${user}|agent-runner|Board: add the Blocked status`,
    );
    t.match(
      ns.exec(['nft', 'list', 'table', 'inet', 'agent_runner']).stdout,
      new RegExp(`meta skuid ${uid} ip daddr 127.0.0.1 tcp dport 701 accept`),
      'the registry user is the runner: its own port, allocated beside the agent port 700',
    );
    t.match(readFileSync(env.AGENT_RUNNER_CONFIG, 'utf8'), /^proxy_port = 700\nrunner_proxy_port = 701$/m);
    t.equal(
      readFileSync(path.join(root, 'etc', 'allow', `${name}.txt`), 'utf8'),
      `# repo ${name}: domains its agents may reach (from the registry)\nallowed.test\n.example.org\n`,
    );
    t.equal(ns.exec(['bash', '-c', 'exec 3<>/dev/tcp/127.0.0.1/700']).status, 0, 'the proxy listens on the repo port');
    t.match(readFileSync(path.join(root, 'etc', 'egress.json'), 'utf8'), new RegExp(`"right": ${uid}`));
  });

  t.test('the second run changes nothing', async (t) => {
    const result = await cli(env, args);
    t.equal(result.code, 0, result.err);
    t.equal(result.out.split('\n')[0], `repo ${name}: no change`);
  });

  t.test('--remove undoes it and keeps the clone', async (t) => {
    const result = await cli(env, ['provision', 'repo', name, '--remove', '--netns', ns.name]);
    t.equal(result.code, 0, result.err);
    for (const account of [user, `${user}-agent`, `${user}-gate`])
      t.equal(spawnSync('getent', ['passwd', account]).status, 2, `${account} deleted`);
    t.same(parseRegistry(readFileSync(env.AGENT_RUNNER_CONFIG, 'utf8'), 'r', cronScheduler).registry.repos, []);
    const aside = readdirSync(path.join(root, 'state', 'removed')).sort();
    t.equal(aside.length, 4, 'the runner home, the agent and gate homes and the hand-off folders');
    t.match(aside[0], new RegExp(`^${name}-\\d{8}T\\d{6}Z$`));
    t.same(
      aside.slice(1),
      ['agent', 'gate', 'handoff'].map((part) => `${aside[0]}.${part}`),
    );
    t.equal(existsSync(`/home/${user}.handoff`), false, 'the hand-off root is moved aside');
    t.equal(
      readFileSync(path.join(root, 'state', 'removed', aside[0]!, name, 'README.md'), 'utf8'),
      '# demo\n',
      'the clone is kept',
    );
    t.equal(statSync(path.join(root, 'state', 'removed', aside[0]!, name)).uid, 0, 'and given to root');
    t.notMatch(ns.exec(['nft', 'list', 'table', 'inet', 'agent_runner']).stdout, /skuid/, 'no agent rules left');
    t.equal(existsSync(path.join(root, 'etc', 'allow', `${name}.txt`)), false);
    const again = await cli(env, ['provision', 'repo', name, '--remove', '--netns', ns.name]);
    t.equal(again.out.split('\n')[0], `repo ${name} (remove): no change`, again.err);
  });
}
