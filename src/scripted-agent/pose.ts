// Which CLI the scripted agent plays, read from its argv, and the lines a
// session opens and closes with as that CLI prints them: claude's
// stream-json, codex's JSONL events, or a command agent's one line of
// summary. Pure.
import {
  assistantEvent,
  failureLines,
  initEvent,
  looksLikeClaudeArgv,
  rateLimitEvent,
  readClaudeArgv,
  sessionTools,
  successResult,
  type ClaudeArgv,
  type SessionFacts,
} from './claude-stream.js';
import {
  agentMessage,
  looksLikeCodexArgv,
  readCodexArgv,
  threadStarted,
  turnCompleted,
  turnStarted,
  usageLimitLines,
  type CodexArgv,
} from './codex-stream.js';

export type Pose =
  | { readonly cli: 'command' }
  | { readonly cli: 'claude'; readonly argv: ClaudeArgv }
  | { readonly cli: 'codex'; readonly argv: CodexArgv };

/** The pose, or the argument error the CLI itself would print (claude exits 1, codex 2). */
export function readPose(argv: readonly string[]): Pose | { readonly error: string; readonly exitCode: number } {
  if (looksLikeClaudeArgv(argv)) {
    const claude = readClaudeArgv(argv);
    return claude.error ? { error: claude.error, exitCode: 1 } : { cli: 'claude', argv: claude };
  }
  if (looksLikeCodexArgv(argv)) {
    const codex = readCodexArgv(argv);
    return codex.error ? { error: codex.error, exitCode: 2 } : { cli: 'codex', argv: codex };
  }
  return { cli: 'command' };
}

export function sessionFacts(pose: Pose, sessionId: string, cwd: string): SessionFacts {
  const model = pose.cli === 'command' ? undefined : pose.argv.model;
  return {
    sessionId,
    cwd,
    model: model ?? 'scripted',
    permissionMode: pose.cli === 'claude' ? pose.argv.permissionMode : 'default',
    ...(pose.cli === 'claude' ? { tools: sessionTools(pose.argv) } : {}),
  };
}

export function openingLines(pose: Pose, facts: SessionFacts, taskId: string, prompt: string): string[] {
  if (pose.cli === 'claude') return [initEvent(facts)];
  if (pose.cli === 'codex') return [threadStarted(taskId, prompt), turnStarted()];
  return [];
}

export interface Closing {
  /** The agent's last message: claude's result text, codex's last agent_message (what -o gets). */
  readonly message: string;
  readonly turns: number;
  /** claude's total_cost_usd; absent: the one computed from the prompt. */
  readonly costUsd?: number;
  /** claude's structured_output, when the session had --json-schema. */
  readonly structuredOutput?: unknown;
  /** claude: the stream also carries a rejected rate_limit_event. */
  readonly rateLimitRejected?: boolean;
  /** For the rate_limit_event's resetsAt (ms since the epoch). */
  readonly resetsAt: number;
}

/** A session that ended well, after its work. */
export function closingLines(pose: Pose, facts: SessionFacts, prompt: string, closing: Closing): string[] {
  switch (pose.cli) {
    case 'claude':
      return [
        assistantEvent(facts, closing.message),
        rateLimitEvent(facts, closing.rateLimitRejected ? 'rejected' : 'allowed', closing.resetsAt),
        successResult(facts, prompt, closing.message, closing.turns, closing.costUsd, closing.structuredOutput),
      ];
    case 'codex':
      return [agentMessage(0, closing.message), turnCompleted(prompt, facts.usage)];
    case 'command':
      return [closing.message];
  }
}

/** A session the account's rate limit stopped, after the opening lines; a command agent says so on stderr. */
export function rateLimitedLines(pose: Pose, facts: SessionFacts, resetsAt: number): string[] {
  switch (pose.cli) {
    case 'claude':
      return [rateLimitEvent(facts, 'rejected', resetsAt), ...failureLines(facts, 'rate-limited')];
    case 'codex':
      return usageLimitLines();
    case 'command':
      return [];
  }
}
