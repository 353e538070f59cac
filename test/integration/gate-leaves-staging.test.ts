// What a gate does never lands: it runs as the gate identity in its own
// checkout of the candidate (here, one user playing every part, its folder
// under the workspace state), so the files it builds or edits and a commit it
// makes stay there; the staging worktree is never its working directory, and
// each task lands on the gate's verdict alone. With tasks gated alone
// (maxBatch 1) and in batches. Real CLI, real git, the scripted agent, a real
// gate script.
import t from 'tap';
import { git } from '../helpers/temp.js';
import { drainFixture, landedOn, runOrchestrate, type FixtureTask } from '../helpers/drain-fixture.js';
import { stagingWorktree } from '../../src/paths.js';

/**
 * Leaves an untracked file, an untracked folder and an edit to a tracked
 * file behind every time; commits them when a task wrote COMMIT_ME. Slow
 * enough that tasks finishing meanwhile queue for a batch.
 */
const MESSY_GATE = [
  '#!/bin/sh',
  'sleep 0.5',
  'echo junk > gate-junk.txt',
  'mkdir -p build && echo out > build/out.txt',
  'echo "edited by the gate" >> README.md',
  'if [ -e COMMIT_ME ]; then git add -A >/dev/null 2>&1 && git commit -q -m "the gate committed" >/dev/null 2>&1; fi',
  'echo "gate: ok"',
  '',
].join('\n');

const BOARD: FixtureTask[] = Array.from({ length: 5 }, (_, i) => {
  const n = i + 1;
  const commits = n === 4 ? '\nagent: write COMMIT_ME "please"' : '';
  return { id: `TASK-${n}`, title: `Task ${n}`, description: `agent: write file-${n}.txt "${n}"${commits}` };
});

interface Summary {
  tasks: { id: string; outcome: string; reason?: string }[];
  gates: { tasks: string[]; ok: boolean }[];
}

for (const maxBatch of [1, 8]) {
  t.test(`maxBatch ${maxBatch}: the gate's files and commits never land, nor reach the staging worktree`, async (t) => {
    const fixture = drainFixture(t, BOARD, { gates: MESSY_GATE, config: { maxParallel: 5, maxBatch } });
    const base = git(fixture.clone, 'rev-parse', 'main');
    const run = await runOrchestrate(fixture);
    t.equal(run.code, 0, run.stderr.slice(-800));
    const summary = JSON.parse(run.stdout) as Summary;
    const outcomes = Object.fromEntries(summary.tasks.map((task) => [task.id, task.outcome]));
    t.same(outcomes, {
      'TASK-1': 'landed',
      'TASK-2': 'landed',
      'TASK-3': 'landed',
      'TASK-4': 'landed',
      'TASK-5': 'landed',
    });
    if (maxBatch > 1)
      t.ok(
        summary.gates.some((gate) => gate.tasks.length > 1),
        `some gate run judged several tasks together (${JSON.stringify(summary.gates)})`,
      );
    else
      t.ok(
        summary.gates.every((gate) => gate.tasks.length === 1),
        'every gate run judged one task',
      );

    t.same([...landedOn(fixture.clone, 'auto/work', base)].sort(), ['TASK-1', 'TASK-2', 'TASK-3', 'TASK-4', 'TASK-5']);
    t.equal(
      git(fixture.clone, 'log', '--format=%s', '--grep', 'the gate committed', 'auto/work'),
      '',
      "the gate's commit is not on auto/work",
    );
    t.equal(git(fixture.clone, 'show', 'auto/work:README.md'), '# fixture', "the gate's edit is not on auto/work");
    t.equal(
      git(fixture.clone, 'ls-tree', '-r', '--name-only', 'auto/work', '--', 'gate-junk.txt', 'build', 'COMMIT_ME'),
      'COMMIT_ME',
      'nor the files it made: only what TASK-4 itself wrote',
    );

    const staging = stagingWorktree(fixture.clone);
    t.equal(
      git(staging, 'status', '--porcelain', '--untracked-files=all'),
      '',
      'the staging worktree is clean after the drain',
    );
    t.equal(git(staging, 'symbolic-ref', 'HEAD'), 'refs/heads/auto/work', 'and on auto/work, not detached');
    t.equal(git(staging, 'rev-parse', 'HEAD'), git(fixture.clone, 'rev-parse', 'auto/work'));
  });
}
