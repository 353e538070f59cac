// A secret the agent quotes (its own API key in a Blocked reason) and control
// characters in a title and a reason: the drain's progress (human and JSON),
// its summary, last-drain.json, attempts.json, the commit on auto/work and
// what was pushed to origin never carry the secret, and the human output
// never carries a raw control character.
import t from 'tap';
import { readFileSync, readdirSync, existsSync, writeFileSync, chmodSync } from 'node:fs';
import type { Test } from 'tap';
import * as path from 'node:path';
import { drainFixture, startOrchestrate } from '../helpers/drain-fixture.js';
import { git, tempDir } from '../helpers/temp.js';
import { renderSummary } from '../../src/cli/drain-output.js';
import type { DrainSummary } from '../../src/drain/types.js';

const SECRET = 'sk-ant-api03-Zq8sEcReTvAlUe42';

/**
 * An agent that blocks TASK-1 quoting the key from its own environment (the
 * board never holds it) and fails TASK-2.
 */
function quotingAgent(t: Test): string {
  const file = path.join(tempDir(t, 'agent-runner-agent-'), 'agent.sh');
  writeFileSync(
    file,
    [
      '#!/bin/sh',
      'if [ "$AGENT_TASK_ID" = TASK-2 ]; then exit 3; fi',
      'f=$(ls backlog/tasks/task-1*.md)',
      'sed -i "s/^status: To Do$/status: Blocked/" "$f"',
      'printf "\\n## Implementation Notes\\n\\n<!-- SECTION:NOTES:BEGIN -->\\nBlocked: cannot use key %s\\n<!-- SECTION:NOTES:END -->\\n" "$ANTHROPIC_API_KEY" >> "$f"',
      'git add -A && git commit -qm "block: key $ANTHROPIC_API_KEY"',
      '',
    ].join('\n'),
  );
  chmodSync(file, 0o755);
  return file;
}

function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile())
    .map((entry) => path.join(entry.parentPath, entry.name));
}

t.test('a secret in a Blocked reason reaches no sink; control characters reach no terminal', async (t) => {
  const fixture = drainFixture(
    t,
    [
      { id: 'TASK-1', title: 'Use the key' },
      { id: 'TASK-2', title: 'Fails \u001b]0;owned\u0007 loudly' },
    ],
    { config: { maxAttempts: 1 }, agent: [quotingAgent(t)] },
  );
  const env = { ...fixture.env, ANTHROPIC_API_KEY: SECRET };
  const run = await startOrchestrate({ ...fixture, env }, ['--progress', 'human', '--no-push']).done;
  t.equal(run.code, 0, run.stderr);
  const summary = JSON.parse(run.stdout) as DrainSummary;
  t.same(summary.tasks.map((task) => [task.id, task.outcome]).sort(), [
    ['TASK-1', 'blocked'],
    ['TASK-2', 'parked'],
  ]);
  t.match(
    summary.tasks.find((task) => task.id === 'TASK-1')!.reason,
    /cannot use key \[redacted\]/,
    'the reason is kept, the secret is not',
  );

  t.notMatch(run.stderr, SECRET, 'progress on stderr');
  t.notMatch(run.stdout, SECRET, 'the summary on stdout');
  t.match(run.stderr, /TASK-1 blocked.*cannot use key \[redacted\]/);
  // eslint-disable-next-line no-control-regex
  t.notMatch(run.stderr, /[\u0000-\u0008\u000b-\u001f\u007f]/, 'no control character in human progress');
  // eslint-disable-next-line no-control-regex
  t.notMatch(renderSummary(summary), /[\u0000-\u0008\u000b-\u001f\u007f]/, 'none in the human summary');
  for (const file of filesUnder(fixture.state).filter((file) => !file.includes('/transcripts/'))) {
    t.notMatch(readFileSync(file, 'utf8'), SECRET, `state file ${path.relative(fixture.state, file)}`);
  }
  t.ok(
    filesUnder(fixture.state).some((file) => file.endsWith('last-drain.json')),
    'last-drain.json was written',
  );
  const log = git(fixture.clone, 'log', '--format=%B', 'auto/work');
  t.match(log, /Block TASK-1: cannot use key \[redacted\]/, 'the Block commit is made, redacted');
  t.notMatch(log, SECRET, 'no commit message on auto/work');
  t.notMatch(
    git(fixture.clone, 'show', 'auto/work:backlog/tasks/task-1 - Use-the-key.md'),
    SECRET,
    'the task note on auto/work',
  );
});

t.test('what is pushed to origin carries no secret', async (t) => {
  const fixture = drainFixture(t, [{ id: 'TASK-1', title: 'Use the key' }], { agent: [quotingAgent(t)] });
  const run = await startOrchestrate({ ...fixture, env: { ...fixture.env, ANTHROPIC_API_KEY: SECRET } }).done;
  t.equal(run.code, 0, run.stderr);
  t.notMatch(run.stderr, SECRET);
  const pushed = git(fixture.origin, 'log', '-p', '--format=%B', 'auto/work');
  t.match(pushed, /Block TASK-1/);
  t.notMatch(pushed, SECRET, 'the pushed commits and their diffs');
});
