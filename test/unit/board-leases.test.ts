import t from 'tap';
import { areasOf, leasesConflict, pickRunnable } from '../../src/board/leases.js';
import { effortLabel, modelLabel } from '../../src/board/labels.js';
import { isParked, parkNote, parkedReason } from '../../src/board/parking.js';
import { aTask } from '../helpers/board-builder.js';

const ids = (tasks: readonly { id: string }[]) => tasks.map((task) => task.id);

t.test('areasOf reads area:<name> labels, lower-cased, once each', async (t) => {
  t.same(areasOf(aTask({ id: 'TASK-1', labels: ['area:API', 'area:db', 'area:api', 'area:', 'model:x', 'areaX'] })), [
    'api',
    'db',
  ]);
  t.same(areasOf(aTask({ id: 'TASK-1' })), []);
});

t.test('leasesConflict: overlapping areas only', async (t) => {
  const api = aTask({ id: 'TASK-1', labels: ['area:api'] });
  const apiDb = aTask({ id: 'TASK-2', labels: ['area:db', 'area:api'] });
  const db = aTask({ id: 'TASK-3', labels: ['area:db'] });
  const none = aTask({ id: 'TASK-4' });
  t.equal(leasesConflict(api, apiDb), true);
  t.equal(leasesConflict(api, db), false);
  t.equal(leasesConflict(none, api), false);
  t.equal(leasesConflict(none, aTask({ id: 'TASK-5' })), false);
});

t.test('pickRunnable keeps order, skips conflicts, fills the slots', async (t) => {
  const ready = [
    aTask({ id: 'TASK-1', labels: ['area:api'] }),
    aTask({ id: 'TASK-2', labels: ['area:api', 'area:ui'] }),
    aTask({ id: 'TASK-3', labels: ['area:db'] }),
    aTask({ id: 'TASK-4' }),
    aTask({ id: 'TASK-5', labels: ['area:ui'] }),
    aTask({ id: 'TASK-6' }),
  ];
  t.same(ids(pickRunnable(ready, [], 3)), ['TASK-1', 'TASK-3', 'TASK-4']);
  t.same(ids(pickRunnable(ready, [], 10)), ['TASK-1', 'TASK-3', 'TASK-4', 'TASK-5', 'TASK-6']);
  const running = [aTask({ id: 'TASK-9', labels: ['area:db'] }), aTask({ id: 'TASK-4' })];
  t.same(ids(pickRunnable(ready, running, 10)), ['TASK-1', 'TASK-5', 'TASK-6']);
  t.same(ids(pickRunnable(ready, [], 0)), []);
  t.same(ids(pickRunnable([], running, 4)), []);
});

t.test('model and effort labels', async (t) => {
  const task = aTask({
    id: 'TASK-1',
    labels: ['area:x', 'model:', 'model:claude-opus-4', 'effort:high', 'model:other'],
  });
  t.equal(modelLabel(task), 'claude-opus-4');
  t.equal(effortLabel(task), 'high');
  t.equal(modelLabel(aTask({ id: 'TASK-2' })), undefined);
  t.equal(effortLabel(aTask({ id: 'TASK-2', labels: ['effort:'] })), undefined);
});

t.test('parking notes round-trip', async (t) => {
  t.equal(
    parkNote('gate failed:\n  3 tests red  ', 'auto/TASK-3'),
    'Parked: gate failed: 3 tests red (branch auto/TASK-3)',
  );
  t.equal(parkNote('   ', 'auto/TASK-3'), 'Parked: no reason given (branch auto/TASK-3)');
  const parked = aTask({
    id: 'TASK-3',
    labels: ['parked'],
    notes: `earlier\n${parkNote('merge conflict', 'auto/TASK-3')}`,
  });
  t.equal(isParked(parked), true);
  t.equal(parkedReason(parked), 'merge conflict (branch auto/TASK-3)');
  t.equal(isParked(aTask({ id: 'TASK-4', notes: 'Parked: x' })), false);
  t.equal(parkedReason(aTask({ id: 'TASK-4', labels: ['parked'] })), '');
});
