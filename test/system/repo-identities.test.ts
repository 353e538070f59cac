// The three identities of a repo for real: provision makes the runner, the
// agent and the gate (own groups, private homes, locked passwords) and the
// root-made hand-off folders; a repo with only its runner (made before
// these existed) gets exactly the missing parts on its next provision, and
// wrong folders are repaired, a planted link refused. Then the boundaries
// are tried as the agent and the gate (setpriv): the runner's token, home,
// clone, state and refs are closed to them, and doctor proves the same and
// turns red when the runner's home is opened on purpose. Every account and
// folder made here is removed, also on failure (provision-fixture.ts).
import t, { type Test } from 'tap';
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, lstatSync, readdirSync, rmSync, statSync, symlinkSync } from 'node:fs';
import * as path from 'node:path';
import { systemTestMayRun } from '../helpers/system.js';
import { provisionFixture } from '../helpers/provision-fixture.js';
import { cli } from '../helpers/in-process-cli.js';
import { handoffDirs, handoffRoot, identityNames } from '../../src/identities.js';
import type { Check } from '../../backends/host/check.js';
import { useBrokerAccount } from '../helpers/broker-account.js';

const id = (flag: '-u' | '-g', user: string) => Number(execFileSync('id', [flag, user], { encoding: 'utf8' }).trim());
const passwd = (user: string) => execFileSync('getent', ['passwd', user], { encoding: 'utf8' }).trim().split(':');

/** As `user` (setpriv, no new privileges, a clean env): the errno of opening `file` ('ok' when it opened). */
function openAs(user: string, file: string, flags: 'r' | 'a'): string {
  const script = `try { require('fs').closeSync(require('fs').openSync(process.argv[1], '${flags}')); console.log('ok') } catch (e) { console.log(e.code) }`;
  const result = spawnSync(
    'setpriv',
    [
      `--reuid=${user}`,
      `--regid=${user}`,
      '--init-groups',
      '--no-new-privs',
      '--',
      '/usr/bin/env',
      '-i',
      'PATH=/usr/bin:/bin',
      process.execPath,
      '-e',
      script,
      file,
    ],
    { encoding: 'utf8', cwd: '/' },
  );
  return result.stdout.trim() || `failed: ${result.stderr}`;
}

/** Runs `args` as the runner (its own files are made by it, as in production). */
function asRunner(user: string, home: string, args: string[]): void {
  execFileSync(
    'setpriv',
    [
      `--reuid=${user}`,
      `--regid=${user}`,
      '--init-groups',
      '--',
      '/usr/bin/env',
      '-i',
      `HOME=${home}`,
      'PATH=/usr/bin:/bin',
      ...args,
    ],
    { cwd: '/', stdio: 'pipe' },
  );
}

if (systemTestMayRun(t, ['ip', 'nft', 'squid', 'setpriv', 'useradd', 'userdel', 'passwd', 'git'])) {
  // provision host makes the broker's account: it is shared with the other system tests that need it.
  useBrokerAccount(t);
  const fixture = await provisionFixture(
    t,
    {
      'README.md': '# demo\n',
      'backlog/config.yml': 'project_name: "demo"\nstatuses: ["To Do", "In Progress", "Blocked", "Done"]\n',
    },
    'ident',
  );
  const { env, name, user, home, clone } = fixture;
  const provisionArgs = [...fixture.provisionArgs, '--allow', 'allowed.test'];
  const names = identityNames(user);
  const root = handoffRoot(home);
  const dirs = handoffDirs(root);
  const mode = (file: string) => statSync(file).mode & 0o7777;
  const owners = (file: string) => [statSync(file).uid, statSync(file).gid];

  const expectProvisioned = (t: Test) => {
    for (const part of ['agent', 'gate'] as const) {
      const account = names[part];
      const [, , , , gecos, accountHome, shell] = passwd(account);
      t.equal(gecos, `agent-runner repo ${name} ${part}`, `${part}: its comment`);
      t.equal(accountHome, `/home/${account}`, `${part}: home under /home`);
      t.equal(shell, passwd(user)[6], `${part}: the runner's shell`);
      t.equal(mode(accountHome!), 0o700, `${part}: home 0700`);
      t.equal(statSync(accountHome!).uid, id('-u', account), `${part}: home its own`);
      t.equal(
        execFileSync('id', ['-nG', account], { encoding: 'utf8' }).trim(),
        account,
        `${part}: only its own group`,
      );
      t.equal(
        execFileSync('passwd', ['-S', account], { encoding: 'utf8' }).split(' ')[1],
        'L',
        `${part}: password locked`,
      );
    }
    t.same([...owners(root), mode(root)], [0, 0, 0o755], 'hand-off root root:root 0755');
    t.same([...owners(dirs.toAgent), mode(dirs.toAgent)], [id('-u', user), id('-g', names.agent), 0o2750], 'to-agent');
    t.same(
      [...owners(dirs.fromAgent), mode(dirs.fromAgent)],
      [id('-u', names.agent), id('-g', user), 0o2750],
      'from-agent',
    );
    t.same([...owners(dirs.toGate), mode(dirs.toGate)], [id('-u', user), id('-g', names.gate), 0o2750], 'to-gate');
  };

  t.test('provision makes the runner, the agent, the gate and the hand-off folders', async (t) => {
    t.equal((await cli(env, ['provision', 'host'])).code, 0, 'the state dirs Squid needs');
    const result = await cli(env, provisionArgs);
    t.equal(result.code, 0, result.err);
    t.match(result.out, `created agent identity ${names.agent}`);
    t.match(result.out, `created gate identity ${names.gate}`);
    t.match(result.out, `created hand-off folder ${dirs.toGate}`);
    t.equal(passwd(user)[4], `agent-runner repo ${name}`, 'the runner keeps its comment');
    expectProvisioned(t);
    t.equal((await cli(env, provisionArgs)).out.split('\n')[0], `repo ${name}: no change`);
  });

  t.test('a repo with only its runner is migrated by provisioning it again', async (t) => {
    // What a repo provisioned before the identities existed looks like.
    for (const account of [names.agent, names.gate]) execFileSync('userdel', ['--remove', account], { stdio: 'pipe' });
    rmSync(root, { recursive: true, force: true });
    const result = await cli(env, provisionArgs);
    t.equal(result.code, 0, result.err);
    t.match(result.err, `created agent identity ${names.agent}`);
    t.match(result.err, `created gate identity ${names.gate}`);
    t.match(result.err, `created hand-off folder ${root}\n`);
    t.notMatch(result.err, /create user /, 'the runner is left as it was');
    t.notMatch(result.err, /clone /, 'and its clone');
    expectProvisioned(t);
  });

  t.test('a wrong hand-off folder is repaired; a link there is refused, naming it', async (t) => {
    execFileSync('chown', ['root:root', dirs.toAgent]);
    chmodSync(dirs.toAgent, 0o777);
    const repaired = await cli(env, provisionArgs);
    t.equal(repaired.code, 0, repaired.err);
    t.match(repaired.err, `repaired hand-off folder ${dirs.toAgent}`);
    expectProvisioned(t);

    rmSync(dirs.toGate, { recursive: true });
    symlinkSync(home, dirs.toGate);
    const refused = await cli(env, provisionArgs);
    t.not(refused.code, 0);
    t.match(refused.err, `hand-off folder ${dirs.toGate} is a symbolic link`);
    t.ok(lstatSync(dirs.toGate).isSymbolicLink(), 'the link is left alone');
    t.equal(mode(home), 0o700, 'and nothing was changed through it');
    rmSync(dirs.toGate);
    t.equal((await cli(env, provisionArgs)).code, 0);
    expectProvisioned(t);
  });

  t.test('the agent and the gate cannot touch what is the runner’s', async (t) => {
    const token = path.join(home, '.git-credentials');
    asRunner(user, home, [
      'sh',
      '-c',
      'umask 077; echo https://bot:ghp_notarealtoken0000@example.org > "$1"',
      'sh',
      token,
    ]);
    asRunner(user, home, ['mkdir', '-p', '-m', '0700', path.join(home, '.agent-runner')]);
    asRunner(user, home, ['git', '-C', clone, 'branch', 'auto/work']);
    const ref = path.join(clone, '.git', 'refs', 'heads', 'auto', 'work');
    t.ok(existsSync(ref), 'auto/work is a loose ref file');
    t.equal(openAs(user, token, 'r'), 'ok', 'control: the runner reads its own token');
    for (const file of [token, home, clone, path.join(clone, '.git'), path.join(home, '.agent-runner')])
      t.equal(openAs(names.agent, file, 'r'), 'EACCES', `the agent cannot open ${file}`);
    t.equal(openAs(names.agent, ref, 'a'), 'EACCES', "the agent cannot write auto/work's ref");
    t.equal(openAs(names.gate, token, 'r'), 'EACCES', 'the gate cannot read the token');
    t.equal(
      openAs(names.gate, path.join(clone, 'README.md'), 'a'),
      'EACCES',
      "the gate cannot write the runner's repo",
    );
    t.equal(openAs(names.gate, ref, 'a'), 'EACCES', "nor auto/work's ref");
    // The hand-off folders work one way: the agent reads to-agent, writes from-agent only.
    t.equal(openAs(names.agent, dirs.toAgent, 'r'), 'ok', 'the agent reads to-agent');
    t.equal(openAs(names.gate, dirs.toAgent, 'r'), 'EACCES', 'the gate does not');
    t.equal(openAs(names.agent, path.join(dirs.toAgent, 'x'), 'a'), 'EACCES', 'the agent cannot write to-agent');
    t.equal(openAs(names.agent, dirs.toGate, 'r'), 'EACCES', 'the agent cannot read to-gate');
    t.equal(openAs(names.gate, dirs.fromAgent, 'r'), 'EACCES', 'the gate cannot read from-agent');
  });

  t.test('doctor proves the boundaries, and fails when one is opened', async (t) => {
    const identities = async () => {
      const result = await cli(env, ['doctor', name, '--netns', fixture.ns, '--json']);
      const report = JSON.parse(result.out) as { repos: { identities: Check[] }[] };
      return report.repos[0]!.identities;
    };
    const before = await identities();
    t.same(
      before.filter((check) => !check.ok).map((check) => `${check.name}: ${check.detail}`),
      [],
      'every identity line passes',
    );
    t.same(
      before.map((check) => check.name),
      [
        'runner identity',
        'agent identity',
        'gate identity',
        "agent cannot read the runner's home",
        "agent cannot read the runner's git token",
        "agent cannot read the runner's state",
        "agent cannot read the runner's clone",
        "agent cannot read the clone's git dir",
        "agent cannot write the clone's refs",
        "agent cannot write the clone's packed-refs",
        "gate cannot read the runner's home",
        "gate cannot read the runner's git token",
        'gate cannot write the clone',
        `hand-off folder ${path.basename(root)}`,
        'hand-off folder to-agent',
        'hand-off folder from-agent',
        'hand-off folder to-gate',
      ],
    );
    t.match(
      before.find((check) => check.name === "agent cannot read the runner's git token")?.detail,
      `may not open for reading ${path.join(home, '.git-credentials')}: permission denied`,
      'the token file itself is tried',
    );

    // The control: the runner's home opened to everyone.
    chmodSync(home, 0o755);
    t.teardown(() => existsSync(home) && chmodSync(home, 0o700));
    const broken = await identities();
    chmodSync(home, 0o700);
    const failed = broken.filter((check) => !check.ok);
    t.same(
      failed.map((check) => check.name),
      [
        "agent cannot read the runner's home",
        "agent cannot read the runner's clone",
        "agent cannot read the clone's git dir",
        "gate cannot read the runner's home",
      ],
    );
    const homeLine = failed.find((check) => check.name === "agent cannot read the runner's home")!;
    t.equal(homeLine.detail, `${names.agent} could open for reading ${home}`);
    t.equal(homeLine.fix, `chmod 0700 ${home}`);
    t.ok(
      broken.find((check) => check.name === "agent cannot read the runner's git token")?.ok,
      'the token itself stays 0600',
    );
    const text = await cli(env, ['doctor', name, '--netns', fixture.ns]);
    t.match(text.out, `ok   agent cannot read the runner's home`, 'closed again: human lines');
  });

  t.test('--remove deletes all three accounts and moves their homes and the hand-off folders aside', async (t) => {
    const result = await cli(env, ['provision', 'repo', name, '--remove', '--netns', fixture.ns]);
    t.equal(result.code, 0, result.err);
    for (const account of [user, names.agent, names.gate])
      t.equal(spawnSync('getent', ['passwd', account]).status, 2, `${account} deleted`);
    t.equal(existsSync(root), false);
    t.equal(existsSync(`/home/${names.agent}`), false);
    const removed = path.join(env.AGENT_RUNNER_STATE!, 'removed');
    const aside = readdirSync(removed).sort();
    t.same(
      aside.map((entry) => entry.replace(/-\d{8}T\d{6}Z/, '')),
      [name, `${name}.agent`, `${name}.gate`, `${name}.handoff`],
    );
    for (const entry of aside) t.equal(statSync(path.join(removed, entry)).uid, 0, `${entry} is root's`);
  });
}
