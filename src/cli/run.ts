// agent-runner run: one agent session (or --iterations N) on one task in the
// current tree. No fetch, no worktree, no integration: the operator's own
// checkout, for trying an agent or a task by hand.
import type { Command } from 'commander';
import type { CliContext } from './context.js';
import { UsageError } from '../errors.js';
import { checkWorkspace, ensureStateDir } from '../repo/workspace.js';
import { applyOverrides, ASSISTANTS } from '../repo/config.js';
import { readRepoConfig } from '../repo/read-config.js';
import { effortProblem } from '../repo/efforts.js';
import { labelCheckFor } from '../repo/escalation.js';
import { modelIdProblem } from '../repo/model-id.js';
import { readBoard, findTask } from '../board/read.js';
import { sameTaskId } from '../board/task-id.js';
import { assessReadiness, describeReason } from '../board/readiness.js';
import { adapterFor } from '../agent/adapters/index.js';
import { resolveAgentBinary } from '../agent/binary.js';
import { agentBaseEnv } from '../agent/env.js';
import { knownSecrets, redactDeep, redactSecrets } from '../agent/secrets.js';
import { printableLine } from '../printable.js';
import { runTask } from '../agent/run-task.js';
import type { RunOutcome, AssistantName } from '../types.js';
import { Git } from '../git/git.js';
import { stateDir, transcriptFile, workspaceStateDir } from '../paths.js';
import { commitLeftovers } from '../handoff/leftovers.js';
import { parsePositiveInt } from './options.js';

interface RunOptions {
  workspace?: string;
  task?: string;
  assistant?: string;
  model?: string;
  effort?: string;
  iterations: string;
  json?: boolean;
}

export function define(command: Command, context: CliContext, setExit: (code: number) => void): void {
  command
    .option('--workspace <dir>', 'the git checkout to work in (default: the current directory)')
    .option('--task <id>', 'the task to work on (default: the first ready task)')
    .option('--assistant <name>', `claude, codex or command (default: .agent/config.json)`)
    .option('--model <id>', 'model for this run (a task label model:<id> still wins)')
    .option('--effort <level>', 'reasoning effort (a task label effort:<level> still wins)')
    .option('--iterations <n>', 'sessions at most, stopping early when the task is Done or Blocked', '1')
    .option('--json', 'print the report as JSON')
    .action(async (options: RunOptions) => {
      setExit(await run(context, options));
    });
}

/** One line for an outcome: its kind and its reason, the kind once even when the reason starts with it. */
export function describeOutcome(outcome: RunOutcome): string {
  if (!('reason' in outcome)) return outcome.kind;
  const reason = printableLine(outcome.reason);
  return reason.startsWith(`${outcome.kind}:`) ? reason : `${outcome.kind}: ${reason}`;
}

async function run(context: CliContext, options: RunOptions): Promise<number> {
  const { fs, process, ids, clock } = context.ports;
  const workspace = await checkWorkspace(fs, context.cwd, options.workspace);
  if (options.assistant && !ASSISTANTS.includes(options.assistant as AssistantName)) {
    throw new UsageError(`unknown assistant "${options.assistant}"; use one of ${ASSISTANTS.join(', ')}`);
  }
  const iterations = parsePositiveInt('--iterations', options.iterations, 100);
  const { config: repoConfig } = await readRepoConfig(fs, workspace);
  const config = applyOverrides(repoConfig, {
    ...(options.assistant ? { assistant: options.assistant as AssistantName } : {}),
    ...(options.model ? { model: options.model } : {}),
    ...(options.effort ? { effort: options.effort } : {}),
  });
  const modelWrong = options.model === undefined ? undefined : modelIdProblem(options.model);
  if (modelWrong) throw new UsageError(`--model: ${modelWrong}`);
  const effortWrong = config.effort === undefined ? undefined : effortProblem(config.assistant, config.effort);
  if (effortWrong)
    throw new UsageError(
      `${options.effort ? '--effort' : `"effort" in .agent/config.json with --assistant ${config.assistant}`}: ${effortWrong}`,
    );
  const board = await readBoard(fs, workspace);
  const labels = labelCheckFor(config.assistant);
  let task;
  if (options.task) {
    task = findTask(board, options.task);
    if (!task) {
      const broken = board.unreadable.find((entry) => entry.id !== undefined && sameTaskId(entry.id, options.task!));
      throw new UsageError(
        broken
          ? `task ${options.task} is unreadable: ${broken.file}: ${broken.reason}`
          : `no task ${options.task} on the board of ${workspace}; \`agent-runner next --workspace ${workspace}\` lists them`,
      );
    }
    // Named by hand, it runs even when not ready, but never without a word about why it is not; never on a label its
    // assistant cannot take.
    const notReady = assessReadiness(board, labels).notReady.find((entry) => entry.id === task!.id);
    const badLabels = notReady?.reasons.filter((reason) => reason.kind === 'label') ?? [];
    if (badLabels.length)
      throw new UsageError(`task ${task.id} in ${task.file}: ${badLabels.map(describeReason).join('; ')}`);
    if (notReady)
      context.err(
        `warning: ${task.id} is not ready (${notReady.reasons.map(describeReason).join('; ')}); running it because --task names it\n`,
      );
  } else {
    task = assessReadiness(board, labels).ready[0];
    if (!task)
      throw new UsageError(`no ready task in ${workspace}; \`agent-runner next --workspace ${workspace}\` says why`);
  }
  const env = agentBaseEnv(context.env);
  const adapter = adapterFor(config.assistant);
  const binary = await resolveAgentBinary(process, adapter, config, workspace, env.PATH ?? '');
  const state = stateDir(context.env);
  await ensureStateDir(fs, workspaceStateDir(state, workspace));

  const runId = ids.next();
  const git = new Git(process, { env, startedBy: await context.ports.control.self() });
  const secrets = await knownSecrets(fs, env);
  context.err(
    `run ${runId}: ${task.id} "${printableLine(redactSecrets(task.title, secrets))}" with ${config.assistant}${config.model ? ` (${config.model})` : ''}\n`,
  );
  const report = await runTask(
    { ports: { process, fs, clock }, git },
    {
      workspace,
      task,
      config,
      adapter,
      binary,
      env,
      iterations,
      transcriptFile: transcriptFile(state, workspace, runId, task.id),
      runId,
      secrets,
    },
  );
  const leftover =
    report.leftovers && (report.outcome.kind === 'done' || report.outcome.kind === 'blocked')
      ? await commitLeftovers(git, workspace, task.id)
      : undefined;

  const shown = redactDeep(report, secrets);
  if (options.json) {
    context.out(`${JSON.stringify({ runId, ...shown, leftoverCommit: leftover ?? null }, null, 2)}\n`);
  } else {
    context.out(`${task.id} ${describeOutcome(shown.outcome)}\ntranscript ${report.transcript}\n`);
    if (leftover) context.out(`committed what the agent left uncommitted: ${leftover}\n`);
  }
  return report.outcome.kind === 'done' ? 0 : 1;
}
