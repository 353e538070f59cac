// The scripted agent as a reviewer (AGENT_ROLE=review): it reads the review
// prompt's machine lines and criteria from stdin and its `review:` lines from
// the task file in its checkout, looks at `git diff -U0 FORK HEAD` there,
// makes the changes it was told to (the ones the runner must catch), and
// leaves its verdict where its CLI would: claude's result `structured_output`,
// codex's -o file, a command agent's $AGENT_REVIEW_VERDICT.
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { scriptedResetAt } from '../scripted-agent/claude-stream.js';
import { changedRanges, firstChangedLine, untouchedLine, type ChangedRange } from '../scripted-agent/diff-lines.js';
import { closingLines, openingLines, rateLimitedLines, type Pose } from '../scripted-agent/pose.js';
import type { ReviewEffect } from '../scripted-agent/review-instructions.js';
import { parseReviewInstructions } from '../scripted-agent/review-instructions.js';
import { answerFor, planReview, type ReviewAnswer } from '../scripted-agent/review-plan.js';
import type { ReviewRequest } from '../scripted-agent/review-prompt.js';
import type { SessionFacts } from '../scripted-agent/claude-stream.js';
import {
  AgentFailure,
  git,
  hangForever,
  readAndAddLine,
  takeCountedSession,
  writeInWorkspace,
  type FoundTask,
} from './scripted-kit.js';
import { modelTurn } from './scripted-model.js';

export interface ReviewSession {
  readonly pose: Pose;
  readonly workspace: string;
  readonly env: Record<string, string>;
  readonly prompt: string;
  readonly request: ReviewRequest;
  readonly found: FoundTask;
  readonly facts: SessionFacts;
  say(line: string): void;
  complain(line: string): void;
}

export async function runReview(session: ReviewSession): Promise<number> {
  const { pose, workspace, env, request, found } = session;
  const block = parseReviewInstructions(found.task.description);
  if (block.problems.length) throw new AgentFailure(`scripted-agent: ${found.file}: ${block.problems.join('; ')}`, 2);
  const plan = planReview(block.instructions);
  const verdictFile = pose.cli === 'command' ? env.AGENT_REVIEW_VERDICT : undefined;
  if (pose.cli === 'command' && !verdictFile)
    throw new AgentFailure(
      'scripted-agent: AGENT_REVIEW_VERDICT is not set; the runner names the verdict file there',
      2,
    );

  for (const line of openingLines(pose, session.facts, request.taskId, session.prompt)) session.say(line);
  const limited = Boolean(
    plan.rateLimited &&
    (plan.rateLimited.sessions === undefined ||
      takeCountedSession(workspace, env, `${found.task.id}.review-rate-limits`, plan.rateLimited.sessions)),
  );
  const turn = await modelTurn({
    pose,
    env,
    prompt: session.prompt,
    facts: session.facts,
    description: found.task.description,
    file: found.file,
    rateLimit: limited,
    say: session.say,
    complain: session.complain,
  });
  if (turn.kind === 'ended') return turn.exitCode;
  const facts = turn.kind === 'answered' ? turn.facts : session.facts;
  if (limited) {
    for (const line of rateLimitedLines(pose, session.facts, scriptedResetAt(Date.now()))) session.say(line);
    if (pose.cli === 'command') session.complain('scripted-agent: rate limited (usage limit reached)');
    return 1;
  }

  // Read before any effect: what it cites is the candidate it was given, whatever it then does to the checkout.
  const ranges = changedRanges(
    git(workspace, env, ['diff', '-U0', '--no-color', '--no-ext-diff', '--no-renames', request.fork, 'HEAD']),
  );
  const evidence = {
    changed: firstChangedLine(ranges),
    untouched: plan.verdict.kind === 'unverified' ? untouchedAtHead(workspace, env, ranges) : undefined,
  };
  const earlier = readAndAddLine(workspace, env, `${found.task.id}.reviews`, `${request.round} ${request.nonce}`);
  const previous = earlier.at(-1)?.split(' ');
  for (const effect of plan.effects) applyEffect(workspace, env, effect);

  const answer = answerFor(
    plan.verdict,
    request,
    evidence,
    previous ? { round: Number(previous[0]), nonce: previous[1] ?? '' } : undefined,
  );
  if (answer.kind === 'exit') return answer.code;
  if (answer.kind === 'hang') return hangForever();
  const text = verdictText(answer);
  if (verdictFile && text !== undefined) writeFileSync(verdictFile, text);
  if (pose.cli === 'codex' && pose.argv.outputLastMessage && text !== undefined)
    writeFileSync(path.resolve(workspace, pose.argv.outputLastMessage), text);
  const message = pose.cli === 'command' ? summaryOf(answer, request) : (text ?? `${request.taskId}: reviewed`);
  for (const line of closingLines(pose, facts, session.prompt, {
    message,
    turns: 2 + plan.effects.length,
    resetsAt: scriptedResetAt(Date.now()),
    ...(pose.cli === 'claude' ? structuredOf(answer) : {}),
  }))
    session.say(line);
  return 0;
}

/** What a file-writing CLI writes; undefined: nothing at all. */
function verdictText(answer: Exclude<ReviewAnswer, { kind: 'exit' | 'hang' }>): string | undefined {
  switch (answer.kind) {
    case 'verdict':
      return JSON.stringify(answer.doc);
    case 'garbage':
      return answer.text;
    case 'empty':
      return '';
    case 'none':
      return undefined;
  }
}

/**
 * claude's structured output is JSON by construction (the input of its StructuredOutput tool): garbage is a string
 * there, empty an empty object, none no structured_output at all.
 */
function structuredOf(answer: Exclude<ReviewAnswer, { kind: 'exit' | 'hang' }>): { structuredOutput?: unknown } {
  switch (answer.kind) {
    case 'verdict':
      return { structuredOutput: answer.doc };
    case 'garbage':
      return { structuredOutput: answer.text };
    case 'empty':
      return { structuredOutput: {} };
    case 'none':
      return {};
  }
}

function summaryOf(answer: Exclude<ReviewAnswer, { kind: 'exit' | 'hang' }>, request: ReviewRequest): string {
  const what = answer.kind === 'verdict' ? answer.doc.verdict : `${answer.kind} verdict`;
  return `${request.taskId} round ${request.round}: ${what}`;
}

function applyEffect(workspace: string, env: Record<string, string>, effect: ReviewEffect): void {
  switch (effect.kind) {
    case 'edit':
      writeInWorkspace(workspace, effect.path, `${effect.text}\n`);
      break;
    case 'touch-agent':
      writeInWorkspace(workspace, '.agent/x', 'written by the reviewer\n');
      break;
    case 'commit':
      git(workspace, env, ['add', '-A']);
      git(workspace, env, ['commit', '-q', '--allow-empty', '-m', 'review notes']);
      break;
    case 'move-branch': {
      // Every branch at the candidate goes back one commit, and the checkout with them, attached or detached.
      const head = git(workspace, env, ['rev-parse', 'HEAD']).trim();
      const parent = git(workspace, env, ['rev-parse', 'HEAD~1']).trim();
      const branches = git(workspace, env, ['for-each-ref', '--points-at', head, '--format=%(refname)', 'refs/heads'])
        .split('\n')
        .filter(Boolean);
      for (const ref of branches) git(workspace, env, ['update-ref', ref, parent, head]);
      git(workspace, env, ['reset', '-q', '--hard', parent]);
      break;
    }
  }
}

/** A line of HEAD the change does not touch (for `unverified`). */
function untouchedAtHead(
  workspace: string,
  env: Record<string, string>,
  ranges: readonly ChangedRange[],
): string | undefined {
  const paths = git(workspace, env, ['ls-tree', '-r', '-z', '--name-only', 'HEAD']).split('\0').filter(Boolean);
  return untouchedLine(paths, ranges, (file) => {
    try {
      const blob = execFileSync('git', ['cat-file', 'blob', `HEAD:${file}`], { cwd: workspace, env, encoding: 'utf8' });
      return blob === '' ? 0 : blob.split('\n').length - (blob.endsWith('\n') ? 1 : 0);
    } catch {
      return 0;
    }
  });
}
