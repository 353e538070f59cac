// The scripted agent's effects every role shares: finding its task file, git
// with the environment it was given, the write/append/sleep steps, and
// counters kept in the clone's common git dir (they survive worktrees and
// never show in a commit or a tree). Best effort where a reviewer's checkout
// may not let it write there: a counter it cannot keep counts nothing.
import { execFileSync } from 'node:child_process';
import { appendFileSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { isUnreadable, parseTaskFile } from '../board/parse.js';
import type { Task } from '../types.js';
import type { StepInstruction } from '../scripted-agent/instructions.js';

export interface ScriptedAgentIo {
  readonly argv: readonly string[];
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly cwd: string;
  readonly stdin: string;
  out(line: string): void;
  err(line: string): void;
}

/** A failure with the exit code the agent ends with; its message goes to stderr. */
export class AgentFailure extends Error {
  constructor(
    message: string,
    readonly exitCode: number,
  ) {
    super(message);
  }
}

const TASKS_DIR = path.join('backlog', 'tasks');

export interface FoundTask {
  readonly file: string;
  readonly text: string;
  readonly task: Task;
}

export function findTaskFile(workspace: string, taskId: string): FoundTask {
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

/** git's stdout; a failure ends the agent with exit 1 and git's words. */
export function git(workspace: string, env: Record<string, string>, args: string[]): string {
  try {
    return execFileSync('git', args, {
      cwd: workspace,
      env,
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  } catch (error) {
    const stderr = (error as { stderr?: string }).stderr?.toString().trim() || String(error);
    throw new AgentFailure(`scripted-agent: git ${args.join(' ')} failed in ${workspace}: ${stderr}`, 1);
  }
}

/** Creates the folders on the way, like an agent would. */
export function writeInWorkspace(workspace: string, relative: string, text: string, append = false): void {
  const target = path.join(workspace, relative);
  mkdirSync(path.dirname(target), { recursive: true });
  if (append) appendFileSync(target, text);
  else writeFileSync(target, text);
}

export const sleep = (seconds: number) => new Promise((resolve) => setTimeout(resolve, seconds * 1000));

/** Never resolves; the interval keeps the process alive until it is killed. */
export function hangForever(): Promise<never> {
  setInterval(() => undefined, 1 << 30);
  return new Promise<never>(() => undefined);
}

/**
 * Runs write/append/sleep/exit/hang steps (and spend, through onSpend); returns an exit code when a step says to
 * stop there, or 'budget' when a spend reached the budget.
 */
export async function runSteps(
  workspace: string,
  steps: readonly (StepInstruction | { readonly kind: 'spend'; readonly usd: number })[],
  onSpend: (usd: number) => boolean = () => false,
): Promise<number | 'budget' | undefined> {
  for (const step of steps) {
    switch (step.kind) {
      case 'write':
        writeInWorkspace(workspace, step.path, `${step.text}\n`);
        break;
      case 'append':
        writeInWorkspace(workspace, step.path, `${step.line}\n`, true);
        break;
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

/** The clone's common git dir's scripted-agent/NAME, or undefined outside a repository. */
function commonFile(workspace: string, env: Record<string, string>, name: string): string | undefined {
  try {
    const common = execFileSync('git', ['rev-parse', '--path-format=absolute', '--git-common-dir'], {
      cwd: workspace,
      env,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    }).trim();
    return path.join(common, 'scripted-agent', name);
  } catch {
    return undefined;
  }
}

/** Counts one more session against `limit` under NAME; true while the count was below it. */
export function takeCountedSession(
  workspace: string,
  env: Record<string, string>,
  name: string,
  limit: number,
): boolean {
  if (limit <= 0) return false;
  const file = commonFile(workspace, env, name);
  if (!file) return false;
  let used = 0;
  try {
    used = Number(readFileSync(file, 'utf8').trim()) || 0;
  } catch {
    // first session
  }
  if (used >= limit) return false;
  try {
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, `${used + 1}\n`);
  } catch {
    return false;
  }
  return true;
}

/** The lines kept under NAME, oldest first; then LINE is added. */
export function readAndAddLine(workspace: string, env: Record<string, string>, name: string, line: string): string[] {
  const file = commonFile(workspace, env, name);
  if (!file) return [];
  let lines: string[] = [];
  try {
    lines = readFileSync(file, 'utf8').split('\n').filter(Boolean);
  } catch {
    // none yet
  }
  try {
    mkdirSync(path.dirname(file), { recursive: true });
    appendFileSync(file, `${line}\n`);
  } catch {
    // a checkout that cannot keep it: nothing remembered
  }
  return lines;
}
