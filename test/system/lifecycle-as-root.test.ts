// status, promote, discard and gc as root: on a repo user's checkout they run
// as that user, never as root. The attack: the user's clone has an `ext::`
// origin (protocol.ext.allow=always), an fsmonitor and hooks, each of which
// records the uid it ran as; root's own git config trusts every directory
// (what an operator adds after the safe.directory error). No marker may ever
// say uid 0. Then the legitimate path: promote --repo as root fast-forwards
// and pushes as the user, status shows it, and every file made belongs to
// the user. And root refuses a user's checkout that is not registered.
import t from 'tap';
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { systemTestMayRun } from '../helpers/system.js';
import { controlFixture, rootGit, runBin, type ControlFixture } from '../helpers/control-fixture.js';
import { cli } from '../helpers/in-process-cli.js';
import { tempDir } from '../helpers/temp.js';

const HOOKS = [
  'pre-commit',
  'post-commit',
  'post-merge',
  'post-checkout',
  'pre-push',
  'reference-transaction',
  'pre-auto-gc',
  'post-rewrite',
];

function userHome(user: string): string {
  return execFileSync('getent', ['passwd', user], { encoding: 'utf8' }).split(':')[5]!;
}

/** A command as the fixture's user (its own uid, gid and groups, its HOME). */
function asUser(fixture: ControlFixture, cwd: string, program: string, ...args: string[]): string {
  return execFileSync(
    'setpriv',
    ['--reuid', fixture.user, '--regid', fixture.user, '--init-groups', '--', program, ...args],
    {
      cwd,
      env: { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: userHome(fixture.user), GIT_CONFIG_NOSYSTEM: '1' },
      encoding: 'utf8',
    },
  ).trim();
}

/** Makes `clone` hostile, as its user: every program git may start records `<what> <uid>` into markers. */
function plantHostileConfig(fixture: ControlFixture, clone: string, markers: string): void {
  const script = path.join(fixture.probeOut, 'hostile.sh');
  writeFileSync(script, `#!/bin/sh\necho "$1 $(id -u)" >> '${markers}'\nexit 1\n`);
  chmodSync(script, 0o755);
  asUser(fixture, clone, 'git', 'config', 'remote.origin.url', `ext::${script} ext`);
  asUser(fixture, clone, 'git', 'config', 'protocol.ext.allow', 'always');
  asUser(fixture, clone, 'git', 'config', 'core.fsmonitor', `${script} fsmonitor`);
  const hooks = asUser(fixture, clone, 'git', 'rev-parse', '--git-path', 'hooks');
  for (const hook of HOOKS) {
    const file = path.join(clone, hooks, hook);
    asUser(
      fixture,
      clone,
      'sh',
      '-c',
      `printf '#!/bin/sh\\n"%s" %s\\n' "$1" "$2" > "$3" && chmod +x "$3"`,
      'sh',
      script,
      hook,
      file,
    );
  }
}

/** Root's environment with a git config that trusts every directory. */
function rootEnvTrustingAll(t: Parameters<typeof tempDir>[0], fixture: ControlFixture): Record<string, string> {
  const home = tempDir(t, 'agent-runner-roothome-');
  writeFileSync(path.join(home, '.gitconfig'), '[safe]\n\tdirectory = *\n');
  return { ...fixture.env, HOME: home };
}

function uidsIn(markers: string): string[] {
  return existsSync(markers) ? readFileSync(markers, 'utf8').split('\n').filter(Boolean) : [];
}

t.test('root runs status, promote, discard and gc on a hostile registered repo only as its user', async (t) => {
  if (!systemTestMayRun(t, ['setpriv', 'useradd', 'git'])) return;
  const fixture = controlFixture(t, [{ id: 'TASK-1', title: 'First', status: 'To Do' }]);
  const markers = path.join(fixture.probeOut, 'uids');
  plantHostileConfig(fixture, fixture.clone, markers);
  const env = rootEnvTrustingAll(t, fixture);
  const uid = execFileSync('id', ['-u', fixture.user], { encoding: 'utf8' }).trim();

  const runs = [
    ['status', '--repo', fixture.name],
    ['status', '--workspace', fixture.clone, '--json'],
    ['status', '--repo', fixture.name, '--no-fetch'],
    ['promote', '--repo', fixture.name],
    ['discard', '--workspace', `${fixture.clone}/`, '--yes'],
    ['gc', '--repo', fixture.name, '--yes'],
  ];
  for (const args of runs) {
    const result = await cli(env, args);
    // Fetching from the ext:: remote fails (exit 1); the point is who ran it.
    t.not(result.code, 2, `${args.join(' ')} is not refused: ${result.err.trim().split('\n')[0] ?? ''}`);
    t.notMatch(result.err, /refusing|dubious ownership/, `${args.join(' ')} runs as the user, who owns the clone`);
  }
  const seen = uidsIn(markers);
  t.ok(
    seen.some((line) => line === `ext ${uid}`),
    `the hostile ext:: remote did run, as the user (markers: ${seen.join(', ')})`,
  );
  t.same(
    seen.filter((line) => line.endsWith(' 0')),
    [],
    'no hostile program ever ran as uid 0',
  );
  t.same([...new Set(seen.map((line) => line.split(' ')[1]))], [uid], 'every marker says the repo user');
  t.equal(
    execFileSync('find', [fixture.clone, userHome(fixture.user), '-uid', '0', '-print'], { encoding: 'utf8' }),
    '',
    'root created nothing in the clone or the home',
  );

  // The real binary too, once.
  const bin = await runBin({ ...fixture, env }, 'agent-runner', ['status', '--repo', fixture.name, '--no-fetch']);
  t.equal(bin.code, 0, bin.stderr);
  t.match(
    bin.stdout,
    /^base {5}main \(remotes\/origin\/main\) [0-9a-f]{12}\nstaging {2}auto\/work does not exist yet\n/,
  );
  t.same(
    uidsIn(markers).filter((line) => line.endsWith(' 0')),
    [],
  );
});

t.test(
  "promote --repo as root fast-forwards and pushes as the user; status shows it; the files are the user's",
  async (t) => {
    if (!systemTestMayRun(t, ['setpriv', 'useradd', 'git'])) return;
    const fixture = controlFixture(t, [{ id: 'TASK-1', title: 'First', status: 'To Do' }]);
    const drained = await runBin(fixture, 'dispatch', ['--no-isolation', fixture.name, '--json']);
    t.equal(drained.code, 0, drained.stderr);
    const staging = rootGit(fixture.clone, 'rev-parse', 'auto/work');
    const base = rootGit(fixture.clone, 'rev-parse', 'main');
    t.not(staging, base, 'a task landed on auto/work');

    const before = await cli(fixture.env, ['status', '--repo', fixture.name, '--json']);
    t.equal(before.code, 0, before.err);
    const status = JSON.parse(before.out) as {
      staging: string;
      ahead: number;
      landed: { taskId: string }[];
      lastDrain?: { outcome: string };
    };
    t.equal(status.staging, staging);
    t.same(
      status.landed.map((landing) => landing.taskId),
      ['TASK-1'],
      'status as root shows the landing',
    );
    t.equal(status.lastDrain?.outcome, 'drained', "the last drain is read from the user's own state dir");

    const promoted = await cli(fixture.env, ['promote', '--repo', fixture.name]);
    t.equal(promoted.code, 0, promoted.err);
    t.equal(
      promoted.out,
      `main fast-forwarded ${base.slice(0, 10)}..${staging.slice(0, 10)}; pushed main\n`,
      "promote's own output, relayed unchanged",
    );
    t.equal(rootGit(fixture.clone, 'rev-parse', 'main'), staging, 'main moved to auto/work');
    t.equal(rootGit(fixture.origin, 'rev-parse', 'main'), staging, 'and was pushed to origin');

    const after = await cli(fixture.env, ['status', '--workspace', fixture.clone, '--json']);
    t.equal(after.code, 0, after.err);
    t.match(JSON.parse(after.out), { base: staging, staging, ahead: 0, behind: 0 });
    const again = await cli(fixture.env, ['promote', '--repo', fixture.name, '--json']);
    t.equal(again.code, 0, again.err);
    t.match(JSON.parse(again.out), { promoted: false, pushed: false });
    for (const args of [
      ['gc', '--repo', fixture.name, '--yes'],
      ['discard', '--repo', fixture.name, '--yes'],
    ]) {
      const result = await cli(fixture.env, args);
      t.equal(result.code, 0, `${args.join(' ')}: ${result.err}`);
    }

    const home = userHome(fixture.user);
    t.equal(
      execFileSync('find', [fixture.clone, fixture.origin, home, '-uid', '0', '-print'], { encoding: 'utf8' }),
      '',
      'nothing root-owned in the clone, the origin or the home',
    );
    t.equal(
      execFileSync('stat', ['-c', '%U', path.join(home, '.agent-runner')], { encoding: 'utf8' }).trim(),
      fixture.user,
      "the user's state dir is the user's",
    );

    const usage = await cli(fixture.env, ['status', '--repo', 'nope']);
    t.equal(usage.code, 2);
    t.match(usage.err, `${fixture.registry}: repos.nope: no such repo`);
  },
);

t.test("root refuses a user's checkout that is not registered, and a link the user planted", async (t) => {
  if (!systemTestMayRun(t, ['setpriv', 'useradd', 'git'])) return;
  const fixture = controlFixture(t, []);
  const home = userHome(fixture.user);
  const other = path.join(home, 'other');
  asUser(fixture, home, 'git', 'clone', '-q', fixture.origin, other);
  const markers = path.join(fixture.probeOut, 'uids-other');
  plantHostileConfig(fixture, other, markers);
  const env = rootEnvTrustingAll(t, fixture);

  for (const command of ['status', 'promote', 'discard', 'gc']) {
    const refused = await cli(env, [
      command,
      '--workspace',
      other,
      ...(command === 'discard' || command === 'gc' ? ['--yes'] : []),
    ]);
    t.equal(refused.code, 2, `${command} is refused`);
    t.equal(
      refused.err,
      `agent-runner: ${command}: refusing to run as root in ${other}: ${home} belongs to ${fixture.user} (uid ${execFileSync('id', ['-u', fixture.user], { encoding: 'utf8' }).trim()}), and it is not a registered repo's path. Root never runs git in a checkout a user controls (its config, hooks and remotes would run as root). Use --repo NAME for a registered repo (it runs as the repo's user), or run it as ${fixture.user} (runuser -u ${fixture.user} -- agent-runner ${command} --workspace ${other})\n`,
    );
  }
  t.same(uidsIn(markers), [], 'nothing of the unregistered clone ran at all');

  // A link in the user's home to the registered clone is not followed to decide.
  const link = path.join(home, 'link');
  asUser(fixture, home, 'ln', '-s', fixture.clone, link);
  const viaLink = await cli(env, ['status', '--workspace', link]);
  t.equal(viaLink.code, 2);
  t.match(viaLink.err, `refusing to run as root in ${link}`);

  // A checkout root owns (whole path, .git too) runs as root, as before.
  const mine = tempDir(t, 'agent-runner-rootrepo-');
  chmodSync(mine, 0o755);
  execFileSync('git', ['clone', '-q', fixture.origin, path.join(mine, 'clone')], {
    env: { PATH: '/usr/bin:/bin', HOME: env.HOME!, GIT_CONFIG_NOSYSTEM: '1' },
  });
  mkdirSync(path.join(mine, 'clone', 'backlog'), { recursive: true });
  const rootOwned = await cli(env, ['status', '--workspace', path.join(mine, 'clone'), '--no-fetch']);
  t.equal(rootOwned.code, 0, rootOwned.err);
  t.match(rootOwned.out, /^base {5}main/);
});
