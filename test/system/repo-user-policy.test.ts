// A registry that names a system account, or an account agent-runner did not
// make for the repo, is refused by dispatch (repoUser is where dispatch looks
// users up) and by provision, naming the user and the fix; the account that
// provisioning made still works.
import t from 'tap';
import { readFileSync, writeFileSync } from 'node:fs';
import { execFileSync, spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { systemTestMayRun } from '../helpers/system.js';
import { controlFixture, runBin } from '../helpers/control-fixture.js';
import { uniqueName } from '../helpers/netns.js';
import { tempDir } from '../helpers/temp.js';
import { cli } from '../helpers/in-process-cli.js';

t.test('dispatch runs only as a user agent-runner made for the repo', async (t) => {
  if (!systemTestMayRun(t, ['setpriv', 'useradd', 'git'])) return;
  const fixture = controlFixture(t, [{ id: 'TASK-1', title: 'First', status: 'To Do' }]);
  const original = readFileSync(fixture.registry, 'utf8');
  const withUser = (user: string) =>
    writeFileSync(fixture.registry, original.replace(`user = "${fixture.user}"`, `user = "${user}"`));

  withUser('proxy');
  const system = await runBin(fixture, 'dispatch', ['--no-isolation', fixture.name]);
  t.not(system.code, 0);
  t.match(system.stderr, `repo "${fixture.name}": user "proxy" is a system account (uid`);
  t.match(system.stderr, `agent-runner provision repo ${fixture.name}`);

  // A normal account, but not made by agent-runner for this repo.
  const stranger = uniqueName('artest');
  execFileSync('useradd', ['--create-home', '--user-group', '--comment', 'Alice', stranger]);
  t.teardown(() => spawnSync('userdel', ['--force', '--remove', stranger]));
  withUser(stranger);
  const foreign = await runBin(fixture, 'dispatch', ['--no-isolation', fixture.name]);
  t.not(foreign.code, 0);
  t.match(foreign.stderr, `user "${stranger}" was not created by agent-runner for this repo (its comment is "Alice"`);
  t.equal(
    spawnSync('ls', [path.join(fixture.probeOut)])
      .stdout.toString()
      .trim(),
    '',
    'no agent ran',
  );

  writeFileSync(fixture.registry, original);
  const ours = await runBin(fixture, 'dispatch', ['--no-isolation', fixture.name]);
  t.equal(ours.code, 0, ours.stderr);
});

t.test('provision refuses an existing system account as a repo user', async (t) => {
  if (!systemTestMayRun(t, ['ip', 'nft', 'squid', 'setpriv', 'useradd', 'git'])) return;
  const root = tempDir(t, 'agent-runner-userpolicy-');
  const registry = path.join(root, 'etc', 'registry.toml');
  execFileSync('mkdir', ['-p', path.dirname(registry)]);
  const name = uniqueName('u');
  writeFileSync(
    registry,
    `[repos.${name}]\npath = "/srv/${name}"\nuser = "proxy"\nproxy_port = 700\nurl = "https://example.invalid/x.git"\n`,
    { mode: 0o600 },
  );
  const ns = uniqueName('artest');
  execFileSync('ip', ['netns', 'add', ns]);
  t.teardown(() => spawnSync('ip', ['netns', 'del', ns]));
  const result = await cli(
    {
      AGENT_RUNNER_CONFIG: registry,
      AGENT_RUNNER_STATE: path.join(root, 'state'),
      PATH: process.env.PATH ?? '/usr/bin:/bin',
    },
    ['provision', 'repo', name, '--netns', ns],
  );
  t.not(result.code, 0);
  t.match(result.err, `repo "${name}": user "proxy" is a system account`);
  t.equal(readFileSync(registry, 'utf8').includes('user = "proxy"'), true, 'nothing was changed');
});
