// Refreshes never overlap, a failed read keeps the last fleet and says why,
// and --interval is checked.
import t from 'tap';
import type { Fleet } from '../../src/control/fleet/fleet.js';
import { FleetRefresher, type RefreshState } from '../../tui/refresh.js';
import { parseInterval } from '../../src/cli/tui.js';
import { UsageError } from '../../src/errors.js';

const fleet = (generatedAt: string): Fleet => ({ generatedAt, registry: '/r.toml', problems: [], repos: [] });

/** A loader whose reads finish only when the test says so. */
function gatedLoader() {
  const pending: { resolve: (fleet: Fleet) => void; reject: (error: Error) => void }[] = [];
  let calls = 0;
  return {
    load: () => {
      calls++;
      return new Promise<Fleet>((resolve, reject) => pending.push({ resolve, reject }));
    },
    get calls() {
      return calls;
    },
    next: () => pending.shift()!,
  };
}

t.test('a tick while a read is still going is skipped', async (t) => {
  const loader = gatedLoader();
  let now = 1000;
  const seen: RefreshState[] = [];
  const refresher = new FleetRefresher(
    loader.load,
    () => now,
    (state) => seen.push(state),
  );
  const first = refresher.refresh();
  t.equal(refresher.state.reading, true);
  t.equal(await refresher.refresh(), 'skipped');
  t.equal(await refresher.refresh(), 'skipped');
  t.equal(loader.calls, 1, 'one read in flight, not three');
  now = 2500;
  loader.next().resolve(fleet('A'));
  t.equal(await first, 'read');
  t.same(refresher.state, { fleet: fleet('A'), lastReadAt: 2500, error: null, reading: false });
  t.same(
    seen.map((state) => state.reading),
    [true, false],
    'the screen is redrawn when a read starts and ends',
  );
  const second = refresher.refresh();
  t.equal(loader.calls, 2, 'the next tick reads again');
  loader.next().resolve(fleet('B'));
  t.equal(await second, 'read');
  t.equal(refresher.state.fleet?.generatedAt, 'B');
});

t.test('a failed read keeps the last fleet, shows the error, and the next read clears it', async (t) => {
  const loader = gatedLoader();
  const refresher = new FleetRefresher(
    loader.load,
    () => 7,
    () => undefined,
  );
  let pending = refresher.refresh();
  loader.next().resolve(fleet('A'));
  await pending;
  pending = refresher.refresh();
  loader.next().reject(new Error('EISDIR: illegal operation on a directory, read'));
  t.equal(await pending, 'failed');
  t.same(refresher.state, {
    fleet: fleet('A'),
    lastReadAt: 7,
    error: 'EISDIR: illegal operation on a directory, read',
    reading: false,
  });
  pending = refresher.refresh();
  loader.next().resolve(fleet('B'));
  await pending;
  t.same(refresher.state, { fleet: fleet('B'), lastReadAt: 7, error: null, reading: false });
});

t.test('--interval', async (t) => {
  t.equal(parseInterval('2'), 2);
  t.equal(parseInterval('0.5'), 0.5);
  t.equal(parseInterval('3600'), 3600);
  for (const bad of ['0', '0.2', '-1', 'abc', '1e3', '3601', '']) {
    t.throws(
      () => parseInterval(bad),
      new UsageError(`--interval must be a number of seconds from 0.5 to 3600, not "${bad}"`),
      bad,
    );
  }
});
