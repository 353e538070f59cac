// The fleet over a registry that is large or partly broken: a typo in one
// [repos.X] shows that repo with its problem (in fleet and the dashboard)
// instead of "no repos registered"; many repos are read with bounded
// concurrency, so a low open-file limit is no crash (EMFILE); a registry with
// thousands of problems is located in one scan.
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { cli } from '../helpers/in-process-cli.js';
import { git, gitRepo, tempDir } from '../helpers/temp.js';
import { AGENT_RUNNER } from '../helpers/drain-fixture.js';
import { buildView } from '../../tui/view-model.js';
import { parseRegistry } from '../../src/control/registry/parse.js';
import { cronScheduler } from '../../src/io/cron.js';
import type { Fleet } from '../../src/control/fleet/fleet.js';

t.test('one typo in [repos.X] shows X with its problem, in fleet and on the dashboard', async (t) => {
  const dir = tempDir(t);
  const registry = path.join(dir, 'registry.toml');
  writeFileSync(registry, `[repos.web]\npath = "${gitRepo(t)}"\nproxy_port = 700\nbase_branch = "main"\n`);
  const env = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    AGENT_RUNNER_CONFIG: registry,
    AGENT_RUNNER_STATE: path.join(dir, 'state'),
  };
  const human = await cli(env, ['fleet']);
  t.equal(human.code, 2, 'the registry has a problem: exit 2, after printing');
  t.notMatch(human.out, 'no repos registered');
  t.match(human.out, /^web\s+INVALID/m, 'the repo is listed');
  t.match(human.out, /web: registry: .*registry\.toml:4: repos\.web\.base_branch: unknown key/);
  const fleet = JSON.parse((await cli(env, ['fleet', '--json'])).out) as Fleet;
  t.same(
    fleet.repos.map((repo) => [repo.name, repo.invalid]),
    [['web', true]],
  );
  const view = buildView(fleet, null, Date.parse(fleet.generatedAt), {
    lastReadAt: Date.parse(fleet.generatedAt),
    error: null,
    reading: false,
    intervalSec: 5,
  });
  t.equal(view.rows.length, 1, 'the dashboard has its row');
  t.match(JSON.stringify(view.details), 'base_branch: unknown key');
  t.notMatch(JSON.stringify(view.details), 'no repos registered');
});

t.test('fleet --json over many repos under a low open-file limit: every repo listed, no EMFILE', async (t) => {
  const dir = tempDir(t);
  const checkout = gitRepo(t, { 'backlog/tasks/task-1 - One.md': '---\nid: TASK-1\ntitle: One\nstatus: To Do\n---\n' });
  git(checkout, 'branch', 'auto/work');
  const repos = 150;
  let text = '';
  mkdirSync(path.join(dir, 'links'));
  for (let r = 0; r < repos; r++) {
    symlinkSync(checkout, path.join(dir, 'links', `r${r}`));
    text += `[repos.r${r}]\npath = "${path.join(dir, 'links', `r${r}`)}"\nproxy_port = ${700 + r}\n`;
  }
  writeFileSync(path.join(dir, 'registry.toml'), text);
  // 150 repos at once is ~750 git processes and 2,000 pipes: far past 256 descriptors.
  const result = spawnSync(
    'sh',
    ['-c', 'ulimit -n 256 && exec "$0" "$@"', process.execPath, AGENT_RUNNER, 'fleet', '--json'],
    {
      env: {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        AGENT_RUNNER_CONFIG: path.join(dir, 'registry.toml'),
        AGENT_RUNNER_STATE: path.join(dir, 'state'),
      },
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
    },
  );
  t.equal(result.status, 0, result.stderr.slice(0, 500));
  t.notMatch(result.stderr, /EMFILE/);
  const fleet = JSON.parse(result.stdout) as Fleet;
  t.equal(fleet.repos.length, repos);
  t.same(
    fleet.repos.filter((repo) => repo.errors.length).map((repo) => repo.errors),
    [],
    'no repo could not be read',
  );
  t.ok(
    fleet.repos.every((repo) => repo.board?.total === 1 && repo.staging?.exists),
    'each was really read',
  );
});

t.test('a registry with 10,000 problems is reported with every line, in one scan', async (t) => {
  let text = '';
  for (let r = 0; r < 2500; r++)
    text += `[repos.r${r}]\npath = "/srv/r${r}"\nproxy_port = ${700 + (r % 300)}\nbogus_a = 1\nbogus_b = 2\nbogus_c = 3\nbogus_d = 4\n`;
  const started = performance.now();
  const { problems, declared } = parseRegistry(text, 'reg.toml', cronScheduler);
  const ms = performance.now() - started;
  t.equal(problems.length, 10_000, 'four unknown keys each');
  t.equal(declared.length, 2500);
  t.equal(problems.find((p) => p.key === 'repos.r2499.bogus_b')?.file, `reg.toml:${2499 * 7 + 5}`, 'each at its line');
  // Generous on a loaded machine: the per-problem rescan took 20 s and more here.
  t.ok(ms < 5000, `parsed and located in ${ms.toFixed(0)} ms`);
});

t.test('staging ahead and behind come from the commits the board read already', async (t) => {
  const dir = tempDir(t);
  const checkout = gitRepo(t, { 'backlog/tasks/task-1 - One.md': '---\nid: TASK-1\ntitle: One\nstatus: To Do\n---\n' });
  git(checkout, 'checkout', '-q', '-b', 'auto/work');
  git(checkout, 'commit', '-q', '--allow-empty', '-m', 'landed');
  git(checkout, 'commit', '-q', '--allow-empty', '-m', 'landed too');
  git(checkout, 'checkout', '-q', 'main');
  git(checkout, 'commit', '-q', '--allow-empty', '-m', 'base moved');
  writeFileSync(path.join(dir, 'registry.toml'), `[repos.web]\npath = "${checkout}"\nproxy_port = 700\n`);
  const env = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    AGENT_RUNNER_CONFIG: path.join(dir, 'registry.toml'),
    AGENT_RUNNER_STATE: path.join(dir, 'state'),
  };
  const fleet = JSON.parse((await cli(env, ['fleet', '--json'])).out) as Fleet;
  t.same(fleet.repos[0]!.staging, { exists: true, ahead: 2, behind: 1 });
  git(checkout, 'branch', '-D', 'auto/work');
  const none = JSON.parse((await cli(env, ['fleet', '--json'])).out) as Fleet;
  t.same(none.repos[0]!.staging, { exists: false, ahead: 0, behind: 0 });
});
