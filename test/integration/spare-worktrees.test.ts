// In the agent's own repository, a drain reuses a finished task's worktree
// for the next task (moved to the new task's folder, switched to its branch,
// cleaned of everything git does not track): the next agent starts from
// exactly auto/work, and the drain ends with no task worktree or branch left
// on either side. A worktree git will not move is not reused: the task gets a
// fresh one.
import t from 'tap';
import { chmodSync, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { tempDir, git } from '../helpers/temp.js';
import {
  drainFixture,
  landedOn,
  runOrchestrate,
  SCRIPTED_AGENT,
  startOrchestrate,
  waitFor,
} from '../helpers/drain-fixture.js';
import { killGroupIfSame, pidFrom } from '../helpers/kill.js';
import { sameUserLayout, sideRepository } from '../../src/identities.js';
import { workspaceStateDir } from '../../src/paths.js';

const SLOW_SECOND = '[ "$AGENT_TASK_ID" = TASK-2 ] && sleep 1';
const TASKS = ['TASK-1', 'TASK-2', 'TASK-3'].map((id, index) => ({
  id,
  title: `Write ${index + 1}`,
  description: `agent: write out/${index + 1}.txt "${id}"`,
}));

/** An agent that notes where it runs and what it found, leaves an ignored file behind, then does the task. */
function recordingAgent(control: string, extra = ''): string {
  const agent = path.join(control, 'agent.sh');
  writeFileSync(
    agent,
    `#!/bin/sh
out=${control}/seen-$AGENT_TASK_ID
{ echo "pwd $(pwd)"; echo "admin $(basename "$(git rev-parse --git-dir)")"; echo "status"; git status --porcelain --ignored --untracked-files=all; echo "end"; } > "$out"
mkdir -p cache && echo junk > cache/junk-$AGENT_TASK_ID
${extra}
exec ${SCRIPTED_AGENT} "$@"
`,
  );
  chmodSync(agent, 0o755);
  return agent;
}

/**
 * Where it ran, the name of its worktree in git's bookkeeping (a moved worktree keeps its first name), what it found.
 */
function seen(control: string, id: string): { pwd: string; admin: string; status: string } {
  const text = readFileSync(path.join(control, `seen-${id}`), 'utf8');
  return {
    pwd: /^pwd (.*)$/m.exec(text)![1]!,
    admin: /^admin (.*)$/m.exec(text)![1]!,
    status: text.slice(text.indexOf('status\n') + 7, text.lastIndexOf('end')),
  };
}

/** The agent's own repository, where one user plays every part (the fixture's drains). */
function agentRepository(fixture: { state: string; clone: string }): string {
  return sideRepository(sameUserLayout(workspaceStateDir(fixture.state, fixture.clone)).agentHome);
}

function leftovers(clone: string): { worktrees: string[]; branches: string[] } {
  const worktrees = git(clone, 'worktree', 'list', '--porcelain')
    .split('\n')
    .filter((line) => line.startsWith('worktree '))
    .map((line) => path.basename(line.slice(9)));
  const branches = git(clone, 'branch', '--list', 'auto/*', '--format=%(refname:short)').split('\n').filter(Boolean);
  return { worktrees, branches };
}

t.test("the next task runs in the last one's worktree, cleaned to auto/work", async (t) => {
  const control = tempDir(t, 'agent-runner-spare-');
  // TASK-2 takes a second, so TASK-1 has surely landed (its worktree a spare) when TASK-3 starts.
  const fixture = drainFixture(t, TASKS, {
    agent: [recordingAgent(control, SLOW_SECOND)],
    config: { maxParallel: 1 },
    files: { '.gitignore': 'cache/\n' },
  });
  const run = await runOrchestrate(fixture, ['--drain']);
  t.equal(run.code, 0, run.stderr.slice(-800));
  t.same(landedOn(fixture.clone, 'auto/work'), ['TASK-1', 'TASK-2', 'TASK-3'], 'all three landed');
  const [first, second, third] = TASKS.map((task) => seen(control, task.id));
  t.equal(path.basename(second!.pwd), 'TASK-2', "a task's worktree is in its own folder");
  // TASK-2 starts while TASK-1 waits for the integrator (its slot is free once its agent ended): a fresh worktree.
  // TASK-1 has landed by the time TASK-3 starts.
  t.equal(first!.admin, 'TASK-1');
  t.equal(second!.admin, 'TASK-2', 'TASK-2 got a fresh worktree');
  t.equal(third!.admin, 'TASK-1', "TASK-3 got TASK-1's worktree, moved to its own folder");
  for (const [id, found] of [
    ['TASK-2', second!],
    ['TASK-3', third!],
  ] as const)
    t.equal(
      found.status,
      '',
      `${id} found nothing git does not track and no change (the last agent's ignored file is gone)`,
    );
  t.same(
    leftovers(fixture.clone),
    { worktrees: [path.basename(fixture.clone), 'staging'], branches: ['auto/work'] },
    'no task worktree or branch is left in the runner repository',
  );
  t.same(
    leftovers(agentRepository(fixture)),
    { worktrees: ['repo.git'], branches: [] },
    "none in the agent's repository either",
  );
});

t.test('a worktree git will not move is not reused: the task gets a fresh one', async (t) => {
  const control = tempDir(t, 'agent-runner-spare-');
  // The first agent locks its worktree: `git worktree move` refuses a locked one.
  const agent = recordingAgent(
    control,
    `${SLOW_SECOND}\n[ "$AGENT_TASK_ID" = TASK-1 ] && git worktree lock --reason test "$(pwd)"`,
  );
  const fixture = drainFixture(t, TASKS, {
    agent: [agent],
    config: { maxParallel: 1 },
    files: { '.gitignore': 'cache/\n' },
  });
  const run = await runOrchestrate(fixture, ['--drain']);
  t.equal(run.code, 0, run.stderr.slice(-800));
  t.same(landedOn(fixture.clone, 'auto/work'), ['TASK-1', 'TASK-2', 'TASK-3'], 'all three landed');
  const [first, , third] = TASKS.map((task) => seen(control, task.id));
  t.equal(third!.admin, 'TASK-3', "TASK-3 got a fresh worktree, not TASK-1's locked one");
  t.equal(third!.status, '', 'cut from auto/work');
  t.notOk(existsSync(first!.pwd), "TASK-1's worktree is gone");
  t.same(
    leftovers(fixture.clone),
    { worktrees: [path.basename(fixture.clone), 'staging'], branches: ['auto/work'] },
    'no task worktree or branch is left in the runner repository',
  );
  t.same(
    leftovers(agentRepository(fixture)),
    { worktrees: ['repo.git'], branches: [] },
    "none in the agent's repository either",
  );
});

t.test(
  'killed with a spare worktree waiting: the next drain removes it and its branch, and lands the rest once',
  async (t) => {
    const control = tempDir(t, 'agent-runner-spare-');
    // TASK-3 hangs (recording its pid) while the marker exists: by then TASK-1 has landed and waits as a spare.
    const agent = recordingAgent(
      control,
      `${SLOW_SECOND}\nif [ "$AGENT_TASK_ID" = TASK-3 ] && [ -e ${control}/hang ]; then echo $$ > ${control}/pid; exec sleep 300; fi`,
    );
    writeFileSync(path.join(control, 'hang'), '');
    const fixture = drainFixture(t, TASKS, {
      agent: [agent],
      config: { maxParallel: 1 },
      files: { '.gitignore': 'cache/\n' },
    });
    const { child } = startOrchestrate(fixture, ['--drain']);
    const hung = await pidFrom(path.join(control, 'pid'), 30000, 'TASK-3 to start');
    t.teardown(killGroupIfSame(hung));
    await waitFor(
      () => landedOn(fixture.clone, 'auto/work').includes('TASK-2'),
      30000,
      'TASK-2 to land (its worktree then a spare)',
    );
    child.kill('SIGKILL');
    await new Promise((resolve) => child.once('close', resolve));
    const left = leftovers(agentRepository(fixture));
    t.ok(
      left.worktrees.includes('TASK-2') && left.branches.includes('auto/TASK-2'),
      `the kill left the spare behind, with its branch (${left.worktrees.join(', ')}; ${left.branches.join(', ')})`,
    );

    rmSync(path.join(control, 'hang'));
    const next = await runOrchestrate(fixture, ['--drain']);
    t.equal(next.code, 0, next.stderr.slice(-800));
    t.same(landedOn(fixture.clone, 'auto/work'), ['TASK-1', 'TASK-2', 'TASK-3'], 'each task landed once');
    t.same(
      leftovers(fixture.clone),
      { worktrees: [path.basename(fixture.clone), 'staging'], branches: ['auto/work'] },
      'no task worktree or branch is left in the runner repository',
    );
    t.same(
      leftovers(agentRepository(fixture)),
      { worktrees: ['repo.git'], branches: [] },
      "none in the agent's repository either",
    );
  },
);
