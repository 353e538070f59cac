// fleet's cache of what it read from git, with real repos: a repo whose
// auto/work and base have not moved is answered with no git process and the
// same row; one that moved is read again; a broken cache or a broken repo
// costs a read, never a wrong row or another repo's row. A watcher's view
// in watch.json answers as the cache does, only while the ref files agree.
import t, { type Test } from 'tap';
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { git, gitRepo, tempDir } from '../helpers/temp.js';
import { realControlPorts } from '../../src/io/wire.js';
import { realPorts } from '../../src/io/real-ports.js';
import { gatherFleet, type Fleet, type FleetDeps } from '../../src/control/fleet/fleet.js';
import { readRefOids } from '../../src/git/ref-files.js';
import { fleetCacheFile } from '../../src/paths.js';
import type { ProcessPort } from '../../src/ports.js';
import { BoardSnapshot, readGitView } from '../../src/control/repo-view/index.js';
import { writeWatchStatus } from '../../src/control/watch/index.js';

const BOARD = {
  'backlog/tasks/task-1 - One.md': '---\nid: TASK-1\ntitle: One\nstatus: To Do\n---\n',
  'backlog/tasks/task-2 - Two.md': '---\nid: TASK-2\ntitle: Two\nstatus: Done\n---\n',
};
const REFS = ['refs/heads/auto/work', 'refs/remotes/origin/main', 'refs/heads/main'];

/** A checkout with a board and auto/work one commit ahead of main. */
function checkout(t: Test): string {
  const dir = gitRepo(t, BOARD);
  git(dir, 'checkout', '-q', '-b', 'auto/work');
  git(dir, 'commit', '-q', '--allow-empty', '-m', 'landed');
  git(dir, 'checkout', '-q', 'main');
  return dir;
}

/** gatherFleet with real ports, counting git processes. */
function fleetReader(t: Test, repos: Record<string, string>) {
  const dir = tempDir(t);
  const registry = path.join(dir, 'registry.toml');
  writeFileSync(
    registry,
    Object.entries(repos)
      .map(([name, repoPath], i) => `[repos.${name}]\npath = "${repoPath}"\nproxy_port = ${700 + i}\n`)
      .join('\n'),
  );
  const state = path.join(dir, 'state');
  mkdirSync(state);
  const ports = realControlPorts();
  const counter = { git: 0 };
  const process: ProcessPort = {
    ...ports.process,
    run: (command) => ((counter.git += command.program === 'git' ? 1 : 0), ports.process.run(command)),
  };
  const deps: FleetDeps = { fs: ports.fs, process, locks: ports.locks, scheduler: ports.scheduler };
  const read = async (): Promise<Fleet> => {
    counter.git = 0;
    return gatherFleet(deps, registry, state, Date.parse('2026-11-30T12:00:00Z'));
  };
  return { read, counter, state };
}

const rows = (fleet: Fleet) =>
  fleet.repos.map(({ name, board, staging, errors }) => ({ name, board, staging, errors }));

t.test('ref files read as data: loose, packed, loose over packed; anything else is left to git', async (t) => {
  const fs = realPorts().fs;
  const repo = checkout(t);
  const work = git(repo, 'rev-parse', 'auto/work');
  const main = git(repo, 'rev-parse', 'main');
  t.same(await readRefOids(fs, repo, '.git', REFS), [work, null, main], 'loose refs; no origin');
  git(repo, 'pack-refs', '--all');
  t.same(await readRefOids(fs, repo, '.git', REFS), [work, null, main], 'packed');
  git(repo, 'commit', '-q', '--allow-empty', '-m', 'after packing');
  const moved = git(repo, 'rev-parse', 'main');
  t.same(
    await readRefOids(fs, repo, '.git', REFS),
    [work, null, moved],
    'a loose ref wins over its packed line, as in git',
  );

  const symbolic = checkout(t);
  writeFileSync(path.join(symbolic, '.git', 'refs', 'heads', 'main'), 'ref: refs/heads/auto/work\n');
  t.equal(await readRefOids(fs, symbolic, '.git', REFS), undefined, 'a symbolic ref: git decides');

  const linked = checkout(t);
  const elsewhere = tempDir(t);
  writeFileSync(path.join(elsewhere, 'ref'), `${'f'.repeat(40)}\n`);
  rmSync(path.join(linked, '.git', 'refs', 'heads', 'main'));
  symlinkSync(path.join(elsewhere, 'ref'), path.join(linked, '.git', 'refs', 'heads', 'main'));
  t.equal(await readRefOids(fs, linked, '.git', REFS), undefined, 'a link is never followed');

  const gitFile = tempDir(t);
  writeFileSync(path.join(gitFile, '.git'), `gitdir: ${path.join(repo, '.git')}\n`);
  t.equal(await readRefOids(fs, gitFile, '.git', REFS), undefined, 'a .git file: git decides');

  t.same(
    await readRefOids(fs, tempDir(t), '.git', REFS),
    [null, null, null],
    'no .git: none exists (never a cache hit)',
  );

  const fifo = checkout(t);
  execFileSync('mkfifo', [path.join(fifo, '.git', 'packed-refs')]);
  t.equal(
    await readRefOids(fs, fifo, '.git', REFS),
    undefined,
    'a FIFO where packed-refs should be: refused at once, not waited on',
  );

  const huge = checkout(t);
  writeFileSync(path.join(huge, '.git', 'packed-refs'), `${'e'.repeat(40)} refs/tags/x\n`.repeat(120_000));
  t.equal(await readRefOids(fs, huge, '.git', REFS), undefined, 'packed-refs past its bound: git decides');
});

t.test('a second fleet answers from the cache with no git process, and the same rows', async (t) => {
  const one = checkout(t);
  const two = checkout(t);
  git(two, 'pack-refs', '--all');
  const { read, counter, state } = fleetReader(t, { one, two });
  const cold = await read();
  t.ok(counter.git >= 2, `the first read runs git (${counter.git} processes)`);
  t.same(rows(cold), [
    {
      name: 'one',
      board: { ready: 1, parked: 0, unreadable: 0, total: 2 },
      staging: { exists: true, ahead: 1, behind: 0 },
      errors: [],
    },
    {
      name: 'two',
      board: { ready: 1, parked: 0, unreadable: 0, total: 2 },
      staging: { exists: true, ahead: 1, behind: 0 },
      errors: [],
    },
  ]);
  const warm = await read();
  t.equal(counter.git, 0, 'no git process when nothing moved');
  t.same(warm, cold, 'the same fleet, field by field');
  const file = fleetCacheFile(state);
  t.equal(statSync(file).mode & 0o777, 0o600, 'the cache file is root-only');
  t.equal(statSync(path.dirname(file)).mode & 0o777, 0o700, 'in a root-only folder');
});

t.test('a ref that moved is read again: new commits, new rows', async (t) => {
  const repo = checkout(t);
  const { read, counter } = fleetReader(t, { web: repo });
  await read();
  git(repo, 'checkout', '-q', 'auto/work');
  writeFileSync(
    path.join(repo, 'backlog', 'tasks', 'task-3 - Three.md'),
    '---\nid: TASK-3\ntitle: Three\nstatus: To Do\n---\n',
  );
  git(repo, 'add', '-A');
  git(repo, 'commit', '-q', '-m', 'filed');
  git(repo, 'checkout', '-q', 'main');
  git(repo, 'commit', '-q', '--allow-empty', '-m', 'base moved');
  const after = await read();
  t.ok(counter.git > 0, 'read through git again');
  t.same(rows(after)[0], {
    name: 'web',
    board: { ready: 2, parked: 0, unreadable: 0, total: 3 },
    staging: { exists: true, ahead: 2, behind: 1 },
    errors: [],
  });
  git(repo, 'branch', '-D', 'auto/work');
  const none = await read();
  t.same(
    none.repos[0]!.staging,
    { exists: false, ahead: 0, behind: 0 },
    'auto/work deleted: no staging, not the cached one',
  );
});

t.test('a cache file that is not one is a slower read, never a wrong row', async (t) => {
  const repo = checkout(t);
  const { read, counter, state } = fleetReader(t, { web: repo });
  const cold = await read();
  const file = fleetCacheFile(state);
  for (const text of ['{', 'null', JSON.stringify({ version: 1, repos: { web: { path: repo, board: 'lots' } } })]) {
    writeFileSync(file, text);
    const again = await read();
    t.ok(counter.git > 0, `${text.slice(0, 20)}: read through git`);
    t.same(rows(again), rows(cold));
    t.doesNotThrow(() => JSON.parse(readFileSync(file, 'utf8')), 'and the cache is written anew');
  }
});

t.test('a repo whose .git went away shows its own error; the other repo is answered from the cache', async (t) => {
  const gone = checkout(t);
  const fine = checkout(t);
  const { read, counter } = fleetReader(t, { gone, fine });
  await read();
  rmSync(path.join(gone, '.git'), { recursive: true, force: true });
  const fleet = await read();
  t.ok(fleet.repos[0]!.errors.length > 0, `its row says what is wrong: ${fleet.repos[0]!.errors.join('; ')}`);
  t.equal(fleet.repos[0]!.board, null, 'no cached board shown for it');
  t.same(rows(fleet)[1], {
    name: 'fine',
    board: { ready: 1, parked: 0, unreadable: 0, total: 2 },
    staging: { exists: true, ahead: 1, behind: 0 },
    errors: [],
  });
  t.ok(counter.git > 0 && counter.git <= 3, `only the broken repo ran git (${counter.git})`);
});

/** watch.json as the repo's watcher leaves it after an idle tick: the view its board read made (noteView). */
async function watcherTicked(state: string, name: string, repo: string, process: ProcessPort) {
  const view = await readGitView(process, new BoardSnapshot(process, repo, 'main'), repo, 'main', undefined);
  const at = '2026-11-30T11:59:00.000Z';
  await writeWatchStatus(realPorts().fs, state, {
    repo: name,
    state: 'idle',
    pid: 1,
    heartbeat: at,
    lastTick: at,
    view,
  });
  return view;
}

t.test("a watcher's view answers a cold fleet with no git process, while the ref files name its commits", async (t) => {
  const one = checkout(t);
  const two = checkout(t);
  git(two, 'pack-refs', '--all');
  const fromGit = fleetReader(t, { one, two });
  const expected = rows(await fromGit.read());
  const { read, counter, state } = fleetReader(t, { one, two });
  const process = realControlPorts().process;
  await watcherTicked(state, 'one', one, process);
  await watcherTicked(state, 'two', two, process);
  const cold = await read();
  t.equal(counter.git, 0, 'no git process: both repos answered by their watchers');
  t.same(rows(cold), expected, 'the same rows as read from git');
  t.same(rows(await read()), expected, 'and again, from the cache the cold read wrote');

  git(one, 'commit', '-q', '--allow-empty', '-m', 'base moved after the tick');
  rmSync(fleetCacheFile(state));
  const moved = await read();
  t.ok(counter.git > 0 && counter.git <= 3, `the repo whose base moved is read from git (${counter.git})`);
  t.same(rows(moved)[0]!.staging, { exists: true, ahead: 1, behind: 1 }, 'with the new counts, not the view');
  t.same(rows(moved)[1], expected[1], 'the other still from its view');
});

t.test("a watcher's view for another path, or not one this version writes, is not believed", async (t) => {
  const repo = checkout(t);
  const other = checkout(t);
  git(other, 'commit', '-q', '--allow-empty', '-m', 'different');
  const { read, counter, state } = fleetReader(t, { web: repo });
  const process = realControlPorts().process;
  const view = await watcherTicked(state, 'web', repo, process);
  const status = path.join(state, 'repos', 'web', 'watch.json');
  const base = JSON.parse(readFileSync(status, 'utf8')) as Record<string, unknown>;
  const broken: [string, unknown][] = [
    ['another path', { ...view, path: other }],
    ['another base branch', { ...view, baseBranch: 'trunk' }],
    ['counts that are not counts', { ...view, staging: { exists: true, ahead: -1, behind: 'x' } }],
    ['no commits', { ...view, commits: [null, null, null] }],
  ];
  for (const [what, value] of broken) {
    writeFileSync(status, JSON.stringify({ ...base, view: value }));
    rmSync(fleetCacheFile(state), { force: true });
    const fleet = await read();
    t.ok(counter.git > 0, `${what}: read from git`);
    t.same(rows(fleet)[0]!.staging, { exists: true, ahead: 1, behind: 0 }, `${what}: the repo's own counts`);
  }
});

t.test('a view made again after nothing moved counts staging from the last one: one git process', async (t) => {
  const repo = checkout(t);
  const ports = realControlPorts();
  let calls = 0;
  const process: ProcessPort = { ...ports.process, run: (command) => ((calls += 1), ports.process.run(command)) };
  const snapshot = new BoardSnapshot(process, repo, 'main');
  const first = await readGitView(process, snapshot, repo, 'main', undefined);
  calls = 0;
  const second = await readGitView(process, snapshot, repo, 'main', first);
  t.equal(calls, 1, 'the board check only; no rev-list');
  t.same(second, first);
});
