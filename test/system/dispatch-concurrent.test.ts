// Twenty dispatches of one repo at once: exactly one runs, the others exit 75
// naming the holder.
import t from 'tap';
import { writeFileSync, rmSync, existsSync } from 'node:fs';
import * as path from 'node:path';
import { systemTestMayRun } from '../helpers/system.js';
import { controlFixture, landed, startBin } from '../helpers/control-fixture.js';
import { waitFor } from '../helpers/drain-fixture.js';

t.test('twenty dispatches at once: one runs, nineteen are busy', async (t) => {
  if (!systemTestMayRun(t, ['setpriv', 'useradd', 'git'])) return;
  const fixture = controlFixture(t, [{ id: 'TASK-1', title: 'Only', status: 'To Do' }]);
  // The agent waits while "hold" exists, so the winner is still running when the others try.
  writeFileSync(path.join(fixture.probeOut, 'hold'), '');
  const runs = Array.from({ length: 20 }, () => startBin(fixture, 'dispatch', ['--no-isolation', fixture.name]));
  t.teardown(() => {
    for (const run of runs) if (run.child.exitCode === null) run.child.kill('SIGKILL');
  });
  let finished = 0;
  for (const run of runs) void run.done.then(() => finished++);
  await waitFor(() => finished === 19, 60_000, 'nineteen dispatches to give up');
  rmSync(path.join(fixture.probeOut, 'hold'));
  const results = await Promise.all(runs.map((run) => run.done));
  const codes = results.map((result) => result.code).sort((a, b) => (a ?? -1) - (b ?? -1));
  t.same(codes, [0, ...Array(19).fill(75)], 'exactly one ran');
  const busy = results.filter((result) => result.code === 75);
  for (const result of busy) {
    t.match(
      result.stderr,
      new RegExp(
        `agent-runner: repo "${fixture.name}" is busy: held by pid \\d+ \\(dispatch ${fixture.name}\\) since \\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z \\(\\d+s ago\\); try again later, or pass --wait`,
      ),
    );
  }
  t.equal(busy.length, 19);
  t.same(landed(fixture.origin, 'auto/work'), ['TASK-1']);
  t.notOk(existsSync(path.join(fixture.state, 'repos', fixture.name, 'run.lock')));
});
