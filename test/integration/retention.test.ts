// Retention on real files: root's records of a repo (run records, finished
// jobs; never a run still running, never a queued job) and a workspace's own
// (transcripts, drain summaries) through `gc --retention-only`, which keeps
// last-drain.json, attempts.json and the task branches.
import t from 'tap';
import { existsSync, mkdirSync, readdirSync, utimesSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { realFs } from '../../src/io/real-ports.js';
import { pruneRootRecords } from '../../src/control/retention/prune.js';
import {
  runFile,
  spoolJobFile,
  transcriptFile,
  workspaceStateDir,
  drainHistoryFile,
  lastDrainFile,
  attemptsFile,
} from '../../src/paths.js';
import { drainFixture, PROJECT_ROOT } from '../helpers/drain-fixture.js';
import { tempDir } from '../helpers/temp.js';
import { spawnSync } from 'node:child_process';

const DAY = 24 * 60 * 60 * 1000;
const NOW = Date.now();
const iso = (ageDays: number) => new Date(NOW - ageDays * DAY).toISOString();

function write(file: string, text: string, ageDays: number): void {
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, text);
  const at = new Date(NOW - ageDays * DAY);
  utimesSync(file, at, at);
}

t.test("root's records: old finished runs and jobs go, running runs and queued jobs stay", async (t) => {
  const state = tempDir(t);
  const run = (id: string, status: string, endedDaysAgo: number | undefined, fileAge: number) =>
    write(
      runFile(state, 'web', id),
      JSON.stringify({
        id,
        status,
        startedAt: iso(100),
        ...(endedDaysAgo === undefined ? {} : { endedAt: iso(endedDaysAgo) }),
      }),
      fileAge,
    );
  run('old-finished', 'finished', 40, 1);
  run('old-interrupted', 'interrupted', 31, 31);
  run('young', 'finished', 3, 3);
  run('ancient-running', 'running', undefined, 400);
  write(runFile(state, 'web', 'garbled'), '{not json', 90);
  const job = (where: string, id: string, finishedDaysAgo: number | undefined, fileAge: number) =>
    write(
      spoolJobFile(state, 'web', where, id),
      JSON.stringify({
        id,
        work: { kind: 'drain' },
        attempt: 1,
        ...(finishedDaysAgo === undefined
          ? {}
          : { result: { outcome: 'succeeded', finishedAt: iso(finishedDaysAgo) } }),
      }),
      fileAge,
    );
  job('done', 'J-old', 35, 35);
  job('done', 'J-young', 2, 2);
  job('failed', 'J-failed-old', 60, 1);
  job('queue', 'J-queued-old', undefined, 90);
  job('running', 'J-running-old', undefined, 90);

  const pruned = await pruneRootRecords(realFs, state, 'web', 30, NOW);
  t.same(pruned, { runRecords: 3, jobs: 2 });
  t.same(
    readdirSync(path.dirname(runFile(state, 'web', 'x'))).sort(),
    ['ancient-running.json', 'young.json'],
    'a running run is kept however old; an unreadable record goes by its file time',
  );
  t.same(readdirSync(path.dirname(spoolJobFile(state, 'web', 'done', 'x'))), ['J-young.json']);
  t.same(readdirSync(path.dirname(spoolJobFile(state, 'web', 'failed', 'x'))), []);
  t.ok(existsSync(spoolJobFile(state, 'web', 'queue', 'J-queued-old')), 'queued jobs are never removed');
  t.ok(existsSync(spoolJobFile(state, 'web', 'running', 'J-running-old')), 'running jobs are never removed');
  t.same(
    await pruneRootRecords(realFs, state, 'web', 30, NOW),
    { runRecords: 0, jobs: 0 },
    'a second pass finds nothing',
  );
});

t.test("gc --retention-only removes the workspace's old transcripts and drain summaries, nothing else", async (t) => {
  const fixture = drainFixture(t, [{ id: 'TASK-1', title: 'One', status: 'To Do' }]);
  const ws = workspaceStateDir(fixture.state, fixture.clone);
  write(transcriptFile(fixture.state, fixture.clone, 'R-old', 'TASK-1'), '{}\n', 45);
  write(transcriptFile(fixture.state, fixture.clone, 'R-new', 'TASK-1'), '{}\n', 1);
  write(drainHistoryFile(ws, 'R-old'), JSON.stringify({ runId: 'R-old', endedAt: iso(45) }), 1);
  write(drainHistoryFile(ws, 'R-new'), JSON.stringify({ runId: 'R-new', endedAt: iso(1) }), 1);
  write(lastDrainFile(ws), '{}', 400);
  write(attemptsFile(ws), '{}', 400);
  const gc = spawnSync(
    process.execPath,
    [
      path.join(PROJECT_ROOT, 'bin', 'agent-runner'),
      'gc',
      '--workspace',
      fixture.clone,
      '--retention-only',
      '--retention-days',
      '30',
      '--json',
      '--yes',
    ],
    { env: fixture.env, encoding: 'utf8' },
  );
  t.equal(gc.status, 0, gc.stderr);
  const result = JSON.parse(gc.stdout) as { removed: string[]; pruned: Record<string, number>; retentionDays: number };
  t.same(result, { removed: [], pruned: { runRecords: 0, jobs: 0, transcripts: 1, drains: 1 }, retentionDays: 30 });
  t.same(readdirSync(path.join(ws, 'transcripts')), ['R-new-TASK-1.jsonl']);
  t.same(readdirSync(path.join(ws, 'drains')), ['R-new.json']);
  t.ok(existsSync(lastDrainFile(ws)) && existsSync(attemptsFile(ws)), 'last-drain.json and attempts.json stay');
  const human = spawnSync(
    process.execPath,
    [path.join(PROJECT_ROOT, 'bin', 'agent-runner'), 'gc', '--workspace', fixture.clone, '--retention-only', '--yes'],
    { env: fixture.env, encoding: 'utf8' },
  );
  t.equal(human.stdout, 'nothing older than 30 days\n', 'the default is 30 days');
});
