// The scripted agent's effects: a deterministic, offline stand-in for a coding
// agent, for the demo and for tests. It runs as a command assistant (task id
// in AGENT_TASK_ID, workspace in AGENT_WORKSPACE, prompt on stdin) or, when
// called with claude's or codex's argv, poses as that CLI (task id from the
// prompt, workspace = cwd or codex's -C, that CLI's events on stdout). Its
// role comes from AGENT_ROLE: implement (this file), fix (scripted-fix.ts) or
// review (scripted-review.ts). What it does is read from the task's
// instruction lines: see src/scripted-agent/ and docs/agents.md. Git runs with
// the environment it was given, so commits carry whatever identity that
// environment names.
import { readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { setStatus } from '../board/edit.js';
import { parseInstructions } from '../scripted-agent/instructions.js';
import { IN_PROGRESS, commitMessage, finishedTaskText, planRun } from '../scripted-agent/plan.js';
import {
  assistantEvent,
  budgetResult,
  failureLines,
  reachedBudget,
  scriptedResetAt,
  sessionIdFor,
  sessionUsage,
  taskIdFromPrompt,
  type SessionFacts,
} from '../scripted-agent/claude-stream.js';
import { outputSchemaError } from '../scripted-agent/codex-stream.js';
import {
  closingLines,
  openingLines,
  rateLimitedLines,
  readPose,
  sessionFacts,
  type Pose,
} from '../scripted-agent/pose.js';
import { readReviewPrompt } from '../scripted-agent/review-prompt.js';
import { modelTargetOf } from '../scripted-agent/model-call.js';
import type { ReviewRole } from '../types.js';
import { runFix } from './scripted-fix.js';
import { runReview } from './scripted-review.js';
import { modelTurn } from './scripted-model.js';
import {
  AgentFailure,
  findTaskFile,
  git,
  runSteps,
  sleep,
  takeCountedSession,
  type FoundTask,
  type ScriptedAgentIo,
} from './scripted-kit.js';

export type { ScriptedAgentIo } from './scripted-kit.js';

const ROLES: readonly ReviewRole[] = ['implement', 'fix', 'review'];

interface Session {
  readonly io: ScriptedAgentIo;
  readonly pose: Pose;
  readonly workspace: string;
  readonly env: Record<string, string>;
  readonly found: FoundTask;
  readonly facts: SessionFacts;
}

/** codex reads its --output-schema file before its first event, and stops when it cannot. */
function checkOutputSchema(pose: Pose, cwd: string): void {
  if (pose.cli !== 'codex' || pose.argv.outputSchema === undefined) return;
  const file = pose.argv.outputSchema;
  let text: string;
  try {
    text = readFileSync(path.resolve(cwd, file), 'utf8');
  } catch (error) {
    throw new AgentFailure(outputSchemaError(file, 'unreadable', (error as Error).message), 1);
  }
  try {
    JSON.parse(text);
  } catch (error) {
    throw new AgentFailure(outputSchemaError(file, 'not-json', (error as Error).message), 1);
  }
}

function lastMessageWriter(pose: Pose, workspace: string): (text: string) => void {
  return (text) => {
    if (pose.cli === 'codex' && pose.argv.outputLastMessage)
      writeFileSync(path.resolve(workspace, pose.argv.outputLastMessage), text);
  };
}

export async function runScriptedAgent(io: ScriptedAgentIo): Promise<number> {
  const pose = readPose(io.argv);
  if ('error' in pose) {
    io.err(pose.error);
    return pose.exitCode;
  }
  const role = io.env.AGENT_ROLE ?? 'implement';
  if (!ROLES.some((known) => known === role)) {
    io.err(`scripted-agent: AGENT_ROLE=${role} is not a role (implement, fix or review)`);
    return 2;
  }
  const review = role === 'review' ? readReviewPrompt(io.stdin) : undefined;
  if (review && 'problem' in review) {
    io.err(`scripted-agent: ${review.problem}`);
    return 2;
  }
  const taskId =
    pose.cli === 'command' ? (io.env.AGENT_TASK_ID ?? review?.taskId) : (review?.taskId ?? taskIdFromPrompt(io.stdin));
  const workspace =
    pose.cli === 'command'
      ? (io.env.AGENT_WORKSPACE ?? io.cwd)
      : pose.cli === 'codex' && pose.argv.cd
        ? path.resolve(io.cwd, pose.argv.cd)
        : io.cwd;
  if (!taskId) {
    io.err(
      pose.cli === 'command'
        ? 'scripted-agent: AGENT_TASK_ID is not set; the runner passes the task id there'
        : 'scripted-agent: the prompt has no "Your task: <ID>" line',
    );
    return 2;
  }
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(io.env)) if (value !== undefined) env[key] = value;

  try {
    checkOutputSchema(pose, io.cwd);
    const found = findTaskFile(workspace, taskId);
    const target = modelTargetOf(pose, env);
    // Through a broker, the session names the model it asks for, as the CLI does.
    const facts = {
      ...sessionFacts(pose, sessionIdFor(found.task.id, io.stdin), workspace),
      ...(target ? { model: target.model } : {}),
    };
    const common = { pose, workspace, env, found, facts, prompt: io.stdin, say: io.out };
    if (review) return await runReview({ ...common, request: review, complain: io.err });
    if (role === 'fix')
      return await runFix({ ...common, complain: io.err, lastMessage: lastMessageWriter(pose, workspace) });
    return await runImplement({ io, pose, workspace, env, found, facts });
  } catch (error) {
    if (error instanceof AgentFailure) {
      io.err(error.message);
      return error.exitCode;
    }
    io.err(`scripted-agent: ${error instanceof Error ? error.message : String(error)}`);
    return 1;
  }
}

async function runImplement({ io, pose, workspace, env, found, facts: opening }: Session): Promise<number> {
  const { file, text, task } = found;
  const block = parseInstructions(task.description);
  if (block.problems.length) throw new AgentFailure(`scripted-agent: ${file}: ${block.problems.join('; ')}`, 2);
  const plan = planRun(block.instructions);
  const say = (line: string) => !plan.quiet && io.out(line);
  const claude = pose.cli === 'claude' ? pose.argv : undefined;

  for (const line of openingLines(pose, opening, task.id, io.stdin)) say(line);
  if (claude && plan.claudeResult) {
    for (const line of failureLines(opening, plan.claudeResult)) say(line);
    return 1;
  }
  const limited =
    pose.cli !== 'command' &&
    takeCountedSession(workspace, env, `${task.id.toUpperCase()}.rate-limits`, plan.rateLimitSessions);
  const turn = await modelTurn({
    pose,
    env,
    prompt: io.stdin,
    facts: opening,
    description: task.description,
    file,
    rateLimit: limited,
    say,
    complain: io.err,
  });
  if (turn.kind === 'ended') return turn.exitCode;
  if (limited) {
    for (const line of rateLimitedLines(pose, opening, scriptedResetAt(Date.now()))) say(line);
    return 1;
  }
  const facts = turn.kind === 'answered' ? turn.facts : opening;

  const taskPath = path.join(workspace, file);
  writeFileSync(taskPath, setStatus(text, IN_PROGRESS));
  // Like claude: the cost grows message by message and is checked against --max-budget-usd after each.
  const budget = claude && plan.honourBudget ? claude.maxBudgetUsd : undefined;
  const turns = 2 + plan.steps.length;
  let spent = 0;
  const stop = await runSteps(workspace, plan.steps, (usd) => reachedBudget((spent += usd), budget));
  if (stop === 'budget') {
    say(assistantEvent(facts, `${task.id}: working`));
    say(budgetResult(facts, io.stdin, turns, spent, budget!));
    return 1;
  }
  if (stop !== undefined) return stop;

  const current = readFileSync(taskPath, 'utf8');
  writeFileSync(taskPath, finishedTaskText(current, task, plan.ending));
  git(workspace, env, ['add', '-A']);
  git(workspace, env, ['commit', '-q', '-m', commitMessage(task, plan.ending)]);

  const summary =
    plan.ending.kind === 'blocked'
      ? `${task.id} is blocked: ${plan.ending.reason}`
      : `${task.id}: ${plan.ending.kind === 'done' ? 'done' : 'worked on, status left In Progress'}`;
  lastMessageWriter(pose, workspace)(summary);
  const total = plan.costUsd ?? spent + sessionUsage(facts, io.stdin).costUsd;
  // The last message can take it past the budget too: claude then says so instead of success, the work already done.
  const over = reachedBudget(total, budget);
  const closing = closingLines(pose, facts, io.stdin, {
    message: summary,
    turns,
    costUsd: total,
    rateLimitRejected: plan.rateLimitEvent,
    resetsAt: scriptedResetAt(Date.now()),
  });
  for (const line of over ? [closing[0]!, closing[1]!, budgetResult(facts, io.stdin, turns, total, budget!)] : closing)
    say(line);
  if (claude && plan.lingerSeconds > 0) await sleep(plan.lingerSeconds);
  return over ? 1 : 0;
}
