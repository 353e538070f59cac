// Bad input is answered with one clear error naming the path and the fix,
// exit 2, never a stack trace: a config that is a directory or a link to
// /dev/zero (bounded reads), a registry that is a directory or unreadable, a
// symlink-loop workspace, a .git file whose gitdir is gone, a registered
// path that does not exist; and promote refuses to write over untracked
// files that auto/work adds.
import t, { type Test } from 'tap';
import { chmodSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { cli } from '../helpers/in-process-cli.js';
import { drainFixture, AGENT_RUNNER } from '../helpers/drain-fixture.js';
import { git, tempDir } from '../helpers/temp.js';
import { EXIT } from '../../src/errors.js';

function clean(
  t: Test,
  result: { code: number; err: string },
  code: number,
  message: RegExp | string,
  what: string,
): void {
  t.equal(result.code, code, `${what}: exit ${code}`);
  t.match(result.err, message, `${what}: says what and where`);
  t.notMatch(result.err, /internal error|\n\s+at /, `${what}: no stack trace`);
}

t.test('.agent/config.json that is a directory or a link to /dev/zero', async (t) => {
  const fixture = drainFixture(t, [{ id: 'TASK-1', title: 'One' }]);
  const config = path.join(fixture.clone, '.agent/config.json');
  rmSync(config);
  mkdirSync(config);
  clean(
    t,
    await cli(fixture.env, ['orchestrate', '--workspace', fixture.clone]),
    EXIT.usage,
    /config\.json: is a directory/,
    'a directory',
  );
  rmSync(config, { recursive: true });
  symlinkSync('/dev/zero', config);
  const started = Date.now();
  clean(
    t,
    await cli(fixture.env, ['orchestrate', '--workspace', fixture.clone]),
    EXIT.usage,
    /config\.json: is not a regular file/,
    'a link to /dev/zero',
  );
  t.ok(Date.now() - started < 5000, 'answered at once, nothing read');
});

t.test('a registry that is a directory, or that cannot be read', async (t) => {
  const dir = tempDir(t);
  const registry = path.join(dir, 'registry.toml');
  mkdirSync(registry);
  const env = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    AGENT_RUNNER_CONFIG: registry,
    AGENT_RUNNER_STATE: path.join(dir, 'state'),
  };
  clean(t, await cli(env, ['fleet']), EXIT.usage, /registry\.toml: is a directory/, 'a directory');
  rmSync(registry, { recursive: true });
  writeFileSync(registry, '[repos.web]\npath = "/srv/web"\nproxy_port = 700\n', { mode: 0o600 });
  chmodSync(dir, 0o755);
  // Root reads anything; an operator without the right does not.
  const asNobody = spawnSync(
    'setpriv',
    ['--reuid=nobody', '--regid=nogroup', '--clear-groups', process.execPath, AGENT_RUNNER, 'fleet'],
    { env, encoding: 'utf8' },
  );
  // (tap's process tracker, which it injects into children, cannot write its own dir as nobody: only our first line
  // counts.)
  clean(
    t,
    { code: asNobody.status ?? -1, err: asNobody.stderr.split('\n')[0]! },
    EXIT.usage,
    /registry\.toml: cannot be read \(permission denied\)/,
    'unreadable',
  );
});

t.test('a workspace that is a symlink loop, or whose .git file points at a missing gitdir', async (t) => {
  const fixture = drainFixture(t, [{ id: 'TASK-1', title: 'One' }]);
  const dir = tempDir(t);
  const loop = path.join(dir, 'loop');
  symlinkSync(loop, loop);
  clean(t, await cli(fixture.env, ['next', '--workspace', loop]), EXIT.usage, /loop: is a symbolic link loop/, 'ELOOP');
  clean(
    t,
    await cli(fixture.env, ['orchestrate', '--workspace', loop]),
    EXIT.usage,
    /loop: is a symbolic link loop/,
    'ELOOP (orchestrate)',
  );
  rmSync(path.join(fixture.clone, '.git'), { recursive: true });
  writeFileSync(path.join(fixture.clone, '.git'), `gitdir: ${path.join(dir, 'gone/.git/worktrees/clone')}\n`);
  clean(
    t,
    await cli(fixture.env, ['orchestrate', '--workspace', fixture.clone]),
    EXIT.usage,
    /\.git points at .*gone\/\.git\/worktrees\/clone, which does not exist/,
    'a .git file to a missing gitdir',
  );
});

t.test('a registered repo whose path does not exist is named, not "spawn git ENOENT"', async (t) => {
  const dir = tempDir(t);
  const registry = path.join(dir, 'registry.toml');
  writeFileSync(registry, `[repos.ghost]\npath = "${path.join(dir, 'nowhere')}"\nproxy_port = 700\n`, { mode: 0o600 });
  const result = await cli(
    {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      AGENT_RUNNER_CONFIG: registry,
      AGENT_RUNNER_STATE: path.join(dir, 'state'),
    },
    ['fleet', '--json'],
  );
  const fleet = JSON.parse(result.out) as { repos: { name: string; errors: string[] }[] };
  const errors = fleet.repos.find((repo) => repo.name === 'ghost')!.errors.join('\n');
  t.match(errors, /nowhere: the directory does not exist/);
  t.notMatch(errors, /spawn git ENOENT/);
});

for (const name of ['added.txt', 'café "quoted".txt']) {
  t.test(`promote will not write over an untracked file that auto/work adds: ${name}`, async (t) => {
    const fixture = drainFixture(t, [{ id: 'TASK-1', title: 'One' }]);
    git(fixture.clone, 'checkout', '-q', '-b', 'auto/work');
    writeFileSync(path.join(fixture.clone, name), 'from auto/work\n');
    git(fixture.clone, 'add', name);
    git(fixture.clone, 'commit', '-q', '-m', 'add a file');
    git(fixture.clone, 'checkout', '-q', 'main');
    writeFileSync(path.join(fixture.clone, name), 'mine, untracked\n');
    const head = git(fixture.clone, 'rev-parse', 'HEAD');
    const result = await cli(fixture.env, ['promote', '--workspace', fixture.clone]);
    // A name git would quote in its line output is named as it is.
    clean(t, result, EXIT.failed, `untracked files that auto/work adds (${name}); move or delete them`, 'promote');
    t.equal(git(fixture.clone, 'rev-parse', 'HEAD'), head, 'main did not move');
    t.equal(readFileSync(path.join(fixture.clone, name), 'utf8'), 'mine, untracked\n', 'the file is untouched');
  });
}

t.test('orchestrate --broker-url: http://127.0.0.1:PORT only, refused before anything runs', async (t) => {
  const fixture = drainFixture(t, [{ id: 'TASK-1', title: 'One' }]);
  for (const url of [
    'http://localhost:701',
    'https://127.0.0.1:701',
    'http://127.0.0.1:701/',
    'http://127.0.0.1:701/v1',
    'http://127.0.0.1',
    'http://127.0.0.1:0',
    'http://127.0.0.1:65536',
    'http://user@127.0.0.1:701',
    'http://10.0.0.1:701',
  ])
    clean(
      t,
      await cli(fixture.env, ['orchestrate', '--workspace', fixture.clone, '--broker-url', url]),
      EXIT.usage,
      `--broker-url must be http://127.0.0.1:PORT (the run's broker on loopback, port 1 to 65535, no path), not "${url}"; dispatch passes the repo's broker_port`,
      url,
    );
  t.equal(git(fixture.clone, 'branch', '--list', 'auto/work'), '', 'no drain began');
});
