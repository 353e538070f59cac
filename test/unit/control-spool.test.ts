// The job spool as a state machine over a real directory.
import t from 'tap';
import { existsSync, readdirSync } from 'node:fs';
import * as path from 'node:path';
import { decideRecovery, orchestrateArgsFor, Spool, type Job } from '../../src/control/jobs/spool.js';
import { spoolDir } from '../../src/paths.js';
import { realFs, realPorts } from '../../src/io/real-ports.js';
import { UsageError } from '../../src/errors.js';
import { tempDir } from '../helpers/temp.js';

function counterIds() {
  let n = 0;
  return { next: () => `20260101T000000Z-${String(++n).padStart(4, '0')}` };
}

function folders(state: string) {
  const root = spoolDir(state, 'web');
  return Object.fromEntries(
    ['queue', 'running', 'done', 'failed'].map((where) => [where, readdirSync(path.join(root, where)).sort()]),
  );
}

t.test('enqueue, claim FIFO, finish', async (t) => {
  const state = tempDir(t);
  const spool = new Spool(realFs, state, 'web');
  const ids = counterIds();
  const a = await spool.enqueue(ids, '2026-01-01T00:00:00.000Z', { kind: 'task', taskId: 'TASK-3' }, 'opus');
  const b = await spool.enqueue(ids, '2026-01-01T00:00:01.000Z', { kind: 'drain' }, undefined);
  t.same(a, {
    id: '20260101T000000Z-0001',
    repo: 'web',
    work: { kind: 'task', taskId: 'TASK-3' },
    model: 'opus',
    createdAt: '2026-01-01T00:00:00.000Z',
    attempt: 0,
  });
  t.same(folders(state), { queue: [`${a.id}.json`, `${b.id}.json`], running: [], done: [], failed: [] });
  const first = await spool.claimNext('2026-01-01T00:01:00.000Z');
  t.same(first, { ...a, attempt: 1, claimedAt: '2026-01-01T00:01:00.000Z' });
  t.same(folders(state), { queue: [`${b.id}.json`], running: [`${a.id}.json`], done: [], failed: [] });
  await spool.finish(first!, { outcome: 'succeeded', runId: 'r1', exitCode: 0, finishedAt: 'x' });
  t.same(folders(state), { queue: [`${b.id}.json`], running: [], done: [`${a.id}.json`], failed: [] });
  t.same((await spool.read('done', a.id))!.result, { outcome: 'succeeded', runId: 'r1', exitCode: 0, finishedAt: 'x' });
  t.equal((await spool.claimNext('y'))!.id, b.id);
  t.equal(await spool.claimNext('z'), undefined, 'an empty queue claims nothing');
});

t.test('two claimers never get the same job', async (t) => {
  const state = tempDir(t);
  const one = new Spool(realFs, state, 'web');
  const two = new Spool(realFs, state, 'web');
  const ids = counterIds();
  for (let i = 0; i < 10; i++) await one.enqueue(ids, 'now', { kind: 'drain' }, undefined);
  const claims = await Promise.all(Array.from({ length: 14 }, (_, i) => (i % 2 ? one : two).claimNext('now')));
  const got = claims
    .filter((job): job is Job => job !== undefined)
    .map((job) => job.id)
    .sort();
  t.equal(got.length, 10);
  t.equal(new Set(got).size, 10, 'each job claimed exactly once');
  t.same(folders(state).queue, []);
});

t.test('cancel a queued job; a running one is refused', async (t) => {
  const state = tempDir(t);
  const spool = new Spool(realFs, state, 'web');
  const ids = counterIds();
  const a = await spool.enqueue(ids, 'now', { kind: 'drain' }, undefined);
  const b = await spool.enqueue(ids, 'now', { kind: 'drain' }, undefined);
  await spool.claimNext('now');
  await t.rejects(
    spool.cancel(a.id, 'later'),
    new UsageError(
      `job ${a.id} of repo "web" is running and cannot be cancelled; stop the run with: systemctl stop agent-runner-watch@web`,
    ),
  );
  const cancelled = await spool.cancel(b.id, 'later');
  t.same(cancelled.result, { outcome: 'cancelled', finishedAt: 'later' });
  t.same(folders(state), { queue: [], running: [`${a.id}.json`], done: [`${b.id}.json`], failed: [] });
  await t.rejects(spool.cancel('nope', 'x'), {
    message: 'no queued job nope for repo "web"; list them with: enqueue web --list',
  });
  await t.rejects(spool.cancel('../../etc/passwd', 'x'), UsageError);
});

t.test(
  'recovery: requeue uncharged, done when its task landed, give up after the limit, drop a finished duplicate',
  async (t) => {
    const state = tempDir(t);
    const spool = new Spool(realFs, state, 'web');
    const ids = counterIds();
    const a = await spool.enqueue(ids, 'now', { kind: 'drain' }, undefined);
    const b = await spool.enqueue(ids, 'now', { kind: 'task', taskId: 'TASK-1' }, undefined);
    const c = await spool.enqueue(ids, 'now', { kind: 'drain' }, undefined);
    const e = await spool.enqueue(ids, 'now', { kind: 'task', taskId: 'TASK-5' }, undefined);
    const d = await spool.enqueue(ids, 'now', { kind: 'drain' }, undefined);
    for (let i = 0; i < 4; i++) await spool.claimNext('now'); // a, b, c, e running with attempt 1
    // b was interrupted twice before: this is its third interruption.
    await spool.update({ ...(await spool.read('running', b.id))!, interruptions: 2 });
    // c finished but the runner died before removing running/c.
    await spool.finish((await spool.read('running', c.id))!, { outcome: 'succeeded', finishedAt: 'x' });
    await realFs.writeAtomic(
      path.join(spoolDir(state, 'web'), 'running', `${c.id}.json`),
      JSON.stringify({ ...c, attempt: 1 }),
    );
    // e's task landed in the run the runner died in.
    const actions = await spool.recover('then', 3, async (job) => (job.id === e.id ? 'R7' : undefined));
    t.same(actions, [
      { id: a.id, action: 'requeue', attempt: 0, interruptions: 1 },
      {
        id: b.id,
        action: 'give-up',
        reason: 'interrupted 3 times (limit 3); enqueue it again once the cause is fixed',
      },
      { id: c.id, action: 'drop-duplicate' },
      { id: e.id, action: 'landed', runId: 'R7', detail: 'TASK-5 landed in run R7 before the runner died' },
    ]);
    t.same(folders(state), {
      queue: [`${a.id}.json`, `${d.id}.json`],
      running: [],
      done: [`${c.id}.json`, `${e.id}.json`].sort(),
      failed: [`${b.id}.json`],
    });
    t.match(
      (await spool.read('done', e.id))!.result,
      { outcome: 'succeeded', runId: 'R7', detail: 'TASK-5 landed in run R7 before the runner died' },
      'its work landed once: done, not run again',
    );
    const again = await spool.claimNext('later');
    t.equal(again!.id, a.id, 'a requeued job goes back to the front');
    t.equal(again!.attempt, 1, 'the interrupted start was not charged');
    t.equal(again!.interruptions, 1, 'but counted as an interruption');
    t.equal((await spool.read('failed', b.id))!.result!.outcome, 'gave-up');
    t.notOk(existsSync(path.join(spoolDir(state, 'web'), 'running', `${c.id}.json`)));
  },
);

t.test('pure helpers', async (t) => {
  t.same(decideRecovery([], new Set(), 3), []);
  t.same(orchestrateArgsFor({ kind: 'drain' }, undefined), ['--drain']);
  t.same(orchestrateArgsFor({ kind: 'task', taskId: 'TASK-2' }, undefined), ['--task', 'TASK-2']);
  t.same(orchestrateArgsFor({ kind: 'prompt', prompt: 'x' }, 'TASK-9'), ['--task', 'TASK-9']);
  t.throws(() => orchestrateArgsFor({ kind: 'prompt', prompt: 'x' }, undefined));
});

t.test('jobs queued by separate processes within one second run in the order they were queued', async (t) => {
  const state = tempDir(t);
  const spool = new Spool(realFs, state, 'web');
  // Each `enqueue` command is its own process with its own id source.
  const queued: string[] = [];
  for (let i = 0; i < 40; i++)
    queued.push(
      (
        await spool.enqueue(
          realPorts().ids,
          '2026-01-01T00:00:00.000Z',
          { kind: 'task', taskId: `TASK-${i + 1}` },
          undefined,
        )
      ).id,
    );
  const claimed: string[] = [];
  for (let job = await spool.claimNext('now'); job; job = await spool.claimNext('now')) claimed.push(job.id);
  t.same(claimed, queued, 'FIFO');
  const one = realPorts().ids;
  const burst = Array.from({ length: 2000 }, () => one.next());
  t.same([...burst].sort(), burst, 'one process: strictly in order, however fast');
  t.equal(new Set(burst).size, burst.length, 'and unique');
});
