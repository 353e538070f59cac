// Any program as an agent: the repo's argv, the prompt on stdin, and the task
// in the environment. Its stdout is free-form, so only the exit says how the
// session went; whether the task is done is read from the board afterwards.
// Silence on stdout is allowed here, unlike for claude and codex.
// A reviewer finds the verdict file the runner created for it in
// AGENT_REVIEW_VERDICT and the verdict's schema in AGENT_REVIEW_SCHEMA.
import type { AgentAdapter, AgentInvocation, AgentOutput, AgentResult, Command } from '../../types.js';
import { describeExit, lastStderrLine } from './jsonl.js';
import { reviewFilesOf, roleEnvironment } from './role.js';
import { BROKER_SESSION_VARIABLE, sessionEnvironment, withBrokerWord } from './broker.js';
import { BROKER_URL_VARIABLE } from '../broker-env.js';

function buildCommand(invocation: AgentInvocation): Command {
  const argv = invocation.command ?? [];
  // The binary is the argv's program resolved against the agent's PATH.
  const program = invocation.binary || argv[0];
  if (!program)
    throw new Error(`command agent for ${invocation.taskId}: no program (set "command" in .agent/config.json)`);
  const review = reviewFilesOf(invocation);
  return {
    program,
    args: argv.slice(1),
    env: sessionEnvironment(
      invocation,
      {
        AGENT_TASK_ID: invocation.taskId,
        AGENT_WORKSPACE: invocation.workspace,
        ...roleEnvironment(invocation),
        ...(review ? { AGENT_REVIEW_VERDICT: review.verdictFile, AGENT_REVIEW_SCHEMA: review.schemaFile } : {}),
      },
      (broker) => ({ [BROKER_URL_VARIABLE]: broker.url, [BROKER_SESSION_VARIABLE]: broker.session }),
    ),
    cwd: invocation.workspace,
    stdin: invocation.prompt,
    modelSessionOf: invocation.taskId,
  };
}

/** Lines of stdout searched for the broker's refusal: a command agent prints it wherever it likes, last. */
const TAIL_LINES = 50;

function parseResult(output: AgentOutput): AgentResult {
  if (output.endedBy !== 'exit')
    return { ok: false, failure: output.endedBy, detail: `ended by the ${output.endedBy} watchdog` };
  if (output.exitCode === 0 && !output.signal) return { ok: true };
  const stderr = lastStderrLine(output.stderrTail);
  return {
    ok: false,
    failure: 'crashed',
    detail: `${describeExit(output.exitCode, output.signal)}${stderr ? `: ${stderr}` : ''}`,
  };
}

export const commandAdapter: AgentAdapter = {
  name: 'command',
  // Not looked up: the program is the first element of the repo's "command".
  defaultBinary: 'sh',
  buildCommand,
  // Free-form output: the broker's refusal is looked for in what it printed last, on either stream.
  parseResult: (output) =>
    withBrokerWord(parseResult(output), output, [output.stderrTail, output.stdoutLines.slice(-TAIL_LINES).join('\n')]),
};
