// Who reviews a task: by default the other CLI than the one that did the
// work (claude's work is reviewed by codex and the other way round), since
// a model rarely catches its own mistakes; with one CLI on the host, another
// model of it. Pure: which CLIs are there is a parameter.
import type { AssistantName, ReviewConfig } from '../../types.js';

export interface ReviewerChoice {
  readonly assistant: AssistantName;
  /** undefined: the CLI's default model. */
  readonly model: string | undefined;
  /** Why the reviewer is not the one the config asked for, in words. */
  readonly fallback?: string;
}

export interface Implementer {
  readonly assistant: AssistantName;
  readonly model: string | undefined;
}

const OTHER: Readonly<Record<AssistantName, AssistantName>> = { claude: 'codex', codex: 'claude', command: 'command' };

/**
 * The model the implementer's own CLI reviews with: the config's review model, else for claude another model than
 * the implementer's (opus, or sonnet when the implementer ran opus); codex has no second model to name, so its own.
 */
function ownCliModel(review: Pick<ReviewConfig, 'model'>, implementer: Implementer): string | undefined {
  if (review.model !== undefined) return review.model;
  if (implementer.assistant === 'claude') return /opus/i.test(implementer.model ?? '') ? 'sonnet' : 'opus';
  if (implementer.assistant === 'codex') return implementer.model;
  return undefined;
}

/** Pure: the reviewer for a task, from review.assistant and review.model, the implementer and the CLIs on the host. */
export function chooseReviewer(
  review: Pick<ReviewConfig, 'assistant' | 'model'>,
  implementer: Implementer,
  available: (assistant: AssistantName) => boolean,
): ReviewerChoice {
  const wanted =
    review.assistant === 'same'
      ? implementer.assistant
      : review.assistant === 'other'
        ? OTHER[implementer.assistant]
        : review.assistant;
  // Its own CLI (asked for, or the command agent, which has no other): another model of it where there is one.
  if (wanted === implementer.assistant) return { assistant: wanted, model: ownCliModel(review, implementer) };
  if (available(wanted)) return { assistant: wanted, model: review.model };
  const model = ownCliModel(review, implementer);
  return {
    assistant: implementer.assistant,
    model,
    fallback: `${wanted} is not available, so ${implementer.assistant} reviews its own work (model ${model ?? 'default'})`,
  };
}
