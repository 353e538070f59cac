// provision host creates the broker's system account for real: a system
// uid, its own group and no other, no home, no login shell; and puts one that
// drifted (a login shell, a supplementary group) back. The account and the
// group made here are removed afterwards.
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync } from 'node:fs';
import * as path from 'node:path';
import { cli } from '../helpers/in-process-cli.js';
import { skipWithReason, systemTestMayRun } from '../helpers/system.js';
import { tempDir } from '../helpers/temp.js';
import { uniqueName } from '../helpers/netns.js';
import { BROKER_ACCOUNT } from '../../src/control/broker/index.js';
import { ownBrokerAccount } from '../helpers/broker-account.js';

const run = (args: string[]) => spawnSync(args[0]!, args.slice(1), { encoding: 'utf8' });
const passwd = () => run(['getent', 'passwd', BROKER_ACCOUNT]);

// Other system tests share the account while they run (useBrokerAccount): this one waits until none does.
const mayRun = systemTestMayRun(t, ['useradd', 'usermod', 'groupadd', 'flock']);
const release = mayRun ? await ownBrokerAccount() : undefined;
if (mayRun && !release) t.fail(`${BROKER_ACCOUNT} stayed in use by other tests for 10 minutes`);
if (release) {
  if (passwd().status === 0) {
    t.teardown(release);
    skipWithReason(
      t,
      'the broker account',
      `${BROKER_ACCOUNT} already exists on this host: the test creates and removes it, and leaves an account it did not make alone`,
    );
  } else {
    const root = tempDir(t, 'agent-runner-broker-account-');
    chmodSync(root, 0o755);
    const env = {
      AGENT_RUNNER_CONFIG: path.join(root, 'etc', 'registry.toml'),
      AGENT_RUNNER_STATE: path.join(root, 'state'),
      PATH: process.env.PATH ?? '/usr/bin:/bin',
    };
    const group = uniqueName('artestg');
    t.teardown(async () => {
      run(['userdel', BROKER_ACCOUNT]);
      run(['groupdel', BROKER_ACCOUNT]);
      run(['groupdel', group]);
      await release();
    });

    t.test('provision host creates it: system uid, own group only, no home, no login shell', async (t) => {
      const result = await cli(env, ['provision', 'host']);
      t.equal(result.code, 0, result.err);
      const [, , uid, gid, , home, shell] = passwd().stdout.trim().split(':');
      const uidMin = Number(/^UID_MIN\s+(\d+)/m.exec(run(['cat', '/etc/login.defs']).stdout)?.[1] ?? 1000);
      t.ok(Number(uid) < uidMin && Number(uid) > 0, `a system uid (${uid}, below ${uidMin})`);
      t.equal(shell, '/usr/sbin/nologin');
      t.equal(home, '/nonexistent');
      t.notOk(existsSync('/nonexistent'), 'no home made');
      t.equal(run(['id', '-G', BROKER_ACCOUNT]).stdout.trim(), gid, 'its own group and no other');
      t.equal(run(['getent', 'group', gid!]).stdout.split(':')[0], BROKER_ACCOUNT);
      t.equal((await cli(env, ['provision', 'host'])).out.split('\n')[0], 'host: no change', 'a second run: no change');
    });

    t.test('a login shell and a supplementary group are taken away again', async (t) => {
      t.equal(run(['groupadd', group]).status, 0);
      t.equal(run(['usermod', '--shell', '/bin/bash', '--append', '--groups', group, BROKER_ACCOUNT]).status, 0);
      const dry = await cli(env, ['provision', 'host', '--dry-run', '--json']);
      const plan = (JSON.parse(dry.out) as { plan: string[] }).plan.join('\n');
      t.match(plan, `${BROKER_ACCOUNT} has the login shell /bin/bash: set /usr/sbin/nologin`);
      t.match(plan, `${BROKER_ACCOUNT} is in the groups ${group}: remove it from every supplementary group`);
      const result = await cli(env, ['provision', 'host']);
      t.equal(result.code, 0, result.err);
      t.equal(passwd().stdout.trim().split(':')[6], '/usr/sbin/nologin');
      t.notMatch(run(['id', '-Gn', BROKER_ACCOUNT]).stdout, group);
    });
  }
}
