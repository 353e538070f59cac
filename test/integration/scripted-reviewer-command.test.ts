// bin/scripted-agent as a command agent (test/helpers/scripted-review.ts):
// each reviewer verb's verdict in $AGENT_REVIEW_VERDICT, the changes it
// makes, the fixer; and what it refuses.
import t from 'tap';
import { commandAdapter } from '../../src/agent/adapters/command.js';
import { superviseAgent } from '../../src/agent/supervise.js';
import { realClock, realProcess } from '../../src/io/real-ports.js';
import { forkRepo, invocation, limits, reviewPrompt, reviewerSuite, session } from '../helpers/scripted-review.js';

reviewerSuite('command');

t.test('a reviewer without the machine lines, or a bad review: line, is refused with exit 2', async (t) => {
  const { repo, fork } = forkRepo(t, ['review: lgtm']);
  const noLines = await session('claude', invocation(t, 'claude', repo, 'Review this please.\n', 'review'));
  t.equal(noLines.run.exitCode, 2);
  t.match(noLines.run.stderrTail, /the review prompt has no "Review task: \.\.\."/);
  const prompt = reviewPrompt({ round: 1, nonce: 'n', candidate: fork, fork });
  const badLine = await session('command', invocation(t, 'command', repo, prompt, 'review'));
  t.equal(badLine.run.exitCode, 2);
  t.match(badLine.run.stderrTail, /task-3 - Greet\.md: line 3 of the description: unknown review instruction "lgtm"/);
  const call = invocation(t, 'command', repo, prompt, 'implement');
  const badRole = await superviseAgent(
    { process: realProcess, clock: realClock },
    { ...commandAdapter.buildCommand(call), env: { ...commandAdapter.buildCommand(call).env, AGENT_ROLE: 'judge' } },
    limits,
    () => undefined,
  );
  t.equal(badRole.exitCode, 2);
  t.match(badRole.stderrTail, /AGENT_ROLE=judge is not a role/);
});
