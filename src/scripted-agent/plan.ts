// What the scripted agent will do for a task, decided from its instruction
// block before anything is touched; and the task file it leaves behind. Pure.
import { appendNote, checkCriterion, setStatus } from '../board/edit.js';
import { BLOCKED_STATUS, DONE_STATUS } from '../board/readiness.js';
import type { Task } from '../types.js';
import type { ClaudeResultKind, Instruction } from './instructions.js';

/** The instructions that act, in the order they appear. */
export type Step = Extract<Instruction, { kind: 'write' | 'append' | 'sleep' | 'exit' | 'hang' | 'spend' }>;

export type Ending =
  { readonly kind: 'done' } | { readonly kind: 'blocked'; readonly reason: string } | { readonly kind: 'leave-status' };

export interface RunPlan {
  readonly steps: readonly Step[];
  /** Print nothing on stdout (silent, or a hang that must look dead). */
  readonly quiet: boolean;
  /** When posing as claude: fail at once like this, doing nothing. */
  readonly claudeResult: ClaudeResultKind | undefined;
  readonly ending: Ending;
  /** When posing as claude: how many of the task's sessions hit a rate limit first. */
  readonly rateLimitSessions: number;
  /** When posing as claude: a rejected rate_limit_event in an otherwise normal session. */
  readonly rateLimitEvent: boolean;
  /** When posing as claude: the cost to report instead of the computed one. */
  readonly costUsd: number | undefined;
  /** When posing as claude: honour --max-budget-usd (claude does), unless told to ignore it. */
  readonly honourBudget: boolean;
  /** When posing as claude: seconds to stay alive after the result line. */
  readonly lingerSeconds: number;
}

export function planRun(instructions: readonly Instruction[]): RunPlan {
  const steps: Step[] = [];
  let quiet = false;
  let claudeResult: ClaudeResultKind | undefined;
  let ending: Ending = { kind: 'done' };
  let rateLimitSessions = 0;
  let rateLimitEvent = false;
  let costUsd: number | undefined;
  let honourBudget = true;
  let lingerSeconds = 0;
  for (const instruction of instructions) {
    switch (instruction.kind) {
      case 'ignore-budget':
        honourBudget = false;
        break;
      case 'linger':
        lingerSeconds = instruction.seconds;
        break;
      case 'rate-limit':
        rateLimitSessions = instruction.sessions;
        break;
      case 'rate-limit-event':
        rateLimitEvent = true;
        break;
      case 'cost':
        costUsd = instruction.usd;
        break;
      case 'silent':
        quiet = true;
        break;
      case 'hang':
        quiet = true;
        steps.push(instruction);
        break;
      case 'block':
        ending = { kind: 'blocked', reason: instruction.reason };
        break;
      case 'leave-status':
        if (ending.kind === 'done') ending = { kind: 'leave-status' };
        break;
      case 'claude-result':
        claudeResult = instruction.result;
        break;
      default:
        steps.push(instruction);
    }
  }
  return {
    steps,
    quiet,
    claudeResult,
    ending,
    rateLimitSessions,
    rateLimitEvent,
    costUsd,
    honourBudget,
    lingerSeconds,
  };
}

export const IN_PROGRESS = 'In Progress';

/** The task file as the agent leaves it. */
export function finishedTaskText(text: string, task: Pick<Task, 'acceptanceCriteria'>, ending: Ending): string {
  switch (ending.kind) {
    case 'leave-status':
      return text;
    case 'blocked':
      return appendNote(setStatus(text, BLOCKED_STATUS), `Blocked: ${ending.reason}`);
    case 'done':
      return task.acceptanceCriteria.reduce(
        (current, criterion) => checkCriterion(current, criterion.index),
        setStatus(text, DONE_STATUS),
      );
  }
}

/** The commit message: the task id and title, as a person would write it. */
export function commitMessage(task: Pick<Task, 'id' | 'title'>, ending: Ending): string {
  const suffix = ending.kind === 'blocked' ? ' (blocked)' : '';
  return `${task.id}: ${task.title}${suffix}`;
}
