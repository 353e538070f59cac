// What a reviewer's verdict is worth, and what comes after it. The verdict
// is the reviewer's word, so each rule here can only withhold: a verdict for
// another task, round or commit, one that skips or invents a criterion, one
// whose claims cite nothing the change holds, or one that contradicts itself
// is not used at all. Pure.
import type { ChangedLines, Finding, Severity, VerdictDoc } from '../../types.js';

/** An acceptance criterion as it stood on auto/work when the task was cut ("#1" -> index 1). */
export interface TrustedCriterion {
  readonly index: number;
  readonly text: string;
}

/** What the runner asked of this review round. */
export interface ReviewExpectation {
  readonly taskId: string;
  readonly round: number;
  readonly nonce: string;
  readonly candidate: string;
  readonly criteria: readonly TrustedCriterion[];
}

export interface ReviewPolicy {
  readonly blockingSeverities: readonly Severity[];
  /** A met criterion must cite a changed line; otherwise any line that exists at the candidate. */
  readonly requireDiffEvidence: boolean;
}

/** What a cited line is checked against. */
export interface ReviewEvidence {
  readonly changed: ChangedLines;
  /** Lines of a file at the candidate; undefined when there is no such file. */
  readonly lineCount: (path: string) => number | undefined;
}

export type ReviewJudgement =
  | { readonly kind: 'approved' }
  | {
      readonly kind: 'changes';
      readonly unmet: readonly TrustedCriterion[];
      readonly blocking: readonly Finding[];
      readonly findings: readonly Finding[];
    }
  | {
      readonly kind: 'unusable';
      readonly why: 'unreadable' | 'contradictory' | 'unverified';
      readonly detail: string;
    };

type Unusable = Extract<ReviewJudgement, { kind: 'unusable' }>;
type Changes = Extract<ReviewJudgement, { kind: 'changes' }>;

const contradictory = (detail: string): Unusable => ({ kind: 'unusable', why: 'contradictory', detail });
const MAX_QUOTE = 80;

/** A reviewer's or task's words, short and on one line, for a reason. */
function quote(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return JSON.stringify(line.length > MAX_QUOTE ? `${line.slice(0, MAX_QUOTE - 1)}…` : line);
}

const describeCriterion = (criterion: TrustedCriterion) => `criterion #${criterion.index} ${quote(criterion.text)}`;
const describeFinding = (finding: Finding) =>
  `${finding.severity}${finding.location ? ` at ${finding.location}` : ''}: ${quote(finding.message)}`;

/** Pure: "path:line" as a path and a line number, or undefined when it is not one. */
export function parseCitation(citation: string): { readonly path: string; readonly line: number } | undefined {
  const match = /^(.+):([1-9]\d{0,8})$/.exec(citation);
  return match ? { path: match[1]!, line: Number(match[2]) } : undefined;
}

/** Why a citation proves nothing, or undefined when it names a line that exists (and is changed, when required). */
function citationProblem(citation: string, policy: ReviewPolicy, evidence: ReviewEvidence): string | undefined {
  const cited = parseCitation(citation);
  if (!cited) return `${quote(citation)}, which is not a path:line`;
  const ranges = evidence.changed.get(cited.path) ?? [];
  if (ranges.some((range) => cited.line >= range.start && cited.line < range.start + range.count)) return undefined;
  const lines = evidence.lineCount(cited.path);
  if (lines === undefined || cited.line > lines) return `${citation}, a line that does not exist at the candidate`;
  return policy.requireDiffEvidence ? `${citation}, a line the change does not touch` : undefined;
}

/** Task, round, nonce and candidate as asked: anything else is another review's verdict. */
function identityProblem(doc: VerdictDoc, expected: ReviewExpectation): string | undefined {
  if (doc.task_id !== expected.taskId) return `the verdict is for ${quote(doc.task_id)}, not ${expected.taskId}`;
  if (doc.round !== expected.round) return `the verdict is for round ${doc.round}, not round ${expected.round}`;
  // The expected nonce is not repeated: whoever reads the reason need not learn it.
  if (doc.nonce !== expected.nonce) return "the verdict's nonce is not this round's (a replayed or made-up verdict)";
  if (doc.candidate !== expected.candidate)
    return `the verdict reviewed ${doc.candidate.slice(0, 12)}, not the candidate ${expected.candidate.slice(0, 12)}`;
  return undefined;
}

/** Each trusted criterion exactly once, and no other. */
function coverageProblem(doc: VerdictDoc, expected: ReviewExpectation): string | undefined {
  const known = new Set(expected.criteria.map((criterion) => criterion.index));
  const seen = new Set<number>();
  for (const entry of doc.criteria) {
    if (!known.has(entry.criterion))
      return `criterion #${entry.criterion} is not one of the task's (${describeIndexes(expected.criteria)})`;
    if (seen.has(entry.criterion)) return `criterion #${entry.criterion} is judged twice`;
    seen.add(entry.criterion);
  }
  const missing = expected.criteria.find((criterion) => !seen.has(criterion.index));
  return missing ? `${describeCriterion(missing)} is not judged` : undefined;
}

const describeIndexes = (criteria: readonly TrustedCriterion[]) =>
  criteria.length ? criteria.map((criterion) => `#${criterion.index}`).join(', ') : 'it has none';

/**
 * Pure: what a review round's verdict is worth. Unreadable when there is no usable document; contradictory when it
 * is another round's, skips or invents a criterion, or contradicts itself; unverified when a criterion claimed met
 * cites no line that backs it.
 */
export function judgeVerdict(
  doc: VerdictDoc | { readonly problem: string },
  expected: ReviewExpectation,
  policy: ReviewPolicy,
  evidence: ReviewEvidence,
): ReviewJudgement {
  if ('problem' in doc) return { kind: 'unusable', why: 'unreadable', detail: doc.problem };
  const wrongRound = identityProblem(doc, expected) ?? coverageProblem(doc, expected);
  if (wrongRound) return contradictory(wrongRound);
  const byIndex = new Map(expected.criteria.map((criterion) => [criterion.index, criterion]));
  const unmet = doc.criteria.filter((entry) => !entry.met).map((entry) => byIndex.get(entry.criterion)!);
  const blocking = doc.findings.filter((finding) => policy.blockingSeverities.includes(finding.severity));
  if (doc.verdict === 'approve' && unmet.length)
    return contradictory(`approved with ${describeCriterion(unmet[0]!)} unmet`);
  if (doc.verdict === 'approve' && blocking.length)
    return contradictory(`approved with a blocking finding (${describeFinding(blocking[0]!)})`);
  if (doc.verdict === 'changes_requested' && !unmet.length && !doc.findings.length)
    return contradictory('changes requested, but every criterion is met and there is no finding');
  for (const entry of doc.criteria) {
    if (!entry.met) continue;
    const criterion = byIndex.get(entry.criterion)!;
    const problems = entry.evidence.map((citation) => citationProblem(citation, policy, evidence));
    if (problems.some((problem) => problem === undefined)) continue;
    const detail = problems.length
      ? `${describeCriterion(criterion)} is claimed met citing ${problems.slice(0, 2).join('; and ')}`
      : `${describeCriterion(criterion)} is claimed met with no evidence`;
    return { kind: 'unusable', why: 'unverified', detail };
  }
  if (doc.verdict === 'approve') return { kind: 'approved' };
  return { kind: 'changes', unmet, blocking, findings: doc.findings };
}

/** What a round's history holds: the fix rounds so far and the last round's request. */
export interface RoundHistory {
  readonly fixes: number;
  readonly previous?: Changes;
}

export type NextStep =
  { readonly kind: 'land' } | { readonly kind: 'fix' } | { readonly kind: 'park'; readonly reason: string };

/**
 * Pure: the same finding, however its line moved: severity, path and the message with case, spacing and closing
 * punctuation folded.
 */
export function findingKey(finding: Finding): string {
  const path = parseCitation(finding.location)?.path ?? finding.location;
  const message = finding.message
    .toLowerCase()
    .replace(/\s+/g, ' ')
    .trim()
    .replace(/[.!;:,]+$/, '');
  return `${finding.severity}\n${path}\n${message}`;
}

const MAX_REASON_ITEMS = 2;

/** The unmet criteria, then the findings, blocking first, as a short list. */
function describeRequest(changes: Pick<Changes, 'unmet' | 'blocking' | 'findings'>): string {
  const rest = changes.findings.filter((finding) => !changes.blocking.includes(finding));
  const items = [
    ...changes.unmet.map((criterion) => `${describeCriterion(criterion)} unmet`),
    ...[...changes.blocking, ...rest].map(describeFinding),
  ];
  const more = items.length > MAX_REASON_ITEMS ? ` (and ${items.length - MAX_REASON_ITEMS} more)` : '';
  return `${items.slice(0, MAX_REASON_ITEMS).join('; ')}${more}`;
}

/**
 * Pure: after a usable verdict, land, fix again, or park. Parks when a finding or unmet criterion of the previous
 * round survived its fix unchanged (the loop is not converging), or when `maxRounds` fixes have been made.
 */
export function afterReview(
  judgement: Extract<ReviewJudgement, { kind: 'approved' | 'changes' }>,
  history: RoundHistory,
  maxRounds: number,
): NextStep {
  if (judgement.kind === 'approved') return { kind: 'land' };
  const previous = history.previous;
  if (previous) {
    const before = new Set(previous.findings.map(findingKey));
    const unmetBefore = new Set(previous.unmet.map((criterion) => criterion.index));
    const survived = {
      unmet: judgement.unmet.filter((criterion) => unmetBefore.has(criterion.index)),
      blocking: judgement.blocking.filter((finding) => before.has(findingKey(finding))),
      findings: judgement.findings.filter((finding) => before.has(findingKey(finding))),
    };
    if (survived.unmet.length || survived.findings.length)
      return { kind: 'park', reason: `review: the same finding survived a fix round: ${describeRequest(survived)}` };
  }
  if (history.fixes >= maxRounds)
    return {
      kind: 'park',
      reason: `review: changes requested after ${history.fixes} fix round(s): ${describeRequest(judgement)}`,
    };
  return { kind: 'fix' };
}
