// The scripted agent in a fix round (AGENT_ROLE=fix): it runs the task's
// `fix:` lines and commits on the branch as it stands, leaving the task's
// status alone (the task stays Done); `fix: nothing` changes nothing and
// makes no commit. With no `fix:` line at all it still makes its commit (an
// empty one): a fixer that does nothing useful, not one that gives up.
import type { SessionFacts } from '../scripted-agent/claude-stream.js';
import { scriptedResetAt } from '../scripted-agent/claude-stream.js';
import { closingLines, openingLines, type Pose } from '../scripted-agent/pose.js';
import { parseFixInstructions } from '../scripted-agent/review-instructions.js';
import type { StepInstruction } from '../scripted-agent/instructions.js';
import { AgentFailure, git, runSteps, type FoundTask } from './scripted-kit.js';
import { modelTurn } from './scripted-model.js';

export interface FixSession {
  readonly pose: Pose;
  readonly workspace: string;
  readonly env: Record<string, string>;
  readonly prompt: string;
  readonly found: FoundTask;
  readonly facts: SessionFacts;
  say(line: string): void;
  complain(line: string): void;
  /** codex's -o: the last message goes there too. */
  lastMessage(text: string): void;
}

export async function runFix(session: FixSession): Promise<number> {
  const { pose, workspace, env, found } = session;
  const block = parseFixInstructions(found.task.description);
  if (block.problems.length) throw new AgentFailure(`scripted-agent: ${found.file}: ${block.problems.join('; ')}`, 2);
  const steps = block.instructions.filter((step): step is StepInstruction => step.kind !== 'nothing');
  const nothing = block.instructions.some((step) => step.kind === 'nothing');
  const quiet = steps.some((step) => step.kind === 'hang');

  const say = (line: string) => !quiet && session.say(line);
  for (const line of openingLines(pose, session.facts, found.task.id, session.prompt)) say(line);
  const turn = await modelTurn({
    pose,
    env,
    prompt: session.prompt,
    facts: session.facts,
    description: found.task.description,
    file: found.file,
    say,
    complain: session.complain,
  });
  if (turn.kind === 'ended') return turn.exitCode;
  const facts = turn.kind === 'answered' ? turn.facts : session.facts;
  const stop = await runSteps(workspace, steps);
  if (typeof stop === 'number') return stop;
  if (!nothing) {
    git(workspace, env, ['add', '-A']);
    git(workspace, env, [
      'commit',
      '-q',
      '--allow-empty',
      '-m',
      `${found.task.id}: ${found.task.title} (review fixes)`,
    ]);
  }
  const message = nothing ? `${found.task.id}: nothing to fix` : `${found.task.id}: fixed what the review found`;
  session.lastMessage(message);
  for (const line of closingLines(pose, facts, session.prompt, {
    message,
    turns: 2 + steps.length,
    resetsAt: scriptedResetAt(Date.now()),
  }))
    session.say(line);
  return 0;
}
