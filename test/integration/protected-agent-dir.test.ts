// A task never judges itself: with real git, the real CLI and the bundled
// scripted agent, a task that rewrites the gate (or the runner's config) is
// parked before any merge, its red change never reaches auto/work, and the
// gate that runs is auto/work's own, whatever the workspace checkout says.
import t from 'tap';
import { chmodSync, mkdirSync, symlinkSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { git, gitRepo } from '../helpers/temp.js';
import {
  drainFixture,
  landedOn,
  runOrchestrate,
  taskOn,
  RED_ON_BROKEN_GATE,
  type FixtureTask,
} from '../helpers/drain-fixture.js';
import { Git } from '../../src/git/git.js';
import { realPorts } from '../../src/io/real-ports.js';
import { changedSinceFork, protectedPathsDrift } from '../../src/drain/integrate/guard.js';

const PARK_REASON =
  /Parked: changes \.agent\/ or the gates script \(([^)]*)\): a task may not change the runner's config or the gate that judges it; a human must review the branch and merge it by hand \(branch auto\/(TASK-\d+)\)/;

interface Summary {
  outcome: string;
  tasks: { id: string; outcome: string; reason?: string }[];
}

t.test(
  'a task that disarms the gate is parked with its red change; one that edits the config too; a good task lands',
  async (t) => {
    const tasks: FixtureTask[] = [
      {
        id: 'TASK-1',
        title: 'Disarm the gate',
        priority: 'high',
        description: 'agent: write .agent/gates.sh "#!/bin/sh\\nexit 0"\nagent: write BROKEN "red change"',
      },
      {
        id: 'TASK-2',
        title: 'Tune the config',
        description: 'agent: write .agent/config.json "{\\"gates\\": \\"README.md\\"}"',
      },
      { id: 'TASK-3', title: 'Add a feature', priority: 'low', description: 'agent: write feature.txt "feature"' },
    ];
    const fixture = drainFixture(t, tasks);
    const base = git(fixture.clone, 'rev-parse', 'main');
    const run = await runOrchestrate(fixture);
    t.equal(run.code, 0, `orchestrate exits 0 (stderr: ${run.stderr.slice(-800)})`);
    const summary = JSON.parse(run.stdout) as Summary;
    t.same(Object.fromEntries(summary.tasks.map((task) => [task.id, task.outcome])), {
      'TASK-1': 'parked',
      'TASK-2': 'parked',
      'TASK-3': 'landed',
    });

    const disarm = taskOn(fixture.clone, 'auto/work', 'TASK-1', 'Disarm the gate');
    t.match(disarm, /labels:\n {2}- parked\n/);
    t.same(
      PARK_REASON.exec(disarm)?.slice(1),
      ['.agent/gates.sh', 'TASK-1'],
      'the park note names the gate and says a human must merge it',
    );
    t.same(PARK_REASON.exec(taskOn(fixture.clone, 'auto/work', 'TASK-2', 'Tune the config'))?.slice(1), [
      '.agent/config.json',
      'TASK-2',
    ]);

    t.equal(
      git(fixture.clone, 'ls-tree', '--name-only', 'auto/work', 'BROKEN'),
      '',
      'the red change never reached auto/work',
    );
    t.equal(
      git(fixture.clone, 'show', 'auto/work:.agent/gates.sh'),
      RED_ON_BROKEN_GATE.trimEnd(),
      'the gate on auto/work is unchanged',
    );
    t.equal(
      git(fixture.clone, 'show', 'auto/work:.agent/config.json'),
      git(fixture.clone, 'show', `${base}:.agent/config.json`),
      'the config on auto/work is unchanged',
    );
    t.equal(
      git(fixture.clone, 'diff', '--name-only', `${base}`, 'auto/work', '--', '.agent'),
      '',
      'nothing under .agent/ differs from the base',
    );
    t.same(landedOn(fixture.clone, 'auto/work', base), ['TASK-3'], 'only the legitimate task landed');
    t.equal(git(fixture.clone, 'show', 'auto/work:feature.txt'), 'feature');
    t.equal(
      git(fixture.origin, 'rev-parse', 'auto/work'),
      git(fixture.clone, 'rev-parse', 'auto/work'),
      'and was published',
    );
    t.equal(
      git(fixture.clone, 'show', 'auto/TASK-1:.agent/gates.sh'),
      '#!/bin/sh\nexit 0',
      'the parked branch keeps the change for the human to review',
    );
    t.equal(
      run.events.filter((event) => event.event === 'task-started' && event.taskId === 'TASK-1').length,
      1,
      'a parked task is not retried',
    );
  },
);

t.test(
  "the gate that runs is auto/work's committed one, not an uncommitted edit in the workspace checkout",
  async (t) => {
    const fixture = drainFixture(t, [
      { id: 'TASK-1', title: 'Break the build', description: 'agent: write BROKEN "compiler exploded"' },
    ]);
    // The checkout (writable by the repo user) points the gate at a script that always passes.
    const config = JSON.parse(git(fixture.clone, 'show', 'HEAD:.agent/config.json')) as Record<string, unknown>;
    writeFileSync(
      path.join(fixture.clone, '.agent/config.json'),
      JSON.stringify({ ...config, gates: '.agent/green.sh' }),
    );
    writeFileSync(path.join(fixture.clone, '.agent/green.sh'), '#!/bin/sh\nexit 0\n');
    chmodSync(path.join(fixture.clone, '.agent/green.sh'), 0o755);
    const run = await runOrchestrate(fixture);
    t.equal(run.code, 0, run.stderr.slice(-800));
    const summary = JSON.parse(run.stdout) as Summary;
    t.same(
      summary.tasks.map((task) => [task.id, task.outcome]),
      [['TASK-1', 'parked']],
    );
    t.match(
      taskOn(fixture.clone, 'auto/work', 'TASK-1', 'Break the build'),
      /Parked: gate failed: gates exited 1: gate: BROKEN present: compiler exploded/,
      "auto/work's own gate judged it",
    );
  },
);

t.test('protected paths: what a branch changed since its fork, and drift in the index and worktree', async (t) => {
  const repo = gitRepo(t, {
    'README.md': '# x\n',
    '.agent/gates.sh': '#!/bin/sh\nexit 1\n',
    '.agent/config.json': '{}\n',
    'ci/gate.sh': 'x\n',
  });
  const gitPort = new Git(realPorts().process, {
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: '/nonexistent' },
  });
  const head = git(repo, 'rev-parse', 'HEAD');

  git(repo, 'checkout', '-q', '-b', 'rename');
  git(repo, 'mv', '.agent/config.json', 'moved.json');
  git(repo, 'commit', '-q', '-m', 'move the config out');
  t.same(
    (await changedSinceFork(gitPort, repo, head, 'rename')).sort(),
    ['.agent/config.json', 'moved.json'],
    'a rename counts as a delete and an add',
  );
  git(repo, 'checkout', '-q', 'main');
  git(repo, 'merge', '-q', '--no-edit', 'rename');
  t.same(await changedSinceFork(gitPort, repo, 'HEAD', 'rename'), [], 'nothing new once merged');
  git(repo, 'reset', '-q', '--hard', head);

  // Where git cannot name one merge base, the branch's changes are still found.
  git(repo, 'checkout', '-q', '--orphan', 'unrelated');
  git(repo, 'rm', '-rfq', '.');
  writeFileSync(path.join(repo, 'only.txt'), 'x\n');
  mkdirSync(path.join(repo, '.agent'), { recursive: true });
  writeFileSync(path.join(repo, '.agent/gates.sh'), '#!/bin/sh\nexit 0\n');
  git(repo, 'add', '-A');
  git(repo, 'commit', '-q', '-m', 'unrelated history');
  t.same(
    (await changedSinceFork(gitPort, repo, head, 'unrelated')).sort(),
    ['.agent/gates.sh', 'only.txt'],
    'no merge base: every path of the branch counts',
  );
  git(repo, 'checkout', '-q', '-f', 'main');
  git(repo, 'branch', '-q', 'left', head);
  git(repo, 'branch', '-q', 'right', head);
  const commitOn = (branch: string, file: string) => {
    git(repo, 'checkout', '-q', branch);
    writeFileSync(path.join(repo, file), `${file}\n`);
    git(repo, 'add', file);
    git(repo, 'commit', '-q', '-m', file);
  };
  commitOn('left', 'l1');
  commitOn('right', 'r1');
  const left1 = git(repo, 'rev-parse', 'left');
  git(repo, 'merge', '-q', '--no-edit', left1);
  git(repo, 'checkout', '-q', 'left');
  git(repo, 'merge', '-q', '--no-edit', git(repo, 'rev-parse', 'right~1'));
  commitOn('right', '.agent/sneaky.sh');
  commitOn('left', 'l2');
  t.equal(git(repo, 'merge-base', '--all', 'left', 'right').split('\n').length, 2, 'criss-cross: two merge bases');
  t.ok(
    (await changedSinceFork(gitPort, repo, 'left', 'right')).includes('.agent/sneaky.sh'),
    'two merge bases: the change under .agent/ is still seen',
  );
  git(repo, 'checkout', '-q', '-f', 'main');
  git(repo, 'reset', '-q', '--hard', head);

  t.same(await protectedPathsDrift(gitPort, repo, '.agent/gates.sh'), [], 'clean: no drift');
  writeFileSync(path.join(repo, '.agent/gates.sh'), '#!/bin/sh\nexit 0\n');
  t.same(await protectedPathsDrift(gitPort, repo, '.agent/gates.sh'), ['.agent/gates.sh'], 'an edit in the worktree');
  git(repo, 'add', '.agent/gates.sh');
  t.same(await protectedPathsDrift(gitPort, repo, '.agent/gates.sh'), ['.agent/gates.sh'], 'a staged edit');
  git(repo, 'reset', '-q', '--hard', head);
  writeFileSync(path.join(repo, '.agent/extra.sh'), 'x\n');
  t.same(
    await protectedPathsDrift(gitPort, repo, '.agent/gates.sh'),
    ['.agent/extra.sh'],
    'an untracked file under .agent/',
  );
  rmSync(path.join(repo, '.agent'), { recursive: true });
  mkdirSync(path.join(repo, 'elsewhere'));
  symlinkSync('elsewhere', path.join(repo, '.agent'));
  t.same(
    (await protectedPathsDrift(gitPort, repo, '.agent/gates.sh')).sort(),
    ['.agent', '.agent/config.json', '.agent/gates.sh'],
    '.agent replaced by a link: the files gone, the link untracked',
  );
  git(repo, 'reset', '-q', '--hard', head);
  t.same(await protectedPathsDrift(gitPort, repo, '.agent/gates.sh'), [], 'reset puts it back');
  writeFileSync(path.join(repo, 'ci/gate.sh'), 'y\n');
  t.same(await protectedPathsDrift(gitPort, repo, 'ci/gate.sh'), ['ci/gate.sh'], 'a gates script outside .agent/');
  t.same(
    await protectedPathsDrift(gitPort, repo, '.agent/gates.sh'),
    [],
    'which is not protected when it is not the gate',
  );
});
