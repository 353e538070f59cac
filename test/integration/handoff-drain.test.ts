// The hand-off through a real drain: an agent's commits reach the runner only
// as a bundle of its own branch that descends from where the task was cut.
// An agent that rewrites its branch onto history of its own, or leaves it
// where it started, has its task parked with the reason, and nothing lands;
// the control row is the same agent behaving, whose task lands.
import t from 'tap';
import { writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { drainFixture, runOrchestrate } from '../helpers/drain-fixture.js';
import { git, tempDir } from '../helpers/temp.js';

const markDone = `file=$(grep -l "^id: $AGENT_TASK_ID$" backlog/tasks/*.md)
sed -i 's/^status: To Do$/status: Done/' "$file"
`;

const agents: readonly { name: string; script: string; lands: boolean; reason?: RegExp; keptForReview?: true }[] = [
  {
    name: 'a well-behaved agent (control)',
    script: `${markDone}echo done > work.txt
git add -A
git commit -q -m "$AGENT_TASK_ID done"
`,
    lands: true,
  },
  {
    name: 'an agent that swaps its branch for history of its own',
    script: `${markDone}git add -A
git commit -q -m "$AGENT_TASK_ID done"
git checkout -q --orphan rogue
echo mine > rogue.txt
git add -A
git commit -q -m "history the runner never handed out"
git branch -f "auto/$AGENT_TASK_ID" rogue
git checkout -q "auto/$AGENT_TASK_ID"
`,
    lands: false,
    reason: /hand-over of auto\/TASK-1 was refused: [0-9a-f]{12} does not descend from [0-9a-f]{12}/,
  },
  {
    name: 'an agent that commits work but never says Done: parked, its branch kept for review',
    script: `echo half > half.txt
git add -A
git commit -q -m "$AGENT_TASK_ID halfway"
`,
    lands: false,
    keptForReview: true,
  },
  {
    name: 'an agent that says Done and then resets its branch to where it started',
    script: `${markDone}git add -A
git commit -q -m "$AGENT_TASK_ID done"
git reset -q --hard HEAD~1
${markDone}`,
    lands: true,
  },
];

for (const agent of agents) {
  t.test(agent.name, async (t) => {
    const scratch = tempDir(t, 'agent-runner-handoff-');
    const script = path.join(scratch, 'agent.sh');
    writeFileSync(script, `#!/bin/sh\nset -e\n${agent.script}`, { mode: 0o755 });
    const fixture = drainFixture(t, [{ id: 'TASK-1', title: 'Do the work', status: 'To Do' }], {
      agent: ['/bin/sh', script],
      config: { maxParallel: 1, maxAttempts: 1 },
    });
    const before = git(fixture.clone, 'rev-parse', 'main');
    const run = await runOrchestrate(fixture, ['--drain']);
    const landed = run.events.some((event) => event.event === 'task-landed');
    t.equal(landed, agent.lands, `landed: ${agent.lands} (stderr: ${run.stderr.slice(-800)})`);
    if (agent.keptForReview)
      t.equal(
        git(fixture.clone, 'log', '-1', '--format=%s', 'refs/heads/auto/TASK-1'),
        'TASK-1 halfway',
        "the parked task's branch holds what its agent committed, handed over like any work",
      );
    if (agent.reason) {
      const parked = run.events.find((event) => event.event === 'task-parked' || event.event === 'task-finished');
      t.match(JSON.stringify(run.events), agent.reason, 'the reason is said');
      t.ok(parked, 'the task ended');
      t.equal(
        git(fixture.clone, 'log', '--format=%s', `${before}..auto/work`).includes('history the runner never'),
        false,
        "none of the agent's history is on auto/work",
      );
      t.throws(
        () => git(fixture.clone, 'rev-parse', '--verify', '--quiet', 'refs/heads/auto/TASK-1'),
        'the refused branch never exists in the runner repository',
      );
    }
  });
}
