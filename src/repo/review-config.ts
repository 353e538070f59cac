// The `review` block of .agent/config.json: schema -> normalize, every
// problem named `review.<key>` with its fix. The repo may turn review on and
// make it stricter; the registry's review = "required" turns it on whatever
// the repo says (effectiveReview), so a repo can never make itself looser.
import type { ConfigProblem, RepoConfig, ReviewAssistant, ReviewConfig, Severity } from '../types.js';
import { modelIdProblem } from './model-id.js';
import { intIn, trueOrFalse, isString, oneOf, repoPath } from './value-checks.js';

export const SEVERITIES: readonly Severity[] = ['blocker', 'major', 'minor', 'nit'];
export const REVIEW_ASSISTANTS: readonly ReviewAssistant[] = ['other', 'same', 'claude', 'codex', 'command'];
/** The most fix rounds a repo may ask for. */
export const MAX_REVIEW_ROUNDS = 5;

export const DEFAULT_REVIEW: ReviewConfig = {
  enabled: false,
  assistant: 'other',
  model: undefined,
  maxRounds: 2,
  blockingSeverities: ['blocker', 'major'],
  requireDiffEvidence: true,
  preGate: false,
  prompt: undefined,
  timeoutSec: 1800,
};

/** The registry's review key: "required" overrides the repo, "optional" (the default) leaves it to the repo. */
export type RegistryReview = 'required' | 'optional';

interface ReviewField {
  readonly key: keyof ReviewConfig;
  readonly check: (value: unknown) => string | undefined;
  readonly fix: string;
  /** null means "unset" (the default). */
  readonly nullable?: true;
}

const severityList = (value: unknown) => {
  if (!Array.isArray(value) || value.some((item) => !SEVERITIES.includes(item as Severity)))
    return `must be a list of severities (${SEVERITIES.join(', ')})`;
  return new Set(value).size === value.length ? undefined : 'lists a severity twice';
};

const REVIEW_FIELDS: readonly ReviewField[] = [
  {
    key: 'enabled',
    check: trueOrFalse,
    fix: 'set "review.enabled" to true (review every task before it lands) or false',
  },
  {
    key: 'assistant',
    check: oneOf(REVIEW_ASSISTANTS),
    fix: `set "review.assistant" to one of ${REVIEW_ASSISTANTS.join(', ')} ("other": claude's work is reviewed by codex and the other way round)`,
  },
  {
    key: 'model',
    check: (value) => (isString(value) ? modelIdProblem(value) : 'must be a model id (a string)'),
    fix: 'set "review.model" to the reviewer\'s model id, e.g. "opus", or null for the default',
    nullable: true,
  },
  {
    key: 'maxRounds',
    check: intIn(0, MAX_REVIEW_ROUNDS),
    fix: `set "review.maxRounds" to the most fix rounds after a review asks for changes, 0 to ${MAX_REVIEW_ROUNDS} (default 2; 0 parks on the first request)`,
  },
  {
    key: 'blockingSeverities',
    check: severityList,
    fix: 'set "review.blockingSeverities" to the severities that keep a task from landing, e.g. ["blocker", "major"]',
  },
  {
    key: 'requireDiffEvidence',
    check: trueOrFalse,
    fix: 'set "review.requireDiffEvidence" to true (a criterion met must cite a changed line) or false (any line that exists)',
  },
  {
    key: 'preGate',
    check: trueOrFalse,
    fix: 'set "review.preGate" to true (run the gate before the reviewer) or false',
  },
  {
    key: 'prompt',
    check: repoPath,
    fix: 'set "review.prompt" to the path of extra reviewer instructions in the repo, e.g. ".agent/review.md", or null',
    nullable: true,
  },
  {
    key: 'timeoutSec',
    check: intIn(30, 86400),
    fix: 'set "review.timeoutSec" to the most seconds one review session may take, 30 to 86400 (default 1800)',
  },
];

export interface ReviewValidation {
  readonly review: ReviewConfig;
  readonly problems: readonly ConfigProblem[];
}

/** Pure: the review block from parsed JSON; a bad value keeps its default and is reported. */
export function validateReview(json: unknown, file: string): ReviewValidation {
  if (json === null || typeof json !== 'object' || Array.isArray(json))
    return {
      review: DEFAULT_REVIEW,
      problems: [
        {
          file,
          key: 'review',
          problem: 'must be an object',
          fix: 'write an object like "review": {"enabled": true}, or remove it',
        },
      ],
    };
  const input = json as Record<string, unknown>;
  const problems: ConfigProblem[] = [];
  const known = REVIEW_FIELDS.map((field) => field.key as string);
  for (const key of Object.keys(input)) {
    if (key.startsWith('//') || known.includes(key)) continue;
    problems.push({
      file,
      key: `review.${key}`,
      problem: 'is not a known key',
      fix: `remove it or use one of ${known.join(', ')}`,
    });
  }
  const review: Record<string, unknown> = { ...DEFAULT_REVIEW };
  for (const field of REVIEW_FIELDS) {
    const value = input[field.key];
    if (value === undefined || (value === null && field.nullable)) continue;
    const problem = field.check(value);
    if (problem) problems.push({ file, key: `review.${field.key}`, problem, fix: field.fix });
    else review[field.key] = value;
  }
  // Every value written above passed its field's check, which accepts exactly the ReviewConfig type of that key.
  return { review: review as unknown as ReviewConfig, problems };
}

/** Pure: a command reviewer runs the repo's "command", so it needs one. */
export function reviewCommandProblem(config: RepoConfig, file: string): ConfigProblem | undefined {
  if (config.review.assistant !== 'command' || config.command) return undefined;
  return {
    file,
    key: 'review.assistant',
    problem: 'is "command" but "command" is not set',
    fix: 'set "command" to the agent argv the reviewer runs, or choose another "review.assistant"',
  };
}

/** Pure: the review a drain runs: the registry's "required" turns it on, whatever the repo's config says. */
export function effectiveReview(review: ReviewConfig, registry: RegistryReview): ReviewConfig {
  return registry === 'required' && !review.enabled ? { ...review, enabled: true } : review;
}
