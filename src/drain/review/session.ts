// One reviewer session: a fresh context (never resumed) of the reviewing
// assistant, as the agent identity in the task's checkout, supervised like
// an implementing session (idle watchdog, the review's own wall clock) and
// written into the task's transcript with its role and round, so `logs`
// shows the review beside the work it judged.
import type { Clock, ProcessPort } from '../../ports.js';
import type { AgentAdapter, AgentResult, TaskId } from '../../types.js';
import { superviseAgent } from '../../agent/supervise.js';
import { taskEnv } from '../../agent/env.js';
import { reportingProcess, type AgentProcessEvent } from '../../agent/run-task.js';
import type { Transcript } from '../../agent/transcript.js';

export interface ReviewerSessionInput {
  readonly adapter: AgentAdapter;
  readonly binary: string;
  readonly model: string | undefined;
  /** The command assistant's argv (the repo's "command"), when the reviewer is one. */
  readonly command: readonly string[] | undefined;
  readonly taskId: TaskId;
  readonly round: number;
  /** The checkout of the candidate, in the agent's repository. */
  readonly workspace: string;
  readonly prompt: string;
  readonly env: Readonly<Record<string, string>>;
  /** Where the verdict is written (codex's -o, a command's file) and the schema it follows. */
  readonly files: { readonly schemaText: string; readonly schemaFile: string; readonly verdictFile: string };
  readonly idleTimeoutMs: number;
  readonly timeoutMs: number;
  /** The run's provider broker and this session's id for it (brokerSessionId), where the run has one. */
  readonly broker?: { readonly url: string; readonly session: string };
}

export interface ReviewerSessionEnd {
  readonly result: AgentResult;
  /** ms since the epoch. */
  readonly startedAt: number;
  readonly endedAt: number;
}

export async function runReviewerSession(
  deps: {
    readonly process: ProcessPort;
    readonly clock: Clock;
    readonly transcript: Transcript;
    readonly onProcess: (event: AgentProcessEvent) => void | Promise<void>;
  },
  input: ReviewerSessionInput,
): Promise<ReviewerSessionEnd> {
  const { clock, transcript } = deps;
  const command = input.adapter.buildCommand({
    binary: input.binary,
    prompt: input.prompt,
    workspace: input.workspace,
    taskId: input.taskId,
    model: input.model,
    effort: undefined,
    env: taskEnv(input.env, input.taskId, input.workspace),
    role: 'review',
    review: input.files,
    ...(input.command ? { command: input.command } : {}),
    ...(input.broker ? { broker: input.broker } : {}),
  });
  transcript.write({
    event: 'session-start',
    role: 'review',
    round: input.round,
    assistant: input.adapter.name,
    model: input.model ?? null,
    program: command.program,
    // The schema is long and the same every time: the transcript names the file instead.
    args: command.args.map((arg) => (arg === input.files.schemaText ? `<schema ${input.files.schemaFile}>` : arg)),
    cwd: command.cwd,
  });
  const startedAt = clock.now();
  const run = await superviseAgent(
    { process: reportingProcess(deps.process, deps.onProcess), clock },
    command,
    { idleTimeoutMs: input.idleTimeoutMs, wallClockMs: input.timeoutMs, killGraceMs: 5000 },
    (stream, line) => transcript.write({ event: 'output', role: 'review', stream, line }),
  );
  const result = input.adapter.parseResult(run);
  const endedAt = clock.now();
  transcript.write({
    event: 'session-end',
    role: 'review',
    round: input.round,
    exitCode: run.exitCode,
    signal: run.signal,
    endedBy: run.endedBy,
    durationMs: endedAt - startedAt,
    result,
  });
  await transcript.flush();
  return { result, startedAt, endedAt };
}
