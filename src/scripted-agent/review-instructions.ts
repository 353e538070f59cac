// The other roles' lines in a task description (AGENT_ROLE fix and review;
// `agent:` lines are the implementer's, instructions.ts). Pure.
//
//   fix: write PATH "TEXT"        as agent: write, in a fix round
//   fix: append PATH "LINE"       as agent: append
//   fix: sleep SECONDS | exit N | hang
//   fix: nothing                  change nothing and make no commit
//
//   review: approve               every criterion met, citing the first changed line (the default)
//   review: changes "MSG" [N]     changes_requested with finding MSG in rounds 1..N (default 1), approve after
//   review: changes-always "MSG"  changes_requested every round, the finding "MSG (round R)"
//   review: same-finding "MSG"    changes_requested every round, the same finding
//   review: garbage | empty | none   a verdict that is not JSON, an empty one, none at all
//   review: exit N | hang         end with code N, or never, writing no verdict
//   review: stale                 approve with the previous review session's round and nonce
//   review: contradictory         approve with criterion 1 unmet (no criteria: with a blocker finding)
//   review: unverified            approve citing a line the change does not touch
//   review: edit PATH "TEXT"      write a file in the checkout, then approve
//   review: commit                commit whatever is in the checkout (empty or not), then approve
//   review: move-branch           move the branch (and HEAD) back to HEAD~1, then approve
//   review: touch-agent           write .agent/x, then approve
//   review: rate-limited [N]      fail the way the CLI reports a rate limit, in the task's first N review
//                                 sessions (default: every one)
import { parseStep, type StepInstruction } from './instructions.js';
import {
  Problem,
  countArgument,
  exitCodeArgument,
  expectArity,
  pathArgument,
  quoted,
  readLines,
  type Block,
} from './tokens.js';

export type FixInstruction = StepInstruction | { readonly kind: 'nothing' };

/** What the reviewer's verdict is (the last such line wins). */
export type VerdictInstruction =
  | { readonly kind: 'approve' }
  | { readonly kind: 'changes'; readonly message: string; readonly rounds: number }
  | { readonly kind: 'changes-always'; readonly message: string }
  | { readonly kind: 'same-finding'; readonly message: string }
  | { readonly kind: 'garbage' | 'empty' | 'none' | 'hang' | 'stale' | 'contradictory' | 'unverified' }
  | { readonly kind: 'exit'; readonly code: number }
  | { readonly kind: 'rate-limited'; readonly sessions: number | undefined };

/** What the reviewer changes before it answers, in order. */
export type ReviewEffect =
  | { readonly kind: 'edit'; readonly path: string; readonly text: string }
  | { readonly kind: 'commit' | 'move-branch' | 'touch-agent' };

export type ReviewInstruction = VerdictInstruction | ReviewEffect;

const FIX_VERBS = 'write, append, sleep, exit, hang, nothing';
const REVIEW_VERBS =
  'approve, changes, changes-always, same-finding, garbage, empty, none, exit, hang, stale, contradictory, unverified, edit, commit, move-branch, touch-agent, rate-limited';

function parseFix(tokens: readonly string[]): FixInstruction {
  const step = parseStep(tokens, 'fix');
  if (step) return step;
  if (tokens[0] === 'nothing') {
    expectArity(tokens, 1, 'fix', 'nothing');
    return { kind: 'nothing' };
  }
  throw new Problem(`unknown fix instruction ${JSON.stringify(tokens[0] ?? '')} (known: ${FIX_VERBS})`);
}

function parseReview(tokens: readonly string[]): ReviewInstruction {
  const [verb, first, second] = tokens;
  switch (verb) {
    case 'approve':
    case 'garbage':
    case 'empty':
    case 'none':
    case 'hang':
    case 'stale':
    case 'contradictory':
    case 'unverified':
    case 'commit':
    case 'move-branch':
    case 'touch-agent':
      expectArity(tokens, 1, 'review', verb);
      return { kind: verb };
    case 'changes':
      if (tokens.length !== 2) expectArity(tokens, 3, 'review', 'changes "MSG" [N]');
      return {
        kind: 'changes',
        message: quoted(first, 'MSG'),
        rounds: second === undefined ? 1 : countArgument('changes', 'rounds', second),
      };
    case 'changes-always':
    case 'same-finding':
      expectArity(tokens, 2, 'review', `${verb} "MSG"`);
      return { kind: verb, message: quoted(first, 'MSG') };
    case 'exit':
      expectArity(tokens, 2, 'review', 'exit N');
      return { kind: 'exit', code: exitCodeArgument(first) };
    case 'edit':
      expectArity(tokens, 3, 'review', 'edit PATH "TEXT"');
      return { kind: 'edit', path: pathArgument(first), text: quoted(second, 'TEXT') };
    case 'rate-limited':
      if (tokens.length !== 1) expectArity(tokens, 2, 'review', 'rate-limited [N]');
      return {
        kind: 'rate-limited',
        sessions: first === undefined ? undefined : countArgument('rate-limited', 'sessions', first),
      };
    default:
      throw new Problem(`unknown review instruction ${JSON.stringify(verb ?? '')} (known: ${REVIEW_VERBS})`);
  }
}

export function parseFixInstructions(description: string): Block<FixInstruction> {
  return readLines(description, 'fix', parseFix);
}

export function parseReviewInstructions(description: string): Block<ReviewInstruction> {
  return readLines(description, 'review', parseReview);
}
