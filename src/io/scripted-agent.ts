// The scripted agent's effects: a deterministic, offline stand-in for a coding
// agent, for the demo and for tests. It runs as a command assistant (task id
// in AGENT_TASK_ID, workspace in AGENT_WORKSPACE, prompt on stdin) or, when
// called with claude's argv, poses as Claude Code (task id from the prompt's
// "Your task:" line, workspace = cwd, stream-json on stdout). What it does is
// read from the task's instruction block: see src/scripted-agent/instructions.ts
// and docs/agents.md. Git runs with the environment it was given, so commits
// carry whatever identity that environment names.
import { execFileSync } from 'node:child_process';
import { appendFileSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { setStatus } from '../board/edit.js';
import { isUnreadable, parseTaskFile } from '../board/parse.js';
import type { Task } from '../types.js';
import { parseInstructions } from '../scripted-agent/instructions.js';
import { IN_PROGRESS, commitMessage, finishedTaskText, planRun, type Step } from '../scripted-agent/plan.js';
import {
  assistantEvent,
  budgetResult,
  failureLines,
  initEvent,
  looksLikeClaudeArgv,
  rateLimitEvent,
  reachedBudget,
  readClaudeArgv,
  scriptedResetAt,
  sessionIdFor,
  successResult,
  taskIdFromPrompt,
  usageFor,
  type SessionFacts,
} from '../scripted-agent/claude-stream.js';

export interface ScriptedAgentIo {
  readonly argv: readonly string[];
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly cwd: string;
  readonly stdin: string;
  out(line: string): void;
  err(line: string): void;
}

const TASKS_DIR = path.join('backlog', 'tasks');

class AgentFailure extends Error {
  constructor(
    message: string,
    readonly exitCode: number,
  ) {
    super(message);
  }
}

function findTaskFile(workspace: string, taskId: string): { file: string; text: string; task: Task } {
  const dir = path.join(workspace, TASKS_DIR);
  let names: string[];
  try {
    names = readdirSync(dir)
      .filter((name) => name.endsWith('.md'))
      .sort();
  } catch {
    throw new AgentFailure(`scripted-agent: ${dir} cannot be read; run it in a workspace with a Backlog.md board`, 2);
  }
  for (const name of names) {
    const file = path.join(TASKS_DIR, name);
    const text = readFileSync(path.join(workspace, file), 'utf8');
    const parsed = parseTaskFile(file, text);
    if (!isUnreadable(parsed) && parsed.id.toUpperCase() === taskId.toUpperCase()) return { file, text, task: parsed };
  }
  throw new AgentFailure(`scripted-agent: no task ${taskId} in ${dir}; check the task id the runner passed`, 2);
}

function git(workspace: string, env: Record<string, string>, args: string[]): void {
  try {
    execFileSync('git', args, { cwd: workspace, env, stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (error) {
    const stderr = (error as { stderr?: Buffer }).stderr?.toString('utf8').trim() ?? String(error);
    throw new AgentFailure(`scripted-agent: git ${args.join(' ')} failed in ${workspace}: ${stderr}`, 1);
  }
}

/**
 * Counts the task's rate-limited sessions in the clone's common git dir, so
 * the count survives the worktree and never shows in a commit.
 */
function takeRateLimitedSession(
  workspace: string,
  env: Record<string, string>,
  taskId: string,
  limit: number,
): boolean {
  if (limit <= 0) return false;
  let common: string;
  try {
    common = execFileSync('git', ['rev-parse', '--path-format=absolute', '--git-common-dir'], {
      cwd: workspace,
      env,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    }).trim();
  } catch {
    return false;
  }
  const dir = path.join(common, 'scripted-agent');
  const file = path.join(dir, `${taskId.toUpperCase()}.rate-limits`);
  let used = 0;
  try {
    used = Number(readFileSync(file, 'utf8').trim()) || 0;
  } catch {
    // first session
  }
  if (used >= limit) return false;
  mkdirSync(dir, { recursive: true });
  writeFileSync(file, `${used + 1}\n`);
  return true;
}

const sleep = (seconds: number) => new Promise((resolve) => setTimeout(resolve, seconds * 1000));

/** Never resolves; the interval keeps the process alive until it is killed. */
function hangForever(): Promise<never> {
  setInterval(() => undefined, 1 << 30);
  return new Promise<never>(() => undefined);
}

/** Runs the steps; returns an exit code when a step says to stop there, or 'budget' when a spend reached the budget. */
async function runSteps(
  workspace: string,
  steps: readonly Step[],
  onSpend: (usd: number) => boolean,
): Promise<number | 'budget' | undefined> {
  for (const step of steps) {
    switch (step.kind) {
      case 'write': {
        const target = path.join(workspace, step.path);
        mkdirSync(path.dirname(target), { recursive: true });
        writeFileSync(target, `${step.text}\n`);
        break;
      }
      case 'append': {
        const target = path.join(workspace, step.path);
        mkdirSync(path.dirname(target), { recursive: true });
        appendFileSync(target, `${step.line}\n`);
        break;
      }
      case 'sleep':
        await sleep(step.seconds);
        break;
      case 'spend':
        if (onSpend(step.usd)) return 'budget';
        break;
      case 'exit':
        return step.code;
      case 'hang':
        return hangForever();
    }
  }
  return undefined;
}

export async function runScriptedAgent(io: ScriptedAgentIo): Promise<number> {
  const posing = looksLikeClaudeArgv(io.argv);
  const claudeArgv = posing ? readClaudeArgv(io.argv) : undefined;
  if (claudeArgv?.error) {
    io.err(claudeArgv.error);
    return 1;
  }
  const taskId = posing ? taskIdFromPrompt(io.stdin) : io.env.AGENT_TASK_ID;
  const workspace = posing ? io.cwd : (io.env.AGENT_WORKSPACE ?? io.cwd);
  if (!taskId) {
    io.err(
      posing
        ? 'scripted-agent: the prompt has no "Your task: <ID>" line'
        : 'scripted-agent: AGENT_TASK_ID is not set; the runner passes the task id there',
    );
    return 2;
  }
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(io.env)) if (value !== undefined) env[key] = value;

  try {
    const { file, text, task } = findTaskFile(workspace, taskId);
    const block = parseInstructions(task.description);
    if (block.problems.length) throw new AgentFailure(`scripted-agent: ${file}: ${block.problems.join('; ')}`, 2);
    const plan = planRun(block.instructions);
    const facts: SessionFacts = {
      sessionId: sessionIdFor(task.id, io.stdin),
      cwd: workspace,
      model: claudeArgv?.model ?? 'scripted',
      permissionMode: claudeArgv?.permissionMode ?? 'default',
    };
    const say = (line: string) => !plan.quiet && io.out(line);

    if (posing) say(initEvent(facts));
    if (posing && plan.claudeResult) {
      for (const line of failureLines(facts, plan.claudeResult)) say(line);
      return 1;
    }
    if (posing && takeRateLimitedSession(workspace, env, task.id, plan.rateLimitSessions)) {
      say(rateLimitEvent(facts, 'rejected', scriptedResetAt(Date.now())));
      for (const line of failureLines(facts, 'rate-limited')) say(line);
      return 1;
    }

    const taskPath = path.join(workspace, file);
    writeFileSync(taskPath, setStatus(text, IN_PROGRESS));
    // Like claude: the cost grows message by message and is checked against --max-budget-usd after each.
    const budget = posing && plan.honourBudget ? claudeArgv?.maxBudgetUsd : undefined;
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
    if (posing) {
      say(assistantEvent(facts, summary));
      say(rateLimitEvent(facts, plan.rateLimitEvent ? 'rejected' : 'allowed', scriptedResetAt(Date.now())));
      const total = plan.costUsd ?? spent + usageFor(io.stdin).costUsd;
      // The last message can take it past the budget too: claude then says so instead of success, the work already
      // done.
      const over = reachedBudget(total, budget);
      say(
        over
          ? budgetResult(facts, io.stdin, turns, total, budget!)
          : successResult(facts, io.stdin, summary, turns, total),
      );
      if (plan.lingerSeconds > 0) await sleep(plan.lingerSeconds);
      if (over) return 1;
    } else {
      say(summary);
    }
    return 0;
  } catch (error) {
    if (error instanceof AgentFailure) {
      io.err(error.message);
      return error.exitCode;
    }
    io.err(`scripted-agent: ${error instanceof Error ? error.message : String(error)}`);
    return 1;
  }
}
