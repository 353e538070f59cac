// What a review that did not approve means for its task. Pure.
import type { TaskVerdict } from './task.js';

/** How the review stage ended, when it did not approve (drain/review/stage.ts). */
export type ReviewEnding =
  | { readonly kind: 'park'; readonly reason: string }
  | { readonly kind: 'systemic'; readonly reason: string }
  | { readonly kind: 'over-budget'; readonly reason: string }
  | { readonly kind: 'interrupted'; readonly reason: string };

/**
 * Pure: a review's park parks (the branch kept for a human); a reviewer that cannot work stops the drain and a stop
 * interrupts, neither charging an attempt and both keeping the Done branch, which the next drain reviews before it
 * integrates; a review past the task's budget parks like any over-budget task.
 */
export function afterReviewEnding(ending: ReviewEnding, recovered = false): TaskVerdict {
  switch (ending.kind) {
    case 'park':
      return { kind: 'park', reason: ending.reason, ...(recovered ? { recovered } : {}) };
    case 'over-budget':
      return { kind: 'park', reason: `over its budget (${ending.reason})`, ...(recovered ? { recovered } : {}) };
    case 'systemic':
      return { kind: 'systemic', reason: ending.reason, keepBranch: true };
    case 'interrupted':
      return { kind: 'interrupted', reason: ending.reason, keepBranch: true };
  }
}
