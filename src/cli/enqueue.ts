// agent-runner enqueue --repo NAME (--task ID | --drain | --prompt TEXT) [--model M]
//   | --list [--json] | --cancel ID
// Queues a one-off job; the repo's watcher runs it at its next free slot.
// Writes only under the state dir: never into the repo.
import { printableLine } from '../printable.js';
import type { Command } from 'commander';
import type { CliContext } from './context.js';
import { EXIT, UsageError } from '../errors.js';
import { requireRoot } from './root-support.js';
import { REGISTERED_WORKSPACE_HELP, registeredTarget, resolveTarget, targetFlags, type Target } from './target.js';
import { withExamples } from './help.js';
import { describeWork, Spool, type Job, type JobWork } from '../control/jobs/spool.js';
import { isSafeTaskId } from '../board/parse.js';
import { STAGING_BRANCH } from '../staging/names.js';
import { modelIdProblem } from '../repo/model-id.js';

interface EnqueueOptions {
  repo?: string;
  workspace?: string;
  task?: string;
  drain?: boolean;
  prompt?: string;
  model?: string;
  list?: boolean;
  cancel?: string;
  json?: boolean;
}

const MAX_PROMPT_BYTES = 64 * 1024;

export function define(command: Command, context: CliContext, setExit: (code: number) => void): void {
  withExamples(targetFlags(command.argument('[repo]', 'the same as --repo NAME'), REGISTERED_WORKSPACE_HELP), [
    ['agent-runner enqueue --repo web --task TASK-3', "queue TASK-3 for web's watcher"],
    ['agent-runner enqueue --repo web --list --json', 'what is queued and running'],
  ])
    .option('--task <id>', 'run this task')
    .option('--drain', 'run a drain')
    .option('--prompt <text>', `turn this text into a new task on ${STAGING_BRANCH}, then run it`)
    .option('--model <id>', 'with --prompt: the model for that task (as its model:<id> label)')
    .option('--list', 'list queued and running jobs')
    .option('--cancel <job-id>', 'cancel a queued job')
    .option('--json', 'with --list: print JSON')
    .action(async (positional: string | undefined, options: EnqueueOptions) => {
      const target = resolveTarget('enqueue', { ...options, positional }, { workspace: true, required: true });
      setExit(await enqueue(context, target, options));
    });
}

/** Pure: the work a set of flags asks for. */
function workFromOptions(options: EnqueueOptions): JobWork {
  const chosen = [options.task !== undefined, Boolean(options.drain), options.prompt !== undefined].filter(
    Boolean,
  ).length;
  if (chosen !== 1)
    throw new UsageError('give exactly one of --task ID, --drain or --prompt TEXT (or --list, --cancel ID)');
  if (options.model !== undefined && options.prompt === undefined) {
    throw new UsageError(
      "--model goes with --prompt only (it becomes the new task's model:<id> label); for an existing task add that label to the task",
    );
  }
  const modelWrong = options.model === undefined ? undefined : modelIdProblem(options.model);
  if (modelWrong) throw new UsageError(`--model: ${modelWrong}`);
  if (options.task !== undefined) {
    if (!isSafeTaskId(options.task)) throw new UsageError(`--task "${options.task}" is not a task id (e.g. TASK-12)`);
    return { kind: 'task', taskId: options.task.toUpperCase() };
  }
  if (options.drain) return { kind: 'drain' };
  const prompt = options.prompt!.trim();
  if (!prompt) throw new UsageError('--prompt is empty');
  if (Buffer.byteLength(prompt, 'utf8') > MAX_PROMPT_BYTES)
    throw new UsageError(`--prompt is longer than ${MAX_PROMPT_BYTES} bytes; put the detail in a task instead`);
  return { kind: 'prompt', prompt };
}

function renderJobs(jobs: readonly (Job & { state: string })[]): string {
  if (!jobs.length) return 'no queued or running jobs\n';
  return `${jobs.map((job) => `${job.id}  ${job.state.padEnd(7)}  attempt ${job.attempt}  ${printableLine(describeWork(job.work))}`).join('\n')}\n`;
}

async function enqueue(context: CliContext, target: Target, options: EnqueueOptions): Promise<number> {
  const { state, repo } = await registeredTarget(context, 'enqueue', target);
  const spool = new Spool(context.ports.fs, state, repo.name);
  const now = new Date(context.ports.clock.now()).toISOString();
  if (options.list) {
    const jobs = [
      ...(await spool.list('running')).map((job) => ({ ...job, state: 'running' })),
      ...(await spool.list('queue')).map((job) => ({ ...job, state: 'queued' })),
    ];
    context.out(options.json ? `${JSON.stringify({ repo: repo.name, jobs }, null, 2)}\n` : renderJobs(jobs));
    return EXIT.ok;
  }
  requireRoot(context, 'enqueue', 'the queue lives in the root-owned state dir');
  if (options.cancel !== undefined) {
    const job = await spool.cancel(options.cancel, now);
    context.out(`${job.id}\n`);
    context.err(`enqueue: cancelled ${describeWork(job.work)} on ${repo.name}\n`);
    return EXIT.ok;
  }
  const work = workFromOptions(options);
  const job = await spool.enqueue(context.ports.ids, now, work, options.model);
  context.out(`${job.id}\n`);
  context.err(
    `enqueue: queued ${describeWork(work)} on ${repo.name}${repo.enabled ? '' : ' (the repo is disabled: its watcher runs no jobs until it is enabled)'}\n`,
  );
  return EXIT.ok;
}
