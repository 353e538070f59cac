// The review stage: between a task's Done and the integration queue (outside
// the integrator's mutex, so a review never holds up other landings). Each
// round: the optional pre-gate, then a reviewer with a fresh context on the
// exact candidate, given the task as auto/work held it when the task was cut;
// its verdict is taken as hostile data and judged by verdict/review.ts, which
// can only withhold. Changes requested go to a fresh implementer session on
// the same branch (a fix round, its commit handed over and checked like any),
// then a fresh reviewer judges the new candidate. What the stage ends in:
// approved (the landing's trailer), or why not (park, a systemic stop, over
// budget, a stop). The branch is kept in every ending but approval.
import { randomBytes } from 'node:crypto';
import * as path from 'node:path';
import type { AgentAdapter, AssistantName, Task } from '../../types.js';
import type { TaskReviewedEvent } from '../types.js';
import { basePromptAt, runAgentSessions, type WorkerContext } from '../task-worker.js';
import { judgeCandidate, type GateSpec } from '../integrate/index.js';
import { changedBetween } from '../../git/diff.js';
import { Transcript } from '../../agent/transcript.js';
import { superviseAgent } from '../../agent/supervise.js';
import { transcriptFile, workspaceStateDir } from '../../paths.js';
import { taskBranch } from '../../staging/names.js';
import { resolveCommit } from '../../git/refs.js';
import { changedLines } from '../../git/diff.js';
import { isUnreadable, parseTaskFile } from '../../board/parse.js';
import { SideStepError } from '../../handoff/side.js';
import { redactSecrets } from '../../agent/secrets.js';
import {
  afterReview,
  judgeVerdict,
  type ReviewJudgement,
  type RoundHistory,
  type TrustedCriterion,
} from '../verdict/index.js';
import { verdictSchemaText } from './schema.js';
import { MAX_VERDICT_BYTES, parseVerdictDoc } from './verdict-doc.js';
import { isDailyBudgetReason } from '../../spend/verdict.js';
import { fixPrompt, reviewPrompt } from './prompt.js';
import { reviewTrailer } from './trailer.js';
import { runReviewerSession } from './session.js';
import { brokerSessionId } from '../../agent/adapters/index.js';
import { keptVerdictFile, type ReviewRecords, type ReviewRound } from './records.js';
import type { ReviewConfig, VerdictDoc } from '../../types.js';

/** Who reviews, resolved once per drain (drain/review/reviewer.ts chose; orchestrate found the binary). */
export interface Reviewer {
  readonly assistant: AssistantName;
  readonly adapter: AgentAdapter;
  readonly binary: string;
  readonly model: string | undefined;
  /** The command reviewer's argv (the repo's own "command"). */
  readonly command: readonly string[] | undefined;
}

export interface ReviewContext {
  readonly worker: WorkerContext;
  readonly review: ReviewConfig;
  readonly reviewer: Reviewer;
  /** The trusted gate (auto/work's), for the pre-gate. */
  readonly gate: GateSpec;
  readonly records: ReviewRecords;
  /** Told each task's review ending (the drain's book: progress and summary). */
  readonly reviewed: (event: TaskReviewedEvent) => void;
  readonly stop: AbortSignal;
}

export type ReviewOutcome =
  | { readonly kind: 'approved'; readonly trailer: string; readonly candidate: string }
  | { readonly kind: 'park'; readonly reason: string }
  /** The reviewer cannot work at all (rate limited, not logged in): the drain stops, no attempt is charged. */
  | { readonly kind: 'systemic'; readonly reason: string }
  | { readonly kind: 'over-budget'; readonly reason: string }
  | { readonly kind: 'interrupted'; readonly reason: string };

const GATE_TAIL_LINES = 15;

/** A file's text as auto/work held it at `commit` (the runner's side: trusted); undefined when it has none. */
async function shownAt(ctx: ReviewContext, commit: string, file: string): Promise<string | undefined> {
  const shown = await ctx.worker.git.try(ctx.worker.workspace, ['show', `${commit}:${file}`]);
  return shown.exitCode === 0 ? shown.stdout : undefined;
}

/** The task's text and criteria as auto/work held them at the fork: the implementer's edits never reach review. */
async function trustedTask(ctx: ReviewContext, task: Task, fork: string): Promise<Task | string> {
  const text = await shownAt(ctx, fork, task.file);
  if (text === undefined) return `the task's file ${task.file} is not on auto/work at ${fork.slice(0, 12)}`;
  const parsed = parseTaskFile(task.file, text);
  return isUnreadable(parsed) ? `${parsed.file}: ${parsed.reason}` : parsed;
}

function criteriaOf(task: Task): TrustedCriterion[] {
  return task.acceptanceCriteria.map((criterion) => ({ index: criterion.index, text: criterion.text }));
}

/** Lines of each cited file at the candidate, for the evidence check (bounded: a verdict may cite anything). */
async function lineCounts(ctx: ReviewContext, candidate: string, doc: VerdictDoc): Promise<Map<string, number>> {
  const paths = new Set<string>();
  for (const criterion of doc.criteria)
    for (const cited of criterion.evidence) {
      const colon = cited.lastIndexOf(':');
      if (colon > 0) paths.add(cited.slice(0, colon));
    }
  const counts = new Map<string, number>();
  for (const file of [...paths].slice(0, 64)) {
    const shown = await ctx.worker.git.try(ctx.worker.workspace, ['cat-file', 'blob', `${candidate}:${file}`]);
    if (shown.exitCode !== 0) continue;
    const text = shown.stdout;
    counts.set(file, text === '' ? 0 : text.split('\n').length - (text.endsWith('\n') ? 1 : 0));
  }
  return counts;
}

/** The trusted gate over the candidate in the task's own checkout, as the agent: its tail when red. */
async function preGate(ctx: ReviewContext, task: Task, candidate: string): Promise<string | undefined> {
  const dir = ctx.worker.sides.agentDir(task.id);
  const script = ctx.gate.script;
  if (!ctx.review.preGate || !script) return undefined;
  const lines: string[] = [];
  const run = await superviseAgent(
    { process: ctx.worker.sides.processOf('agent'), clock: ctx.worker.ports.clock },
    { program: path.join(dir, script), args: [], env: { ...ctx.worker.env, AGENT_TASK_ID: task.id }, cwd: dir },
    { idleTimeoutMs: ctx.gate.timeoutMs, wallClockMs: ctx.gate.timeoutMs, killGraceMs: 5000 },
    (_stream, line) => {
      lines.push(line);
      if (lines.length > GATE_TAIL_LINES) lines.shift();
    },
  );
  // What the gate built or changed is not the candidate's: the reviewer gets the candidate as it was handed over.
  await ctx.worker.sides.restoreCheckout(task.id, candidate);
  if (run.endedBy === 'exit' && run.exitCode === 0) return undefined;
  const how = run.endedBy === 'exit' ? `exit ${run.exitCode ?? run.signal}` : run.endedBy;
  return `${script} failed (${how}):\n${redactSecrets(lines.join('\n'), ctx.worker.secrets)}`;
}

type SessionVerdict =
  | { readonly kind: 'judged'; readonly judgement: ReviewJudgement; readonly doc?: VerdictDoc; readonly kept?: string }
  | { readonly kind: 'changed'; readonly reason: string }
  | Extract<ReviewOutcome, { kind: 'systemic' | 'over-budget' }>;

/** One reviewer session of a round (attempt 2 is the relaunch after an unusable verdict), judged. */
async function reviewOnce(
  ctx: ReviewContext,
  task: Task,
  trusted: Task,
  round: {
    readonly number: number;
    readonly attempt: number;
    readonly fork: string;
    readonly candidate: string;
    /** The candidate's diff against the fork and the paths it changes, taken once a round. */
    readonly change: { readonly diff: string; readonly paths: readonly string[] };
  },
  transcript: Transcript,
  gateTail: string,
): Promise<SessionVerdict> {
  const { worker, reviewer } = ctx;
  const { git, workspace, sides } = worker;
  const dir = sides.agentDir(task.id);
  const nonce = randomBytes(12).toString('hex');
  const files = await sides.reviewFiles(task.id, round.number, round.attempt, verdictSchemaText());
  const policy = {
    blockingSeverities: ctx.review.blockingSeverities,
    requireDiffEvidence: ctx.review.requireDiffEvidence,
  };
  const extraPrompt = ctx.review.prompt ? await shownAt(ctx, round.fork, ctx.review.prompt) : undefined;
  const prompt = reviewPrompt({
    task: { id: task.id, title: trusted.title },
    taskText: trusted.description,
    criteria: criteriaOf(trusted),
    diff: round.change.diff,
    changedPaths: round.change.paths,
    gateTail,
    nonce,
    round: round.number,
    maxRounds: ctx.review.maxRounds,
    candidate: round.candidate,
    fork: round.fork,
    verdictTo: reviewer.assistant === 'command' ? { kind: 'file', path: files.verdictFile } : { kind: 'final-answer' },
    policy,
    ...(extraPrompt !== undefined ? { extraPrompt } : {}),
  });
  const session = await runReviewerSession(
    {
      process: sides.processOf('agent'),
      clock: worker.ports.clock,
      transcript,
      onProcess: (event) => worker.onProcess(task, event, 'agent'),
    },
    {
      adapter: reviewer.adapter,
      binary: reviewer.binary,
      model: reviewer.model,
      command: reviewer.command,
      taskId: task.id,
      round: round.number,
      workspace: dir,
      prompt,
      env: worker.env,
      files,
      idleTimeoutMs: worker.config.agentIdleTimeoutSec * 1000,
      timeoutMs: ctx.review.timeoutSec * 1000,
      ...(worker.brokerUrl !== undefined
        ? {
            broker: {
              url: worker.brokerUrl,
              session: brokerSessionId(worker.runId, task.id, 'review', `${round.number}.${round.attempt}`),
            },
          }
        : {}),
    },
  );
  const { result } = session;
  const over = worker.sessions?.afterReviewSession(task, reviewer.assistant, {
    ...session,
    model: reviewer.model,
    effort: undefined,
    role: 'review',
  });
  if (!result.ok && (result.failure === 'rate-limited' || result.failure === 'not-logged-in'))
    return {
      kind: 'systemic',
      reason: `the reviewer (${reviewer.assistant}) cannot work: ${result.failure}${result.detail ? `: ${result.detail}` : ''}`,
    };
  const changedBy = await sides.reviewerChanged(task.id, round.candidate);
  if (changedBy) return { kind: 'changed', reason: changedBy };
  if (over) return { kind: 'over-budget', reason: over };
  // The repo's day is spent: like a rate limit, nothing of the task's; the Done branch waits for the next drain.
  if (!result.ok && result.brokerOverBudget !== undefined && isDailyBudgetReason(result.brokerOverBudget))
    return { kind: 'systemic', reason: `the broker refused the reviewer's session: ${result.brokerOverBudget}` };
  if (!result.ok && result.brokerOverBudget !== undefined)
    return { kind: 'over-budget', reason: `the broker refused the reviewer's session (${result.brokerOverBudget})` };

  const kept = keptVerdictFile(
    workspaceStateDir(worker.stateDir, workspace),
    worker.runId,
    task.id,
    round.number,
    round.attempt,
  );
  let text: string | undefined;
  if (reviewer.assistant === 'claude') {
    text = result.structuredOutput;
    if (text !== undefined) await worker.ports.fs.writeAtomic(kept, text, 0o600);
  } else {
    const taken = await sides.takeVerdictFile(files.verdictName, kept, MAX_VERDICT_BYTES);
    if ('problem' in taken)
      return { kind: 'judged', judgement: { kind: 'unusable', why: 'unreadable', detail: taken.problem } };
    text = taken.text;
  }
  if (!result.ok && !text?.trim())
    return {
      kind: 'judged',
      judgement: {
        kind: 'unusable',
        why: 'unreadable',
        detail: `no verdict: the reviewer ${result.failure ?? 'failed'}${result.detail ? ` (${result.detail})` : ''}`,
      },
    };
  const doc = parseVerdictDoc(text, MAX_VERDICT_BYTES);
  if ('problem' in doc)
    return { kind: 'judged', judgement: { kind: 'unusable', why: 'unreadable', detail: doc.problem } };
  const counts = await lineCounts(ctx, round.candidate, doc);
  const judgement = judgeVerdict(
    doc,
    { taskId: task.id, round: round.number, nonce, candidate: round.candidate, criteria: criteriaOf(trusted) },
    policy,
    { changed: await changedLines(git, workspace, round.fork, round.candidate), lineCount: (file) => counts.get(file) },
  );
  return { kind: 'judged', judgement, doc, kept };
}

/** A fix round: a fresh implementer session on the task's branch, told the findings; the new candidate, or why not. */
async function fixRound(
  ctx: ReviewContext,
  task: Task,
  fork: string,
  candidate: string,
  fixes: number,
  judgement: Extract<ReviewJudgement, { kind: 'changes' }>,
  summary: string | undefined,
): Promise<{ readonly candidate: string } | ReviewOutcome> {
  const { worker } = ctx;
  const { sides } = worker;
  const report = await runAgentSessions(worker, task, {
    startHead: candidate,
    basePrompt: undefined,
    role: 'fix',
    prompt: fixPrompt({
      basePrompt: await basePromptAt(worker, fork),
      task,
      fix: fixes + 1,
      maxRounds: ctx.review.maxRounds,
      unmet: judgement.unmet,
      findings: judgement.findings,
      ...(summary ? { summary } : {}),
    }),
  });
  const outcome = report.outcome;
  const failure = report.sessions.at(-1)?.result.failure;
  if (outcome.kind === 'over-budget') return { kind: 'over-budget', reason: outcome.reason };
  if (outcome.kind === 'agent-failed' && (failure === 'rate-limited' || failure === 'not-logged-in'))
    return { kind: 'systemic', reason: outcome.reason };
  if (outcome.kind !== 'done')
    return { kind: 'park', reason: `review: fix round ${fixes + 1} did not end Done (${outcome.reason})` };
  const accepted = await sides.handOver(task.id, fork, report.leftovers);
  if (!accepted.accepted) return { kind: 'park', reason: `review: fix round ${fixes + 1}: ${accepted.reason}` };
  const tip = await resolveCommit(worker.git, worker.workspace, taskBranch(task.id));
  if (!tip || tip === candidate) return { kind: 'park', reason: `review: fix round ${fixes + 1} made no commit` };
  return { candidate: tip };
}

function roundOf(number: number, candidate: string, verdict: SessionVerdict | { pregate: string }): ReviewRound {
  if ('pregate' in verdict) return { round: number, judgement: 'pre-gate-red', candidate, detail: verdict.pregate };
  if (verdict.kind !== 'judged')
    return { round: number, judgement: 'unusable', candidate, detail: 'reason' in verdict ? verdict.reason : '' };
  const { judgement } = verdict;
  const kept = verdict.kept ? { verdictFile: verdict.kept } : {};
  switch (judgement.kind) {
    case 'approved':
      return { round: number, judgement: 'approved', candidate, ...kept };
    case 'changes':
      return {
        round: number,
        judgement: 'changes',
        candidate,
        findings: judgement.findings.map(({ severity, location, message }) => ({ severity, location, message })),
        unmet: judgement.unmet.map((criterion) => criterion.index),
        ...kept,
      };
    case 'unusable':
      return {
        round: number,
        judgement: 'unusable',
        candidate,
        detail: `${judgement.why}: ${judgement.detail}`,
        ...kept,
      };
  }
}

/**
 * Reviews a Done task's candidate (its branch's tip, accepted on the runner's side) until it is approved or must not
 * land. Its agent-side checkout must be the candidate (the task's worktree, or prepared for a recovered branch).
 */
export async function reviewCandidate(
  ctx: ReviewContext,
  task: Task,
  fork: string,
  first: string,
): Promise<ReviewOutcome> {
  const { worker, reviewer } = ctx;
  const transcript = new Transcript(
    worker.ports.fs,
    worker.ports.clock,
    transcriptFile(worker.stateDir, worker.workspace, worker.runId, task.id),
    worker.secrets,
  );
  const rounds: ReviewRound[] = [];
  const finish = async (outcome: ReviewOutcome, candidate: string): Promise<ReviewOutcome> => {
    await ctx.records.write({
      v: 1,
      taskId: task.id,
      runId: worker.runId,
      candidate,
      approved: outcome.kind === 'approved',
      outcome: outcome.kind === 'approved' ? outcome.trailer : outcome.reason,
      reviewer: { assistant: reviewer.assistant, model: reviewer.model ?? null },
      rounds,
      at: new Date(worker.ports.clock.now()).toISOString(),
    });
    ctx.reviewed({
      event: 'task-reviewed',
      taskId: task.id,
      title: task.title,
      verdict: outcome.kind === 'approved' ? 'approved' : outcome.kind,
      rounds: rounds.length,
      detail: outcome.kind === 'approved' ? outcome.trailer : outcome.reason,
    });
    return outcome;
  };
  const trusted = await trustedTask(ctx, task, fork);
  if (typeof trusted === 'string') return finish({ kind: 'park', reason: `review: ${trusted}` }, first);

  let candidate = first;
  let history: RoundHistory = { fixes: 0 };
  for (let number = 1; ; number++) {
    if (ctx.stop.aborted)
      return finish({ kind: 'interrupted', reason: 'the drain was stopped during review' }, candidate);
    const notYet = worker.sessions?.mayNotStart(task);
    if (notYet) return finish({ kind: 'over-budget', reason: notYet }, candidate);
    // A task never judges itself: one that changes the gate or the runner's config goes no further.
    const paths = await changedBetween(worker.git, worker.workspace, fork, candidate);
    const guarded = judgeCandidate(paths, ctx.gate.script);
    if (guarded.kind === 'park') return finish({ kind: 'park', reason: guarded.reason }, candidate);

    let judgement: ReviewJudgement;
    let summary: string | undefined;
    const red = await preGate(ctx, task, candidate);
    const gateTail = red ?? '';
    if (red) {
      rounds.push(roundOf(number, candidate, { pregate: red }));
      const finding = {
        severity: 'blocker',
        location: ctx.gate.script ?? '',
        message: `the gate is red: ${red}`,
      } as const;
      judgement = { kind: 'changes', unmet: [], blocking: [finding], findings: [finding] };
    } else {
      const diff = await worker.git.run(worker.workspace, ['diff', '--no-color', '--no-ext-diff', fork, candidate]);
      const change = { diff, paths };
      let verdict: SessionVerdict | undefined;
      // An unusable verdict (unreadable, missing, contradictory, unverified, hanging) gets one relaunch, then parks.
      for (let attempt = 1; attempt <= 2; attempt++) {
        verdict = await reviewOnce(
          ctx,
          task,
          trusted,
          { number, attempt, fork, candidate, change },
          transcript,
          gateTail,
        );
        rounds.push(roundOf(number, candidate, verdict));
        if (verdict.kind !== 'judged' || verdict.judgement.kind !== 'unusable') break;
      }
      if (verdict!.kind === 'systemic' || verdict!.kind === 'over-budget') return finish(verdict!, candidate);
      if (verdict!.kind === 'changed')
        return finish(
          {
            kind: 'park',
            reason: `review: the reviewer changed its checkout (${verdict!.reason}); a reviewer writes only its verdict`,
          },
          candidate,
        );
      const judged = verdict as Extract<SessionVerdict, { kind: 'judged' }>;
      judgement = judged.judgement;
      summary = judged.doc?.summary;
      if (judgement.kind === 'unusable')
        return finish(
          { kind: 'park', reason: `review: ${judgement.why} verdict twice; last: ${judgement.detail}` },
          candidate,
        );
    }
    const next = afterReview(judgement, history, ctx.review.maxRounds);
    if (next.kind === 'land')
      return finish(
        {
          kind: 'approved',
          candidate,
          trailer: reviewTrailer({
            assistant: reviewer.assistant,
            model: reviewer.model,
            round: number,
            maxRounds: ctx.review.maxRounds + 1,
            candidate,
          }),
        },
        candidate,
      );
    if (next.kind === 'park') return finish({ kind: 'park', reason: next.reason }, candidate);
    if (judgement.kind !== 'changes') throw new Error(`review: a fix round after ${judgement.kind}`);
    let fixed: Awaited<ReturnType<typeof fixRound>>;
    try {
      fixed = await fixRound(ctx, task, fork, candidate, history.fixes, judgement, summary);
    } catch (error) {
      if (!(error instanceof SideStepError)) throw error;
      fixed = { kind: 'park', reason: `review: fix round ${history.fixes + 1}: ${error.message}` };
    }
    if ('kind' in fixed) return finish(fixed, candidate);
    history = { fixes: history.fixes + 1, previous: judgement };
    candidate = fixed.candidate;
  }
}
