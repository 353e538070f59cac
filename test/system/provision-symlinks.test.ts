// Provision and doctor look into a repo user's clone as root. Each attack is
// planted for real in a provisioned clone (links to another repo user's git
// token, to a root-owned dir, to a root-only file; a FIFO; an oversized file;
// the clone itself a link) and provision/doctor must refuse with an error
// naming the path, never read or write through the link, never hang; and a
// plain clone still provisions.
import t from 'tap';
import { readFileSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import { execFileSync, spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { cli } from '../helpers/in-process-cli.js';
import { systemTestMayRun } from '../helpers/system.js';
import { provisionFixture } from '../helpers/provision-fixture.js';
import { hostileKit, makeVictim } from '../helpers/hostile-repo.js';
import { useBrokerAccount } from '../helpers/broker-account.js';

const WITHIN_MS = 30_000;

async function bounded<T>(work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>(
    (_, reject) => (timer = setTimeout(() => reject(new Error(`no answer within ${WITHIN_MS} ms (hung)`)), WITHIN_MS)),
  );
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

if (systemTestMayRun(t, ['ip', 'nft', 'squid', 'setpriv', 'useradd', 'git', 'mkfifo'])) {
  // provision host makes the broker's account: it is shared with the other system tests that need it.
  useBrokerAccount(t);
  const top = t;
  const { ns, env, name, user, home, clone, provisionArgs } = await provisionFixture(
    t,
    {
      'README.md': '# demo\n',
      'backlog/config.yml': 'project_name: "demo"\nstatuses: ["To Do", "In Progress", "Done"]\n',
      '.agent/gates.sh': '#!/bin/sh\nexit 0\n',
    },
    'links',
  );
  const victim = makeVictim(t);
  const provision = () => bounded(cli(env, provisionArgs));
  const config = path.join(clone, 'backlog', 'config.yml');
  /** Every file in the attacker's home, as root, plus its clone's history: the token must be nowhere. */
  const tokenInAttackerTree = () => {
    const grep = spawnSync('grep', ['-r', '-l', '-a', '-F', '--', victim.token, home], { encoding: 'utf8' });
    const history = spawnSync(
      'git',
      [
        '-c',
        `safe.directory=${clone}`,
        '-c',
        'core.hooksPath=/dev/null',
        '-c',
        'core.fsmonitor=false',
        '-C',
        clone,
        'log',
        '--all',
        '-p',
      ],
      { encoding: 'utf8', env: { PATH: '/usr/bin:/bin', HOME: '/nonexistent', GIT_CONFIG_NOSYSTEM: '1' } },
    );
    return grep.stdout.trim() !== '' || history.stdout.includes(victim.token);
  };
  let kit: ReturnType<typeof hostileKit>;
  const resetBoard = () => {
    execFileSync('rm', ['-f', config]);
    writeFileSync(config, 'project_name: "demo"\nstatuses: ["To Do", "In Progress", "Blocked", "Done"]\n');
    execFileSync('chown', ['-R', '-h', `${user}:${user}`, path.join(clone, 'backlog')]);
  };

  t.test('a plain clone provisions (the legitimate path)', async (t) => {
    t.equal((await cli(env, ['provision', 'host'])).code, 0);
    const result = await provision();
    t.equal(result.code, 0, result.err);
    t.match(readFileSync(config, 'utf8'), /"Blocked"/, 'the Blocked status was written (as the user)');
    t.equal(
      spawnSync('stat', ['-c', '%U', config], { encoding: 'utf8' }).stdout.trim(),
      user,
      "and the file is the user's",
    );
    kit = hostileKit(top, { user, home, clone });
  });

  t.test(
    "backlog/config.yml linked to another repo user's ~/.git-credentials: refused, the token stays put",
    async (t) => {
      const before = victim.snapshot();
      kit.link(config, victim.credentials);
      const result = await provision();
      t.not(result.code, 0, 'provision refuses');
      t.match(result.err, `${config} is a symbolic link`);
      t.notMatch(result.out + result.err, victim.token, 'the token is not in the output');
      t.equal(tokenInAttackerTree(), false, "nor anywhere in the attacker's home or history");
      t.same(victim.snapshot(), before, 'the credentials file is unchanged');
      resetBoard();
    },
  );

  t.test('backlog linked to a root-owned dir: refused, root creates nothing there', async (t) => {
    const before = victim.snapshot();
    kit.link(path.join(clone, 'backlog'), victim.rootDir);
    const result = await provision();
    t.not(result.code, 0);
    t.match(result.err, path.join(clone, 'backlog'));
    t.same(victim.snapshot(), before, 'the root-owned dir got no file and its config.yml is unchanged');
    execFileSync('rm', ['-f', path.join(clone, 'backlog')]);
    execFileSync('mkdir', [path.join(clone, 'backlog')]);
    resetBoard();
  });

  t.test('a FIFO where config.yml should be: refused at once, nothing hangs', async (t) => {
    kit.fifo(config);
    const started = Date.now();
    const result = await provision();
    t.not(result.code, 0);
    t.match(result.err, `${config} is not a regular file`);
    t.ok(Date.now() - started < WITHIN_MS, 'answered without waiting for a writer');
    resetBoard();
  });

  t.test('an oversized config.yml: refused without reading it', async (t) => {
    kit.oversized(config);
    const result = await provision();
    t.not(result.code, 0);
    t.match(result.err, `${config} is 67108864 bytes`);
    resetBoard();
  });

  t.test(".git/config linked to another repo user's credentials: refused", async (t) => {
    const gitConfig = path.join(clone, '.git', 'config');
    const saved = path.join(clone, '.git', 'config.saved');
    renameSync(gitConfig, saved);
    symlinkSync(victim.credentials, gitConfig);
    execFileSync('chown', ['-h', `${user}:${user}`, gitConfig]);
    const result = await provision();
    t.not(result.code, 0);
    t.match(result.err, `${gitConfig} is a symbolic link`);
    t.notMatch(result.out + result.err, victim.token);
    execFileSync('rm', ['-f', gitConfig]);
    renameSync(saved, gitConfig);
  });

  t.test('the clone itself a link to a root-owned dir: refused', async (t) => {
    const aside = `${clone}.aside`;
    renameSync(clone, aside);
    symlinkSync(victim.rootDir, clone);
    execFileSync('chown', ['-h', `${user}:${user}`, clone]);
    const before = victim.snapshot();
    const result = await provision();
    t.not(result.code, 0);
    t.match(result.err, `${clone} is a symbolic link`);
    t.same(victim.snapshot(), before);
    execFileSync('rm', ['-f', clone]);
    renameSync(aside, clone);
  });

  t.test('doctor: .agent/config.json linked to a root-only file is reported, not read', async (t) => {
    const agentConfig = path.join(clone, '.agent', 'config.json');
    kit.link(agentConfig, victim.rootOnlyFile);
    const result = await bounded(cli(env, ['doctor', name, '--netns', ns, '--json']));
    t.notMatch(result.out + result.err, victim.rootSecret, "the root-only file's content is not in the output");
    const checks = JSON.parse(result.out) as
      | { repos?: { checks: { name: string; ok: boolean; detail: string }[] }[] }
      | { name: string; ok: boolean; detail: string }[];
    const flat = JSON.stringify(checks);
    t.match(flat, `${agentConfig} is a symbolic link`, 'the gates check names the link');
    execFileSync('rm', ['-f', agentConfig]);
    const gates = path.join(clone, '.agent', 'gates.sh');
    kit.link(gates, victim.rootOnlyFile);
    const linked = await bounded(cli(env, ['doctor', name, '--netns', ns, '--json']));
    t.match(linked.out, `${gates} is a symbolic link`);
    execFileSync('rm', ['-f', gates]);
    execFileSync(
      'git',
      ['-c', `safe.directory=${clone}`, '-c', 'core.hooksPath=/dev/null', '-C', clone, 'checkout', '--', '.agent'],
      { env: { PATH: '/usr/bin:/bin', HOME: '/nonexistent', GIT_CONFIG_NOSYSTEM: '1' } },
    );
    execFileSync('chown', ['-R', '-h', `${user}:${user}`, path.join(clone, '.agent')]);
  });

  t.test('after the attacks, the plain clone provisions again', async (t) => {
    const result = await provision();
    t.equal(result.code, 0, result.err);
    t.same(kit.markers(), [], 'no planted program ran');
  });
}
