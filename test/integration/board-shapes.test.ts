// A board that is not a folder of files (a file, a symbolic link, a FIFO, a
// device, or in git a blob, a link or a submodule where backlog/ or
// backlog/tasks/ should be) is one clear error naming the path and the fix,
// exit 2, never a stack trace: for next, orchestrate and status reading the
// checkout, for next reading auto/work from git objects, and in fleet the
// repo's own row says so while the other repos are read as usual.
import t, { type Test } from 'tap';
import { cpSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import * as path from 'node:path';
import { cli } from '../helpers/in-process-cli.js';
import { drainFixture, taskFiles } from '../helpers/drain-fixture.js';
import { git, gitRepo, tempDir } from '../helpers/temp.js';
import { EXIT } from '../../src/errors.js';

type DiskShape = 'file' | 'link' | 'fifo' | 'device';

const SAYS: Record<DiskShape | 'submodule', RegExp> = {
  file: /is a file, not a folder/,
  link: /is a symbolic link/,
  fifo: /is a FIFO \(named pipe\), not a folder/,
  device: /is a device, not a folder/,
  submodule: /is a submodule \(a gitlink\), not a folder/,
};

/** Puts `shape` where `relative` was; a link points at a copy of what was there, so only its being a link is wrong. */
function plant(t: Test, root: string, relative: string, shape: DiskShape): void {
  const full = path.join(root, relative);
  const copy = path.join(tempDir(t), path.basename(relative));
  cpSync(full, copy, { recursive: true });
  rmSync(full, { recursive: true, force: true });
  if (shape === 'file') writeFileSync(full, 'not a folder\n');
  else if (shape === 'link') symlinkSync(copy, full);
  else if (shape === 'fifo') execFileSync('mkfifo', [full]);
  // /dev/null's numbers: a character device node (root makes it).
  else execFileSync('mknod', [full, 'c', '1', '3']);
}

function clean(t: Test, result: { code: number; out: string; err: string }, where: string, says: RegExp): void {
  t.equal(result.code, EXIT.usage, `exit 2 (${result.err.trim()})`);
  t.ok(result.err.includes(where), `names ${where}`);
  t.match(result.err, says, 'says what is there');
  t.match(result.err, /folder/, 'says what belongs there');
  t.notMatch(result.err, /internal error|ENOTDIR|\n\s+at /, 'no stack trace, no raw errno');
  t.equal(result.out, '', 'nothing on stdout');
}

for (const relative of ['backlog', 'backlog/tasks']) {
  for (const shape of ['file', 'link', 'fifo', 'device'] as const) {
    t.test(`${relative} is a ${shape} in the checkout: next, orchestrate, status`, async (t) => {
      const fixture = drainFixture(t, [{ id: 'TASK-1', title: 'One' }]);
      const env = { ...fixture.env, AGENT_RUNNER_CONFIG: path.join(fixture.state, 'no-registry.toml') };
      plant(t, fixture.clone, relative, shape);
      const where = path.join(fixture.clone, relative);
      for (const command of [
        ['next', '--workspace', fixture.clone],
        ['next', '--workspace', fixture.clone, '--json'],
        ['orchestrate', '--workspace', fixture.clone, '--no-push'],
        ['status', '--workspace', fixture.clone, '--no-fetch'],
      ])
        await t.test(command.join(' ').replace(fixture.clone, 'CLONE'), async (t) =>
          clean(t, await cli(env, command), where, SAYS[shape]),
        );
    });
  }
}

type GitShape = 'file' | 'link' | 'submodule';

/** A repo on main whose `relative` is `shape` in git (its board otherwise fine). */
function repoWith(t: Test, relative: string, shape: GitShape): string {
  const repo = gitRepo(t, { 'backlog/config.yml': 'statuses: ["To Do", "Done"]\n' });
  const full = path.join(repo, relative);
  rmSync(full, { recursive: true, force: true });
  mkdirSync(path.dirname(full), { recursive: true });
  if (shape === 'file') writeFileSync(full, 'not a folder\n');
  if (shape === 'link') symlinkSync('/etc', full);
  git(repo, 'add', '-A');
  if (shape === 'submodule')
    git(repo, 'update-index', '--add', '--cacheinfo', `160000,${git(repo, 'rev-parse', 'HEAD')},${relative}`);
  git(repo, 'commit', '-q', '-m', `${relative} as a ${shape}`);
  return repo;
}

for (const relative of ['backlog', 'backlog/tasks']) {
  for (const shape of ['file', 'link', 'submodule'] as const) {
    t.test(`${relative} is a ${shape} in git: fleet says so in the repo's row, the other repo reads`, async (t) => {
      const bad = repoWith(t, relative, shape);
      const good = gitRepo(t, { ...taskFiles([{ id: 'TASK-1', title: 'One' }]), 'backlog/config.yml': 'x: 1\n' });
      const dir = tempDir(t);
      const registry = path.join(dir, 'registry.toml');
      writeFileSync(
        registry,
        `[repos.bad]\npath = "${bad}"\nproxy_port = 700\n\n[repos.good]\npath = "${good}"\nproxy_port = 701\n`,
        { mode: 0o600 },
      );
      const env = {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        AGENT_RUNNER_CONFIG: registry,
        AGENT_RUNNER_STATE: path.join(dir, 'state'),
      };
      const result = await cli(env, ['fleet', '--json']);
      t.equal(result.code, EXIT.ok, result.err);
      const fleet = JSON.parse(result.out) as {
        repos: { name: string; errors: string[]; board: { ready: number; total: number } | null }[];
      };
      const row = (name: string) => fleet.repos.find((repo) => repo.name === name)!;
      const errors = row('bad').errors.join('\n');
      t.ok(errors.includes(`main:${relative}`), `the bad row names main:${relative}: ${errors}`);
      t.match(errors, SAYS[shape]);
      t.match(errors, /folder/);
      t.match(row('good').board, { ready: 1, total: 1 }, 'the other repo is read as usual');
      t.notMatch(row('good').errors.join('\n'), /board/);
      const human = await cli(env, ['fleet']);
      t.match(human.out, new RegExp(`bad: board: .*main:${relative}`), 'the human table says it under the repo');
    });
  }
}

t.test(
  'next reads auto/work from git objects: a link there is exit 2 naming auto/work, not the checkout',
  async (t) => {
    const fixture = drainFixture(t, [{ id: 'TASK-1', title: 'One' }]);
    git(fixture.clone, 'checkout', '-q', '-b', 'auto/work');
    rmSync(path.join(fixture.clone, 'backlog/tasks'), { recursive: true });
    symlinkSync('/etc', path.join(fixture.clone, 'backlog/tasks'));
    git(fixture.clone, 'add', '-A');
    git(fixture.clone, 'commit', '-q', '-m', 'tasks as a link');
    git(fixture.clone, 'checkout', '-q', 'main');
    const result = await cli(fixture.env, ['next', '--workspace', fixture.clone]);
    t.equal(result.code, EXIT.usage, result.err);
    t.match(result.err, /auto\/work:backlog\/tasks/);
    t.match(result.err, SAYS.link);
    t.notMatch(result.err, /internal error|\n\s+at /);
  },
);
