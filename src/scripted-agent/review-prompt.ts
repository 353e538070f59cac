// What a reviewer's prompt tells the scripted agent: the machine lines the
// review prompt carries (`Review task: TASK-3`, `Review round: 2`,
// `Review nonce: ...`, `Review candidate: <sha>`, `Review fork: <sha>`) and
// the task's acceptance criteria, listed as `#N text` (as a list item, with a
// checkbox or not). Criteria outside fenced blocks win: the diff and other
// quoted text are fenced, and a task file's own `- [ ] #1` lines may show in
// them. Pure.

export interface ReviewCriterion {
  readonly index: number;
  readonly text: string;
}

export interface ReviewRequest {
  readonly taskId: string;
  readonly round: number;
  readonly nonce: string;
  readonly candidate: string;
  readonly fork: string;
  /** By index, each once. */
  readonly criteria: readonly ReviewCriterion[];
}

const SHA = /^[0-9a-f]{40}(?:[0-9a-f]{24})?$/;
const CRITERION = /^\s*(?:[-*]\s+)?(?:\[[ xX]\]\s+)?#(\d{1,3})[.:)]?\s+(\S.*?)\s*$/;
const FENCE = /^\s*(`{3,}|~{3,})/;

function machineLine(prompt: string, name: string): string | undefined {
  // The first word: whatever follows it on the line (a title, say) is for the model.
  return new RegExp(`^Review ${name}: *(\\S+)`, 'm').exec(prompt)?.[1];
}

/** `#N text` lines, first per index; those inside fences only when there are none outside. */
export function criteriaOf(prompt: string): ReviewCriterion[] {
  const outside = new Map<number, string>();
  const inside = new Map<number, string>();
  let fence: string | undefined;
  for (const line of prompt.split(/\r?\n/)) {
    const marker = FENCE.exec(line)?.[1];
    if (marker && (fence === undefined || (marker[0] === fence[0] && marker.length >= fence.length))) {
      fence = fence === undefined ? marker : undefined;
      continue;
    }
    const match = CRITERION.exec(line);
    if (!match) continue;
    const found = fence === undefined ? outside : inside;
    const index = Number(match[1]);
    if (index > 0 && !found.has(index)) found.set(index, match[2]!);
  }
  const chosen = outside.size ? outside : inside;
  return [...chosen.entries()].sort(([a], [b]) => a - b).map(([index, text]) => ({ index, text }));
}

export function readReviewPrompt(prompt: string): ReviewRequest | { readonly problem: string } {
  const taskId = machineLine(prompt, 'task');
  const round = machineLine(prompt, 'round');
  const nonce = machineLine(prompt, 'nonce');
  const candidate = machineLine(prompt, 'candidate');
  const fork = machineLine(prompt, 'fork');
  const missing = [
    ['task', taskId],
    ['round', round],
    ['nonce', nonce],
    ['candidate', candidate],
    ['fork', fork],
  ]
    .filter(([, value]) => value === undefined)
    .map(([name]) => `"Review ${name}: ..."`);
  if (missing.length) return { problem: `the review prompt has no ${missing.join(', ')} line` };
  if (!/^[1-9]\d{0,2}$/.test(round!)) return { problem: `"Review round: ${round}" is not a round number` };
  for (const [name, sha] of [
    ['candidate', candidate!],
    ['fork', fork!],
  ] as const)
    if (!SHA.test(sha)) return { problem: `"Review ${name}: ${sha}" is not a full commit id` };
  return {
    taskId: taskId!,
    round: Number(round),
    nonce: nonce!,
    candidate: candidate!,
    fork: fork!,
    criteria: criteriaOf(prompt),
  };
}
