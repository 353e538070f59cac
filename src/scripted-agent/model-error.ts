// How a session ends when its model call through the broker is answered with
// an error, as each CLI ends it: claude's and codex's lines were captured
// from the real binaries against the broker (claude 2.1.197: an assistant
// message and an is_error result carrying the status; codex 0.171: an error
// event and turn.failed, exit 1). Pure.
import { apiErrorLines, type SessionFacts } from './claude-stream.js';
import { codexErrorMessage, turnFailedLines } from './codex-stream.js';
import type { ModelAnswer } from './model-call.js';
import { rateLimitedLines, type Pose } from './pose.js';

export type ModelError = Exclude<ModelAnswer, { kind: 'answered' }>;

export interface ModelErrorEnding {
  readonly stdout: readonly string[];
  readonly stderr: readonly string[];
  readonly exitCode: number;
}

/**
 * A session whose model call was answered with an error, ended as that CLI ends it (claude's and codex's lines were
 * captured against the broker): a 429 as the account's rate limit, a 401 as a login failure, the over-budget 400 and
 * any other error as the API error it is. `url` is where the call went. A command agent says it on stderr.
 */
export function modelErrorLines(
  pose: Pose,
  facts: SessionFacts,
  answer: ModelError,
  url: string,
  resetsAt: number,
): ModelErrorEnding {
  const ending = (stdout: readonly string[], stderr: readonly string[] = []): ModelErrorEnding => ({
    stdout,
    stderr,
    exitCode: 1,
  });
  if (answer.kind === 'rate-limited')
    return ending(
      rateLimitedLines(pose, facts, resetsAt),
      pose.cli === 'command' ? ['scripted-agent: rate limited (usage limit reached)'] : [],
    );
  switch (pose.cli) {
    case 'claude': {
      if (answer.status === 0) return ending(apiErrorLines(facts, `API Error: ${answer.message}`, null, 'unknown'));
      const text = `API Error: ${answer.status} ${answer.message}`;
      return answer.kind === 'unauthorized'
        ? ending(apiErrorLines(facts, `Failed to authenticate. ${text}`, answer.status, 'authentication_failed'))
        : ending(apiErrorLines(facts, text, answer.status, 'unknown'));
    }
    case 'codex':
      return ending(
        turnFailedLines(
          answer.status === 0 ? answer.message : codexErrorMessage(answer.status, answer.message, answer.body, url),
        ),
      );
    case 'command':
      return ending(
        [],
        [`scripted-agent: the model call failed: ${answer.status === 0 ? '' : `${answer.status} `}${answer.message}`],
      );
  }
}
