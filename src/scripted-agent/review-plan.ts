// What the scripted reviewer does in one session, decided before anything is
// touched: the changes it makes (edit, commit, move-branch, touch-agent), in
// order, and its answer: a verdict as the review stage reads it, text that is
// not one, or nothing. Pure.
import type { ReviewEffect, ReviewInstruction, VerdictInstruction } from './review-instructions.js';
import type { ReviewRequest } from './review-prompt.js';

/** The verdict as a reviewer writes it: the shape of VerdictDoc (src/drain/review/types.ts), key for key. */
export interface ScriptedVerdict {
  readonly task_id: string;
  readonly round: number;
  readonly nonce: string;
  readonly candidate: string;
  readonly verdict: 'approve' | 'changes_requested';
  readonly criteria: readonly {
    readonly criterion: number;
    readonly met: boolean;
    readonly evidence: readonly string[];
    readonly note: string;
  }[];
  readonly findings: readonly {
    readonly severity: 'blocker' | 'major' | 'minor' | 'nit';
    readonly location: string;
    readonly message: string;
  }[];
  readonly summary: string;
}

export type ReviewAnswer =
  | { readonly kind: 'verdict'; readonly doc: ScriptedVerdict }
  /** Not JSON at all. */
  | { readonly kind: 'garbage'; readonly text: string }
  /** Written, but empty. */
  | { readonly kind: 'empty' }
  /** Nothing written where the verdict goes. */
  | { readonly kind: 'none' }
  | { readonly kind: 'exit'; readonly code: number }
  | { readonly kind: 'hang' };

export interface ReviewPlan {
  readonly effects: readonly ReviewEffect[];
  readonly verdict: Exclude<VerdictInstruction, { kind: 'rate-limited' }>;
  /** rate-limited: how many of the task's review sessions hit the limit (undefined: every one). */
  readonly rateLimited: { readonly sessions: number | undefined } | undefined;
}

/** Where the reviewer looks: the first changed line, and a line of HEAD the change does not touch. */
export interface ReviewEvidence {
  readonly changed: string | undefined;
  readonly untouched: string | undefined;
}

export const GARBAGE = 'LGTM, ship it {not a verdict';

export function planReview(instructions: readonly ReviewInstruction[]): ReviewPlan {
  const effects: ReviewEffect[] = [];
  let verdict: ReviewPlan['verdict'] = { kind: 'approve' };
  let rateLimited: ReviewPlan['rateLimited'];
  for (const instruction of instructions) {
    switch (instruction.kind) {
      case 'edit':
      case 'commit':
      case 'move-branch':
      case 'touch-agent':
        effects.push(instruction);
        break;
      case 'rate-limited':
        rateLimited = { sessions: instruction.sessions };
        break;
      default:
        verdict = instruction;
    }
  }
  return { effects, verdict, rateLimited };
}

type Finding = ScriptedVerdict['findings'][number];

/**
 * The answer for this round. `previous` is the review session before this one (its round and nonce), for stale;
 * without one, stale answers for the round before with a nonce that was never given.
 */
export function answerFor(
  verdict: ReviewPlan['verdict'],
  request: ReviewRequest,
  evidence: ReviewEvidence,
  previous: { readonly round: number; readonly nonce: string } | undefined,
): ReviewAnswer {
  const cited = evidence.changed ? [evidence.changed] : [];
  const met = (citation: readonly string[]) =>
    request.criteria.map((criterion) => ({ criterion: criterion.index, met: true, evidence: citation, note: 'met' }));
  const doc = (overrides: Partial<ScriptedVerdict>): ReviewAnswer => {
    const approve = (overrides.verdict ?? 'approve') === 'approve';
    return {
      kind: 'verdict',
      doc: {
        task_id: request.taskId,
        round: request.round,
        nonce: request.nonce,
        candidate: request.candidate,
        verdict: 'approve',
        criteria: met(cited),
        findings: [],
        summary: `${request.taskId} round ${request.round}: ${approve ? 'approved' : 'changes requested'} by the scripted reviewer`,
        ...overrides,
      },
    };
  };
  const changes = (message: string): ReviewAnswer =>
    doc({ verdict: 'changes_requested', findings: [major(message, evidence.changed)] });
  switch (verdict.kind) {
    case 'approve':
      return doc({});
    case 'changes':
      return request.round <= verdict.rounds ? changes(verdict.message) : doc({});
    case 'changes-always':
      return changes(`${verdict.message} (round ${request.round})`);
    case 'same-finding':
      return changes(verdict.message);
    case 'garbage':
      return { kind: 'garbage', text: GARBAGE };
    case 'empty':
    case 'none':
    case 'hang':
      return { kind: verdict.kind };
    case 'exit':
      return { kind: 'exit', code: verdict.code };
    case 'stale':
      return doc(previous ?? { round: request.round - 1, nonce: `stale-${request.nonce}` });
    case 'contradictory':
      return request.criteria.length
        ? doc({
            criteria: met(cited).map((entry, at) =>
              at === 0 ? { ...entry, met: false, evidence: [], note: 'not done' } : entry,
            ),
          })
        : doc({ findings: [{ ...major('left unfinished', evidence.changed), severity: 'blocker' }] });
    case 'unverified':
      return doc({ criteria: met([evidence.untouched ?? 'README.md:1000000']) });
  }
}

function major(message: string, location: string | undefined): Finding {
  return { severity: 'major', location: location ?? '', message };
}
