// The instruction block of a task for the scripted agent: lines in the task
// description starting with `agent:` (optionally as a list item). Pure.
//
//   agent: write PATH "TEXT"      write TEXT and a newline to PATH (folders created)
//   agent: append PATH "LINE"     append LINE and a newline to PATH
//   agent: sleep SECONDS          wait, printing nothing (decimals allowed, at most 3600)
//   agent: exit N                 stop here with exit code N: no status change, no commit
//   agent: hang                   stop printing and never finish (for the idle watchdog)
//   agent: silent                 print nothing at all, still do the work and finish
//   agent: block "REASON"         finish as Blocked with REASON as a note instead of Done
//   agent: leave-status           do the work and commit, but leave the status In Progress
//   agent: claude-result KIND     when posing as claude: fail at once the way claude does,
//                                 KIND is not-logged-in, rate-limited or max-turns
//   agent: rate-limit N           when posing as claude or codex: the task's first N sessions
//                                 hit a rate limit (claude 2.x's rejected rate_limit_event and
//                                 result; codex's usage-limit turn.failed), doing nothing;
//                                 counted in the git dir; through a broker, the session's
//                                 model call asks the fake provider for its 429
//                                 (x-fake-provider-answer: rate-limit)
//   agent: rate-limit-event       when posing as claude: finish normally, but the stream
//                                 also carries a rejected rate_limit_event
//   agent: cost USD               when posing as claude: report this total_cost_usd
//   agent: spend USD              when posing as claude: the session's cost grows by USD
//                                 here; past --max-budget-usd it stops at once with
//                                 claude's error_max_budget_usd result, as claude does
//   agent: ignore-budget          when posing as claude: do not honour --max-budget-usd
//                                 (a CLI that overshoots its flag)
//   agent: linger SECONDS         when posing as claude: stay alive this long, silent,
//                                 after the result line (claude sometimes does)
//
// A `usage:` line is read in every role (implement, fix, review), and matters only where the session calls its
// model through a broker (see model-call.ts):
//
//   usage: report-zero            report no tokens and no cost in its own output, whatever the
//                                 model's answer carried (a CLI that under-reports: the ledger
//                                 believes the broker's meter, not the agent)
//
// TEXT, LINE and REASON are double-quoted with JSON escapes (\n, \", \\);
// a PATH is relative to the workspace, may be quoted, and never leaves it.
// `fix:` and `review:` lines are other roles' (review-instructions.ts).
import {
  expectArity,
  exitCodeArgument,
  Problem,
  pathArgument,
  quoted,
  readLines,
  secondsArgument,
  type Block,
} from './tokens.js';

export { safeRelativePath } from './tokens.js';

export type ClaudeResultKind = 'not-logged-in' | 'rate-limited' | 'max-turns';

export type Instruction =
  | { readonly kind: 'write'; readonly path: string; readonly text: string }
  | { readonly kind: 'append'; readonly path: string; readonly line: string }
  | { readonly kind: 'sleep'; readonly seconds: number }
  | { readonly kind: 'exit'; readonly code: number }
  | { readonly kind: 'hang' }
  | { readonly kind: 'silent' }
  | { readonly kind: 'block'; readonly reason: string }
  | { readonly kind: 'leave-status' }
  | { readonly kind: 'claude-result'; readonly result: ClaudeResultKind }
  | { readonly kind: 'rate-limit'; readonly sessions: number }
  | { readonly kind: 'rate-limit-event' }
  | { readonly kind: 'cost'; readonly usd: number }
  | { readonly kind: 'spend'; readonly usd: number }
  | { readonly kind: 'ignore-budget' }
  | { readonly kind: 'linger'; readonly seconds: number };

export type InstructionBlock = Block<Instruction>;

const CLAUDE_RESULTS: readonly ClaudeResultKind[] = ['not-logged-in', 'rate-limited', 'max-turns'];

/** The verbs `agent:` and `fix:` lines share. */
export type StepInstruction = Extract<Instruction, { kind: 'write' | 'append' | 'sleep' | 'exit' | 'hang' }>;

/** write, append, sleep, exit and hang, for any prefix; undefined for another verb. */
export function parseStep(tokens: readonly string[], prefix: string): StepInstruction | undefined {
  const [verb, first, second] = tokens;
  switch (verb) {
    case 'write':
      expectArity(tokens, 3, prefix, 'write PATH "TEXT"');
      return { kind: 'write', path: pathArgument(first), text: quoted(second, 'TEXT') };
    case 'append':
      expectArity(tokens, 3, prefix, 'append PATH "LINE"');
      return { kind: 'append', path: pathArgument(first), line: quoted(second, 'LINE') };
    case 'sleep':
      expectArity(tokens, 2, prefix, 'sleep SECONDS');
      return { kind: 'sleep', seconds: secondsArgument(verb, first) };
    case 'exit':
      expectArity(tokens, 2, prefix, 'exit N');
      return { kind: 'exit', code: exitCodeArgument(first) };
    case 'hang':
      expectArity(tokens, 1, prefix, 'hang');
      return { kind: 'hang' };
    default:
      return undefined;
  }
}

function parseOne(tokens: readonly string[]): Instruction {
  const step = parseStep(tokens, 'agent');
  if (step) return step;
  const [verb, first] = tokens;
  switch (verb) {
    case 'linger':
      expectArity(tokens, 2, 'agent', 'linger SECONDS');
      return { kind: 'linger', seconds: secondsArgument(verb, first) };
    case 'silent':
    case 'leave-status':
    case 'rate-limit-event':
    case 'ignore-budget':
      expectArity(tokens, 1, 'agent', verb);
      return { kind: verb };
    case 'rate-limit': {
      expectArity(tokens, 2, 'agent', 'rate-limit N');
      if (!/^\d{1,2}$/.test(first ?? ''))
        throw new Problem(`rate-limit takes a number of sessions from 0 to 99, not ${first}`);
      return { kind: 'rate-limit', sessions: Number(first) };
    }
    case 'cost':
    case 'spend': {
      expectArity(tokens, 2, 'agent', `${verb} USD`);
      if (!/^\d+(?:\.\d+)?$/.test(first ?? '')) throw new Problem(`${verb} takes dollars like 0.25, not ${first}`);
      return { kind: verb, usd: Number(first) };
    }
    case 'block':
      expectArity(tokens, 2, 'agent', 'block "REASON"');
      return { kind: 'block', reason: quoted(first, 'REASON') };
    case 'claude-result': {
      expectArity(tokens, 2, 'agent', `claude-result ${CLAUDE_RESULTS.join('|')}`);
      const result = CLAUDE_RESULTS.find((kind) => kind === first);
      if (!result) throw new Problem(`claude-result takes ${CLAUDE_RESULTS.join(', ')}, not ${first}`);
      return { kind: 'claude-result', result };
    }
    default:
      throw new Problem(
        `unknown instruction ${JSON.stringify(verb ?? '')} (known: write, append, sleep, exit, hang, silent, block, leave-status, claude-result, rate-limit, rate-limit-event, cost, spend, ignore-budget, linger)`,
      );
  }
}

export function parseInstructions(description: string): InstructionBlock {
  return readLines(description, 'agent', parseOne);
}

export type UsageInstruction = { readonly kind: 'report-zero' };

function parseUsage(tokens: readonly string[]): UsageInstruction {
  expectArity(tokens, 1, 'usage', 'report-zero');
  if (tokens[0] !== 'report-zero')
    throw new Problem(`unknown usage instruction ${JSON.stringify(tokens[0])} (known: report-zero)`);
  return { kind: 'report-zero' };
}

/** The `usage:` lines: how the session reports what its model's answer carried. */
export function parseUsageInstructions(description: string): Block<UsageInstruction> {
  return readLines(description, 'usage', parseUsage);
}
