// The landing commit's review trailer: who approved, in which round, which commit. Pure.
import type { AssistantName } from '../../types.js';

export const REVIEW_TRAILER = 'Agent-Runner-Review';

export interface ReviewTrailerInput {
  readonly assistant: AssistantName;
  /** The reviewer's model; undefined when the CLI's default ran and did not say which. */
  readonly model: string | undefined;
  readonly round: number;
  /** The most review rounds (fix rounds + 1). */
  readonly maxRounds: number;
  /** The commit the reviewer approved. */
  readonly candidate: string;
}

/** `approved (codex/gpt-5, round 2/3, 0123456789ab)`: the trailer's value. */
export function reviewTrailer(input: ReviewTrailerInput): string {
  return `approved (${input.assistant}/${input.model ?? 'default'}, round ${input.round}/${input.maxRounds}, ${input.candidate.slice(0, 12)})`;
}
