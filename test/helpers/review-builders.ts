// Builder fakes for the review verdict: a verdict document, what the runner
// expected of the round, and the change the citations are checked against.
import type { ChangedLines, Finding, VerdictCriterion, VerdictDoc } from '../../src/types.js';
import type {
  ReviewEvidence,
  ReviewExpectation,
  ReviewJudgement,
  ReviewPolicy,
} from '../../src/drain/verdict/review.js';

export const CANDIDATE = 'c'.repeat(40);
export const NONCE = 'n0nce-7f3a';

export function anExpectation(fields: Partial<ReviewExpectation> = {}): ReviewExpectation {
  return {
    taskId: 'TASK-3',
    round: 1,
    nonce: NONCE,
    candidate: CANDIDATE,
    criteria: [
      { index: 1, text: 'parse the flag' },
      { index: 2, text: 'document it' },
    ],
    ...fields,
  };
}

export function aPolicy(fields: Partial<ReviewPolicy> = {}): ReviewPolicy {
  return { blockingSeverities: ['blocker', 'major'], requireDiffEvidence: true, ...fields };
}

/** src/cli.ts lines 10-14 and docs/flags.md line 3 changed; src/cli.ts has 40 lines, README.md 12. */
export function anEvidence(fields: Partial<ReviewEvidence> = {}): ReviewEvidence {
  const changed: ChangedLines = new Map([
    ['src/cli.ts', [{ start: 10, count: 5 }]],
    ['docs/flags.md', [{ start: 3, count: 1 }]],
  ]);
  const lines: Record<string, number> = { 'src/cli.ts': 40, 'docs/flags.md': 3, 'README.md': 12 };
  return { changed, lineCount: (path) => lines[path], ...fields };
}

export function met(criterion: number, ...evidence: string[]): VerdictCriterion {
  return { criterion, met: true, evidence: evidence.length ? evidence : ['src/cli.ts:10'], note: 'done' };
}

export function unmet(criterion: number): VerdictCriterion {
  return { criterion, met: false, evidence: [], note: 'not done' };
}

export function aFinding(fields: Partial<Finding> = {}): Finding {
  return { severity: 'major', location: 'src/cli.ts:12', message: 'the flag is read twice', ...fields };
}

/** An approving verdict for anExpectation(): both criteria met with changed lines. */
export function aVerdict(fields: Partial<VerdictDoc> = {}): VerdictDoc {
  return {
    task_id: 'TASK-3',
    round: 1,
    nonce: NONCE,
    candidate: CANDIDATE,
    verdict: 'approve',
    criteria: [met(1, 'src/cli.ts:10'), met(2, 'docs/flags.md:3')],
    findings: [],
    summary: 'fine',
    ...fields,
  };
}

export type Changes = Extract<ReviewJudgement, { kind: 'changes' }>;

export function changes(fields: Partial<Omit<Changes, 'kind'>> = {}): Changes {
  const findings = fields.findings ?? [];
  return {
    kind: 'changes',
    unmet: [],
    blocking: findings.filter((finding) => finding.severity === 'blocker' || finding.severity === 'major'),
    findings,
    ...fields,
  };
}
