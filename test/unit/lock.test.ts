// The one lock abstraction: the drain's workspace lock and the control
// plane's per-repo locks, both over the LockPort with the one
// process-identity rule. Built from fakes: no file is touched.
import t from 'tap';
import { acquireLock, clearDeadLock } from '../../src/lock.js';
import { acquireWorkspaceLock } from '../../src/drain/recovery/workspace-lock.js';
import { dispatchExitCode } from '../../src/control/dispatch/dispatch.js';
import type { RunRecord } from '../../src/control/runs/record.js';
import { BusyError, EXIT } from '../../src/errors.js';
import type { LockHolder } from '../../src/ports.js';
import { fakeClock } from '../helpers/fake-ports.js';
import { fakeLocks } from '../helpers/fake-locks.js';

const FILE = '/state/workspaces/web-1234abcd/orchestrate.lock';
const SINCE = '2027-01-15T08:00:00.000Z';

/** Processes by pid with their start times; a pid not here is gone. */
function world(running: Record<number, string>) {
  const clock = { ...fakeClock(Date.parse(SINCE) + 90_000), sleep: async () => undefined };
  return { clock, process: { startTimeOf: async (pid: number) => running[pid] } };
}

const other = (fields: Partial<LockHolder> = {}): LockHolder => ({
  pid: 10,
  startTime: '500',
  command: 'orchestrate R1',
  since: SINCE,
  ...fields,
});

t.test('workspace lock: who wins, who is busy (table)', async (t) => {
  const rows: {
    name: string;
    planted: LockHolder | undefined | 'none';
    running: Record<number, string>;
    expect: 'taken' | string;
  }[] = [
    { name: 'free', planted: 'none', running: {}, expect: 'taken' },
    {
      name: 'a live holder',
      planted: other(),
      running: { 10: '500' },
      expect: `${FILE} is held by pid 10 (orchestrate R1) since ${SINCE}; wait for it to finish`,
    },
    { name: 'a dead holder', planted: other(), running: {}, expect: 'taken' },
    { name: 'a recycled pid', planted: other(), running: { 10: '999' }, expect: 'taken' },
    {
      name: 'a holder recorded without a start time proves nothing',
      planted: other({ startTime: undefined }),
      running: { 10: '500' },
      expect: 'taken',
    },
    {
      name: 'a holder that has not recorded itself',
      planted: undefined,
      running: {},
      expect: `${FILE} is held by a process that has not recorded itself yet; wait for it to finish`,
    },
  ];
  for (const row of rows) {
    const { clock, process } = world(row.running);
    const locks = fakeLocks({ pid: 20, startTime: '700' });
    if (row.planted !== 'none') locks.plant(FILE, row.planted);
    const result = await acquireWorkspaceLock({ locks, process, clock }, FILE, 'gc').then(
      () => 'taken',
      (error: Error) => {
        t.ok(error instanceof BusyError && error.exitCode === EXIT.busy, `${row.name}: busy is exit 75`);
        return error.message;
      },
    );
    t.equal(result, row.expect, row.name);
    if (result === 'taken')
      t.same(
        locks.holderOf(FILE),
        { pid: 20, startTime: '700', command: 'gc', since: new Date(clock.now()).toISOString() },
        `${row.name}: recorded as ours`,
      );
  }
});

t.test('a released workspace lock can be taken again', async (t) => {
  const { clock, process } = world({});
  const locks = fakeLocks({ pid: 20, startTime: '700' });
  const lock = await acquireWorkspaceLock({ locks, process, clock }, FILE, 'orchestrate R2');
  await lock.release();
  t.equal(locks.isLocked(FILE), false);
  await acquireWorkspaceLock({ locks, process, clock }, FILE, 'promote');
  t.equal(locks.holderOf(FILE)?.command, 'promote');
});

t.test('control-plane lock: the busy message names the holder and --wait', async (t) => {
  const { clock, process } = world({ 10: '500' });
  const locks = fakeLocks({ pid: 20, startTime: '700' });
  locks.plant('/state/repos/web/run.lock', other({ command: 'dispatch web' }));
  const error = await acquireLock({ locks, process, clock }, '/state/repos/web/run.lock', {
    command: 'dispatch web',
    wait: false,
    waitFlag: '--wait',
    what: 'repo "web"',
  }).catch((e: unknown) => e);
  t.ok(error instanceof BusyError);
  t.equal(
    (error as Error).message,
    `repo "web" is busy: held by pid 10 (dispatch web) since ${SINCE} (90s ago); try again later, or pass --wait`,
  );
  // watch has no --wait: it must not suggest one.
  const watcher = await acquireLock({ locks, process, clock }, '/state/repos/web/run.lock', {
    command: 'watch web',
    wait: false,
    what: 'repo "web"',
  }).catch((e: unknown) => e);
  t.equal(
    (watcher as Error).message,
    `repo "web" is busy: held by pid 10 (dispatch web) since ${SINCE} (90s ago); try again later`,
  );
});

t.test('clearDeadLock breaks only a dead holder', async (t) => {
  const locks = fakeLocks({ pid: 20, startTime: '700' });
  locks.plant('/l', other());
  const alive = world({ 10: '500' });
  t.same(await clearDeadLock({ locks, ...alive }, '/l'), { cleared: false, holder: other() });
  const dead = world({});
  t.same(await clearDeadLock({ locks, ...dead }, '/l'), { cleared: true, holder: other() });
  t.equal(locks.isLocked('/l'), false);
});

t.test('dispatch exit codes go through the EXIT table', async (t) => {
  const rows: [number | null | undefined, number][] = [
    [0, EXIT.ok],
    [1, EXIT.failed],
    [2, EXIT.usage],
    [75, EXIT.busy],
    [3, EXIT.failed],
    [137, EXIT.failed],
    [null, EXIT.failed],
    [undefined, EXIT.failed],
  ];
  for (const [exitCode, expected] of rows)
    t.equal(dispatchExitCode({ exitCode } as RunRecord), expected, `orchestrate exit ${String(exitCode)}`);
});
