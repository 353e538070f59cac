// .agent/config.json: schema -> normalize -> rules. The repo's config is
// untrusted: it can make a run stricter, never grant itself more (caps from
// the registry or the CLI are applied on top, see applyCaps).
import type { AssistantName, ConfigProblem, MergeMethodName, RepoConfig, Task, WorkBranchMode } from '../types.js';
import { UsageError, configValueError, formatProblems } from '../errors.js';
import { describeLabelProblem, effortLabel, modelLabel } from '../board/labels.js';
import { ALL_EFFORTS, EFFORTS, effortProblem } from './efforts.js';
import { escalationProblems } from './escalation.js';
import { modelIdProblem } from './model-id.js';
import { DEFAULT_REVIEW, reviewCommandProblem, validateReview } from './review-config.js';
import { intIn, isString, oneOf, repoPath } from './value-checks.js';

export const CONFIG_FILE = '.agent/config.json';

export const ASSISTANTS: readonly AssistantName[] = ['claude', 'codex', 'command'];
const WORK_BRANCH_MODES: readonly WorkBranchMode[] = ['reset', 'accumulate'];
export const MERGE_METHODS: readonly MergeMethodName[] = ['merge', 'squash', 'rebase'];

/** The most finished tasks one gate run judges together unless the repo says otherwise (drain/verdict/batch.ts). */
export const DEFAULT_MAX_BATCH = 8;

export const DEFAULT_CONFIG: RepoConfig = {
  assistant: 'claude',
  model: undefined,
  effort: undefined,
  workBranchMode: 'accumulate',
  maxParallel: 2,
  gates: '.agent/gates.sh',
  setup: undefined,
  agentIdleTimeoutSec: 480,
  agentWallClockSec: 3 * 3600,
  maxAttempts: 2,
  maxBatch: DEFAULT_MAX_BATCH,
  prompt: '.agent/prompt.md',
  command: undefined,
  baseBranch: 'main',
  mergeMethod: 'merge',
  review: DEFAULT_REVIEW,
};

/**
 * The most agents one repo may run at once: the bound the repo config and
 * the registry's max_parallel are both checked against (the cap a run gets
 * is still the lower of the two, see applyOverrides). 16, not the 64 the
 * registry used to accept: every run was already clamped to 16, so no drain
 * runs differently, and a registry asking for more now hears so instead of
 * being lowered in silence.
 */
export const MAX_PARALLEL_CEILING = 16;

interface Field {
  readonly key: keyof RepoConfig;
  readonly check: (value: unknown) => string | undefined;
  readonly fix: string;
}

const isArgv = (value: unknown): value is string[] =>
  Array.isArray(value) && value.length > 0 && value.every((item) => isString(item) && item.length > 0);
const safeBranch = (value: unknown) =>
  isString(value) &&
  /^[A-Za-z0-9][A-Za-z0-9._/-]{0,99}$/.test(value) &&
  !value.includes('..') &&
  !value.endsWith('.lock') &&
  !value.endsWith('/')
    ? undefined
    : 'must be a plain branch name (letters, digits, . _ / -)';

const FIELDS: readonly Field[] = [
  { key: 'assistant', check: oneOf(ASSISTANTS), fix: `set "assistant" to one of ${ASSISTANTS.join(', ')}` },
  {
    key: 'model',
    check: (value) => (isString(value) ? modelIdProblem(value) : 'must be a model id (a string)'),
    fix: 'set "model" to a model id such as "sonnet", or remove it',
  },
  // Which of these the assistant accepts is checked below, with the assistant known.
  { key: 'effort', check: oneOf(ALL_EFFORTS), fix: `set "effort" to one of ${ALL_EFFORTS.join(', ')}, or remove it` },
  { key: 'workBranchMode', check: oneOf(WORK_BRANCH_MODES), fix: 'set "workBranchMode" to "accumulate" or "reset"' },
  {
    key: 'maxParallel',
    check: intIn(1, MAX_PARALLEL_CEILING),
    fix: `set "maxParallel" to a number from 1 to ${MAX_PARALLEL_CEILING}`,
  },
  {
    key: 'gates',
    check: repoPath,
    fix: 'set "gates" to the path of an executable script in the repo, e.g. ".agent/gates.sh"',
  },
  {
    key: 'setup',
    check: (value) =>
      isArgv(value) || repoPath(value) === undefined
        ? undefined
        : 'must be an argv array like ["npm", "ci"] or the path of a script in the repo',
    fix: 'set "setup" to an argv array or a script path, or remove it',
  },
  {
    key: 'agentIdleTimeoutSec',
    check: intIn(5, 24 * 3600),
    fix: 'set "agentIdleTimeoutSec" to seconds without output before the agent is stopped (default 480)',
  },
  {
    key: 'agentWallClockSec',
    check: intIn(10, 7 * 24 * 3600),
    fix: 'set "agentWallClockSec" to the most seconds one agent session may take',
  },
  {
    key: 'maxAttempts',
    check: intIn(1, 10),
    fix: 'set "maxAttempts" to how often a failing task is tried before it is parked (default 2)',
  },
  {
    key: 'maxBatch',
    check: intIn(1, 64),
    fix: 'set "maxBatch" to how many finished tasks one gate run may judge together, 1 to 64 (default 8; 1 gates each task alone)',
  },
  {
    key: 'prompt',
    check: repoPath,
    fix: 'set "prompt" to the path of the base prompt in the repo, e.g. ".agent/prompt.md"',
  },
  {
    key: 'command',
    check: (value) => (isArgv(value) ? undefined : 'must be a non-empty argv array of strings'),
    fix: 'set "command" to the agent argv, e.g. ["./agent.sh"]',
  },
  { key: 'baseBranch', check: safeBranch, fix: 'set "baseBranch" to the branch agents build on, e.g. "main"' },
  {
    key: 'mergeMethod',
    check: oneOf(MERGE_METHODS),
    fix: 'set "mergeMethod" to "merge" (keeps each landing commit), "squash" or "rebase"',
  },
];

export interface ConfigValidation {
  readonly config: RepoConfig;
  readonly problems: readonly ConfigProblem[];
  readonly warnings: readonly ConfigProblem[];
}

/** Pure: validates parsed JSON, reporting every problem at once. */
export function validateConfig(json: unknown, file: string = CONFIG_FILE): ConfigValidation {
  const problems: ConfigProblem[] = [];
  const warnings: ConfigProblem[] = [];
  if (json === null || typeof json !== 'object' || Array.isArray(json)) {
    return {
      config: DEFAULT_CONFIG,
      problems: [
        { file, key: '(root)', problem: 'must be a JSON object', fix: 'write an object like {"assistant": "claude"}' },
      ],
      warnings,
    };
  }
  const input = json as Record<string, unknown>;
  const known = new Set([...FIELDS.map((field) => field.key as string), 'review']);
  for (const key of Object.keys(input)) {
    if (key === '$schema' || key.startsWith('//')) continue;
    if (!known.has(key))
      problems.push({
        file,
        key,
        problem: 'is not a known key',
        fix: `remove it or use one of ${[...known].join(', ')}`,
      });
  }
  const config: Record<string, unknown> = { ...DEFAULT_CONFIG };
  for (const field of FIELDS) {
    if (!(field.key in input) || input[field.key] === undefined) continue;
    const value = input[field.key];
    if (value === null && (field.key === 'model' || field.key === 'effort' || field.key === 'setup')) continue;
    const problem = field.check(value);
    if (problem) problems.push({ file, key: field.key, problem, fix: field.fix });
    else config[field.key] = value;
  }
  if (input.review !== undefined) {
    const review = validateReview(input.review, file);
    problems.push(...review.problems);
    config.review = review.review;
  }
  // Every value written above passed its field's check, which accepts exactly the RepoConfig type of that key.
  const result = config as unknown as RepoConfig;
  if (
    result.assistant === 'command' &&
    !result.command &&
    !problems.some((p) => p.key === 'command' || p.key === 'assistant')
  ) {
    problems.push({
      file,
      key: 'command',
      problem: 'is required when "assistant" is "command"',
      fix: 'set "command" to the agent argv, e.g. ["./agent.sh"]',
    });
  }
  const reviewCommand = reviewCommandProblem(result, file);
  if (reviewCommand && !problems.some((p) => ['command', 'review', 'review.assistant'].includes(p.key)))
    problems.push(reviewCommand);
  const effortWrong = result.effort === undefined ? undefined : effortProblem(result.assistant, result.effort);
  if (effortWrong && !problems.some((p) => p.key === 'effort' || p.key === 'assistant')) {
    problems.push({
      file,
      key: 'effort',
      problem: effortWrong,
      fix: `set "effort" to one of ${EFFORTS[result.assistant].join(', ')}, or remove it`,
    });
  }
  if (result.command && result.assistant !== 'command') {
    warnings.push({
      file,
      key: 'command',
      problem: `is ignored because "assistant" is "${result.assistant}"`,
      fix: 'remove it or set "assistant" to "command"',
    });
  }
  if (result.agentWallClockSec < result.agentIdleTimeoutSec) {
    warnings.push({
      file,
      key: 'agentWallClockSec',
      problem: 'is shorter than agentIdleTimeoutSec, so the idle watchdog never fires',
      fix: 'raise agentWallClockSec',
    });
  }
  return { config: result, problems, warnings };
}

/**
 * Pure: the config from its text (undefined: no file, the defaults); throws UsageError with every problem. `file` names
 * where it came from.
 */
export function parseRepoConfig(text: string | undefined, file: string): ConfigValidation {
  if (text === undefined) return { config: DEFAULT_CONFIG, problems: [], warnings: [] };
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new UsageError(
      configValueError(file, '(file)', `is not valid JSON (${(error as Error).message})`, 'fix the syntax'),
    );
  }
  const validation = validateConfig(json, file);
  if (validation.problems.length)
    throw new UsageError(
      `invalid config, ${validation.problems.length} problem(s):\n${formatProblems(validation.problems)}`,
    );
  return validation;
}

export interface Overrides {
  readonly assistant?: AssistantName;
  readonly model?: string;
  readonly effort?: string;
  readonly maxParallel?: number;
}

export interface Caps {
  /** The registry's cap on parallel agents for this repo. */
  readonly maxParallel?: number;
}

/**
 * Precedence: CLI flag, then repo config, then default. Caps (registry) only
 * ever lower maxParallel; the repo can never raise itself above them.
 */
export function applyOverrides(config: RepoConfig, overrides: Overrides, caps: Caps = {}): RepoConfig {
  const wanted = overrides.maxParallel ?? config.maxParallel;
  const cap = Math.min(caps.maxParallel ?? MAX_PARALLEL_CEILING, MAX_PARALLEL_CEILING);
  return {
    ...config,
    assistant: overrides.assistant ?? config.assistant,
    model: overrides.model ?? config.model,
    effort: overrides.effort ?? config.effort,
    maxParallel: Math.max(1, Math.min(wanted, cap)),
  };
}

export interface ModelChoice {
  readonly model: string | undefined;
  readonly effort: string | undefined;
  /** Where each came from, stamped into the transcript. */
  readonly modelSource: 'label' | 'flag-or-config' | 'default';
  readonly effortSource: 'label' | 'flag-or-config' | 'default';
  /**
   * A task label its assistant cannot take (repo/escalation.ts; readiness already keeps such a task from a drain):
   * the task must not run on a guess.
   */
  readonly problem?: string;
}

/**
 * A task's model:<id> / effort:<level> labels sit above everything: a
 * drain-wide flag never downgrades a task that asked for more.
 */
export function resolveModelChoice(config: RepoConfig, task: Task | undefined): ModelChoice {
  const labelModel = task ? modelLabel(task) : undefined;
  const labelEffort = task ? effortLabel(task) : undefined;
  const wrong = task ? escalationProblems(config.assistant, task)[0] : undefined;
  return {
    ...(wrong ? { problem: describeLabelProblem(wrong) } : {}),
    model: labelModel ?? config.model,
    effort: labelEffort ?? config.effort,
    modelSource: labelModel ? 'label' : config.model ? 'flag-or-config' : 'default',
    effortSource: labelEffort ? 'label' : config.effort ? 'flag-or-config' : 'default',
  };
}
