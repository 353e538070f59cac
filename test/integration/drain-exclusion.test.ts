// One drain per repository, whatever the state dir: the lock is in the
// repository's git dir, so a second drain of the same checkout with another
// AGENT_RUNNER_STATE is busy (exit 75) and leaves the first one's live
// worktree alone.
import t from 'tap';
import { existsSync, readdirSync, readFileSync, writeFileSync, chmodSync, rmSync } from 'node:fs';
import * as path from 'node:path';
import { tempDir } from '../helpers/temp.js';
import {
  drainFixture,
  landedOn,
  runOrchestrate,
  startOrchestrate,
  waitFor,
  SCRIPTED_AGENT,
} from '../helpers/drain-fixture.js';

t.test('a second drain with another state dir is busy and touches nothing', async (t) => {
  const control = tempDir(t, 'agent-runner-excl-');
  const agent = path.join(control, 'agent.sh');
  writeFileSync(
    agent,
    `#!/bin/sh\nif [ -e ${control}/hang ]; then echo $$ > ${control}/pid; while [ -e ${control}/hang ]; do sleep 0.1; done; fi\nexec ${SCRIPTED_AGENT} "$@"\n`,
  );
  chmodSync(agent, 0o755);
  writeFileSync(path.join(control, 'hang'), '');
  const fixture = drainFixture(
    t,
    [{ id: 'TASK-1', title: 'Add alpha', description: 'agent: write alpha.txt "alpha"' }],
    { agent: [agent] },
  );
  const first = startOrchestrate(fixture);
  t.teardown(() => void first.child.kill('SIGKILL'));
  await waitFor(() => existsSync(path.join(control, 'pid')), 30000, 'the first drain to start its agent');
  const worktrees = path.join(path.dirname(fixture.clone), '.clone.worktrees');
  const before = readdirSync(worktrees).sort();

  const otherState = tempDir(t, 'agent-runner-excl-state-');
  const second = await runOrchestrate({ ...fixture, env: { ...fixture.env, AGENT_RUNNER_STATE: otherState } });
  t.equal(second.code, 75, `busy (${second.stderr.slice(-300)})`);
  t.match(
    second.stderr,
    /agent-runner-drain\.lock is held by pid \d+ \(orchestrate /,
    'naming the lock and its holder',
  );
  t.same(readdirSync(worktrees).sort(), before, "the first drain's worktrees are untouched");
  t.ok(
    existsSync(path.join(control, 'pid')) && Number(readFileSync(path.join(control, 'pid'), 'utf8')) > 0,
    'its agent still runs',
  );

  rmSync(path.join(control, 'hang'));
  const done = await first.done;
  t.equal(done.code, 0, done.stderr.slice(-500));
  t.same(landedOn(fixture.clone, 'auto/work'), ['TASK-1'], 'the first drain landed its task once');
});
