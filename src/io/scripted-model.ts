// The scripted agent's model call: one HTTP POST per session to the run's
// broker on 127.0.0.1 (node:http, no proxy, no redirects), its answer read
// whole up to a bound and judged by src/scripted-agent/model-call.ts. A
// session without broker variables calls nothing and invents its figures as
// before. A connection that fails or an answer that never ends is an answer
// too (status 0 with the reason), which ends the session as a connection
// error ends the CLI.
import * as http from 'node:http';
import type { SessionFacts } from '../scripted-agent/claude-stream.js';
import { scriptedResetAt } from '../scripted-agent/claude-stream.js';
import { parseUsageInstructions } from '../scripted-agent/instructions.js';
import {
  modelRequest,
  modelTargetOf,
  readModelAnswer,
  reportedUsage,
  type ModelAnswer,
  type ModelTarget,
} from '../scripted-agent/model-call.js';
import type { Pose } from '../scripted-agent/pose.js';
import { modelErrorLines } from '../scripted-agent/model-error.js';
import { AgentFailure } from './scripted-kit.js';

/** An answer larger than this is cut: a turn's stream is kilobytes. */
const MAX_ANSWER_BYTES = 8 * 1024 * 1024;
const ANSWER_TIMEOUT_MS = 60_000;

export function callModel(target: ModelTarget, prompt: string, ask?: 'rate-limit'): Promise<ModelAnswer> {
  const request = modelRequest(target, prompt, ask);
  const failed = (message: string): ModelAnswer => ({ kind: 'failed', status: 0, message, body: '' });
  return new Promise((resolve) => {
    let url: URL;
    try {
      url = new URL(request.path, target.url);
    } catch {
      return resolve(failed(`Connection error: the broker URL ${JSON.stringify(target.url)} is not a URL`));
    }
    if (url.protocol !== 'http:')
      return resolve(failed(`Connection error: the broker URL ${target.url} is not http://`));
    const outgoing = http.request(
      url,
      {
        method: 'POST',
        headers: { ...request.headers, 'content-length': String(Buffer.byteLength(request.body)) },
        timeout: ANSWER_TIMEOUT_MS,
        agent: false,
      },
      (response) => {
        const chunks: Buffer[] = [];
        let size = 0;
        response.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > MAX_ANSWER_BYTES) response.destroy(new Error('the answer is larger than 8 MiB'));
          else chunks.push(chunk);
        });
        response.on('error', (error) => resolve(failed(`Connection error: ${error.message}`)));
        response.on('end', () =>
          resolve(readModelAnswer(target.api, response.statusCode ?? 0, Buffer.concat(chunks).toString('utf8'))),
        );
      },
    );
    outgoing.on('timeout', () => outgoing.destroy(new Error(`no answer within ${ANSWER_TIMEOUT_MS / 1000} s`)));
    outgoing.on('error', (error) => resolve(failed(`Connection error: ${error.message}`)));
    outgoing.end(request.body);
  });
}

export interface ModelTurnInput {
  readonly pose: Pose;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly prompt: string;
  readonly facts: SessionFacts;
  /** The task's description, for its `usage:` lines. */
  readonly description: string;
  /** The task file, to name in a problem with its `usage:` lines. */
  readonly file: string;
  /** A session the task's instructions rate-limit: it asks the fake provider for its 429. */
  readonly rateLimit?: boolean;
  say(line: string): void;
  complain(line: string): void;
}

export type ModelTurn =
  /** No broker in the environment: the session goes on with its invented figures. */
  | { readonly kind: 'no-broker' }
  /** The facts now carry the model, and the usage the session will report. */
  | { readonly kind: 'answered'; readonly facts: SessionFacts }
  /** The answer was an error: the session printed its ending and exits with this code. */
  | { readonly kind: 'ended'; readonly exitCode: number };

/** The session's one model call, after its opening lines: made through the broker when the environment names one. */
export async function modelTurn(input: ModelTurnInput): Promise<ModelTurn> {
  const target = modelTargetOf(input.pose, input.env);
  if (!target) return { kind: 'no-broker' };
  const block = parseUsageInstructions(input.description);
  if (block.problems.length) throw new AgentFailure(`scripted-agent: ${input.file}: ${block.problems.join('; ')}`, 2);
  const answer = await callModel(target, input.prompt, input.rateLimit ? 'rate-limit' : undefined);
  if (answer.kind === 'answered') {
    const underReport = block.instructions.some((instruction) => instruction.kind === 'report-zero');
    const usage = reportedUsage(answer.model, answer.usage, underReport);
    return { kind: 'answered', facts: { ...input.facts, model: answer.model, usage } };
  }
  const ending = modelErrorLines(
    input.pose,
    input.facts,
    answer,
    `${target.url}${modelRequest(target, '').path.split('?')[0]}`,
    scriptedResetAt(Date.now()),
  );
  for (const line of ending.stdout) input.say(line);
  for (const line of ending.stderr) input.complain(line);
  return { kind: 'ended', exitCode: ending.exitCode };
}
