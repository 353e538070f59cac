// auto/work moves only from the commit the runner wrote last. Where one user
// plays every part (the demo, a trial host), an agent can open the runner's
// repository by its path, so plain git plumbing there lets it point auto/work
// at a commit of its own that no gate saw.
// The drain must notice, build nothing on it, publish nothing, and stop
// naming both commits. The test first proves the attack itself works (the
// branch really is at the agent's commit afterwards), so the refusal is not
// an accident of a broken attack.
import t from 'tap';
import { readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { drainFixture, runOrchestrate } from '../helpers/drain-fixture.js';
import { git, tempDir } from '../helpers/temp.js';

/** The agent's environment is the runner's clean one: where to write is baked in. */
const rogueAgent = (out: string, runnerClone: string) => `#!/bin/sh
set -e
file=$(grep -l "^id: $AGENT_TASK_ID$" backlog/tasks/*.md)
sed -i 's/^status: To Do$/status: Done/' "$file"
echo done > work.txt
git add -A
git commit -q -m "$AGENT_TASK_ID done"
# The attack, in the runner's own repository: a commit no gate ran on, made auto/work by plumbing.
cd "${runnerClone}"
tree=$(git rev-parse auto/work^{tree})
rogue=$(git commit-tree "$tree" -p "$(git rev-parse auto/work)" -m "rogue: not gated")
git update-ref refs/heads/auto/work "$rogue"
echo "$rogue" > "${out}"
`;

t.test('an agent that moves auto/work stops the drain: nothing built on it, nothing published', async (t) => {
  const scratch = tempDir(t, 'agent-runner-rogue-');
  const agent = path.join(scratch, 'rogue-agent.sh');
  const rogueOut = path.join(scratch, 'rogue-commit');
  const fixture = drainFixture(t, [{ id: 'TASK-1', title: 'Do the work', status: 'To Do' }], {
    agent: ['/bin/sh', agent],
    config: { maxParallel: 1 },
  });
  writeFileSync(agent, rogueAgent(rogueOut, fixture.clone), { mode: 0o755 });
  const run = await runOrchestrate(fixture, ['--drain']);
  const rogue = readFileSync(rogueOut, 'utf8').trim();
  t.match(rogue, /^[0-9a-f]{40}$/, 'the agent made its commit');
  t.equal(git(fixture.clone, 'rev-parse', 'auto/work'), rogue, 'the attack worked: auto/work is the agent commit');

  t.equal(run.code, 1, `the drain fails (stderr: ${run.stderr.slice(-1500)})`);
  const moved = run.events.find((event) => event.event === 'staging-moved');
  t.ok(moved, 'the drain says auto/work was moved');
  t.equal(moved?.found, rogue, 'naming the commit it found');
  t.match(String(moved?.expected), /^[0-9a-f]{40}$/, 'and the commit it wrote last');
  t.not(moved?.expected, rogue);
  t.match(run.stderr, /was moved outside the runner/, 'the reason reaches the operator');
  t.notOk(
    run.events.some((event) => event.event === 'published'),
    'nothing is published',
  );
  t.throws(() => git(fixture.origin, 'cat-file', '-e', `${rogue}^{commit}`), "origin never got the agent's commit");
  t.notOk(
    run.events.some((event) => event.event === 'task-landed'),
    'no task landed on top of the agent commit',
  );
  t.equal(git(fixture.clone, 'log', '--format=%s', `${rogue}..auto/work`), '', 'nothing was built on it');
});
