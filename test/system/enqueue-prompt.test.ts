// A free-text prompt job, end to end as root: enqueue turns nothing into repo
// content; the watcher has the repo user file the task on auto/work, runs it,
// and the job ends in done/ with its result.
import t from 'tap';
import { readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { systemTestMayRun } from '../helpers/system.js';
import { controlFixture, landed, rootGit, runBin } from '../helpers/control-fixture.js';

t.test('enqueue --prompt becomes a task on auto/work and lands', async (t) => {
  if (!systemTestMayRun(t, ['setpriv', 'useradd', 'git'])) return;
  const fixture = controlFixture(t, [{ id: 'TASK-1', title: 'Existing', status: 'Done' }]);
  const headBefore = rootGit(fixture.clone, 'rev-parse', 'HEAD');
  const queued = await runBin(fixture, 'enqueue', [
    fixture.name,
    '--prompt',
    'Add a changelog entry\n\nMention the new flag.',
    '--model',
    'opus',
  ]);
  t.equal(queued.code, 0, queued.stderr);
  const jobId = queued.stdout.trim();
  t.equal(rootGit(fixture.clone, 'rev-parse', 'HEAD'), headBefore, 'enqueue wrote nothing into the repo');

  const watched = await runBin(fixture, 'watch', ['--no-isolation', fixture.name, '--once']);
  t.equal(watched.code, 0, watched.stderr.slice(-1500));
  const done = path.join(fixture.state, 'repos', fixture.name, 'spool', 'done');
  t.same(readdirSync(done), [`${jobId}.json`], 'the job finished exactly once');
  const job = JSON.parse(readFileSync(path.join(done, `${jobId}.json`), 'utf8')) as Record<string, unknown>;
  t.match(JSON.stringify(job), /"exitCode":0/);

  t.same(landed(fixture.origin, 'auto/work'), ['TASK-2'], 'the new task landed on auto/work and was published');
  const file = rootGit(fixture.origin, 'ls-tree', '--name-only', 'auto/work', 'backlog/tasks/')
    .split('\n')
    .find((name) => name.includes('task-2 '));
  t.equal(file, 'backlog/tasks/task-2 - Add-a-changelog-entry.md');
  const text = rootGit(fixture.origin, 'show', `auto/work:${file}`);
  t.match(text, /^title: Add a changelog entry$/m);
  t.match(text, /^status: Done$/m);
  t.match(text, /^ {2}- 'model:opus'$/m, 'the model choice rides on the task as its label');
  t.match(text, /Mention the new flag\./);
});

t.test('a prompt task takes the next number after every task file, also one named beyond ASCII', async (t) => {
  if (!systemTestMayRun(t, ['setpriv', 'useradd', 'git'])) return;
  // git quotes "task-2 - Café.md" in line output: read that way it was missed, and the new task took TASK-2 again.
  const fixture = controlFixture(t, [
    { id: 'TASK-1', title: 'Existing', status: 'Done' },
    { id: 'TASK-2', title: 'Café', status: 'Done' },
  ]);
  const queued = await runBin(fixture, 'enqueue', [fixture.name, '--prompt', 'Add a changelog entry']);
  t.equal(queued.code, 0, queued.stderr);
  const watched = await runBin(fixture, 'watch', ['--no-isolation', fixture.name, '--once']);
  t.equal(watched.code, 0, watched.stderr.slice(-1500));
  t.same(landed(fixture.origin, 'auto/work'), ['TASK-3'], 'the new task is TASK-3');
});
