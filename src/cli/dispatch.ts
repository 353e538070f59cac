// agent-runner dispatch --repo NAME (or REPO): as root, take the repo's run lock, drop to the
// repo's user and run one orchestrate there. Exit codes are orchestrate's:
// 0 drained, 1 failed, 2 usage/config, 75 busy (the lock is held).
import type { Command } from 'commander';
import type { CliContext } from './context.js';
import { UsageError } from '../errors.js';
import { acquireLock } from '../lock.js';
import { runLockPath } from '../paths.js';
import { dispatchExitCode, dispatchRun, StopRequest } from '../control/dispatch/dispatch.js';
import { installPaths, progressLine, requireRoot } from './root-support.js';
import { REGISTERED_WORKSPACE_HELP, registeredTarget, resolveTarget, targetFlags, type Target } from './target.js';
import { withExamples } from './help.js';
import { renderRunHuman } from '../control/runs/render.js';
import { describeSweep } from '../control/dispatch/user-sweep.js';
import { parsePositiveInt } from './options.js';
import { MAX_PARALLEL_CEILING } from '../repo/config.js';
import { STAGING_BRANCH } from '../staging/names.js';
import { isolationWanted, requireIsolation } from './isolation-check.js';

const REGISTERED = { workspace: true, required: true } as const;

interface DispatchOptions {
  repo?: string;
  workspace?: string;
  task?: string;
  drain?: boolean;
  push: boolean;
  force?: boolean;
  maxParallel?: string;
  wait?: boolean;
  isolation: boolean;
  json?: boolean;
}

export function define(command: Command, context: CliContext, setExit: (code: number) => void): void {
  withExamples(targetFlags(command.argument('[repo]', 'the same as --repo NAME'), REGISTERED_WORKSPACE_HELP), [
    ['agent-runner dispatch --repo web', 'drain every ready task of web now'],
    ['agent-runner dispatch --repo web --task TASK-3 --wait', 'one task, waiting for the repo lock'],
  ])
    .option('--drain', 'run every ready task (the default)')
    .option('--task <id>', 'run this one task')
    .option('--no-push', `do not publish ${STAGING_BRANCH} to origin`)
    .option('--force', 'passed to orchestrate')
    .option('--max-parallel <n>', "at most this many agents (never more than the registry's max_parallel)")
    .option('--wait', 'wait for the repo lock instead of exiting 75 when it is held')
    .option(
      '--no-isolation',
      'run even when the egress lock is not loaded or nothing listens on the repo proxy port (on purpose: a trial host; also AGENT_RUNNER_ISOLATION=off)',
    )
    .option('--json', 'print the run record as JSON')
    .action(async (positional: string | undefined, options: DispatchOptions) => {
      setExit(await dispatch(context, resolveTarget('dispatch', { ...options, positional }, REGISTERED), options));
    });
}

async function dispatch(context: CliContext, target: Target, options: DispatchOptions): Promise<number> {
  requireRoot(context, 'dispatch', "it drops to the repo's user");
  if (options.task && options.drain) throw new UsageError('give --task ID or --drain, not both');
  const { state, repo } = await registeredTarget(context, 'dispatch', target);
  const args = options.task ? ['--task', options.task] : ['--drain'];
  if (!options.push) args.push('--no-push');
  if (options.force) args.push('--force');
  if (options.maxParallel !== undefined) {
    const asked = parsePositiveInt('--max-parallel', options.maxParallel, MAX_PARALLEL_CEILING);
    args.push('--max-parallel', String(Math.min(asked, repo.maxParallel)));
  }
  const { process, clock, ids, locks, control } = context.ports;
  if (isolationWanted(options.isolation, context.env)) await requireIsolation(context.ports, repo);
  const lock = await acquireLock({ locks, process, clock }, runLockPath(state, repo.name), {
    command: `dispatch ${repo.name}`,
    wait: Boolean(options.wait),
    waitFlag: '--wait',
    what: `repo "${repo.name}"`,
    onWaiting: (holder) => context.err(`dispatch: repo "${repo.name}" is ${holder}; waiting\n`),
    onCompromised: (error) => context.err(`dispatch: the lock of repo "${repo.name}" was lost: ${error.message}\n`),
  });
  const stop = new StopRequest();
  const unsubscribe = [
    control.onSignal('SIGTERM', () => stop.request()),
    control.onSignal('SIGINT', () => stop.request()),
  ];
  try {
    const progress = context.stdoutIsTTY ? 'human' : 'json';
    const record = await dispatchRun(
      context.ports,
      {
        repo,
        state,
        install: await installPaths(context),
        orchestrateArgs: args,
        trigger: 'manual',
        progress,
        runId: ids.next(),
      },
      {
        onStderrLine: (line) =>
          context.err(
            progress === 'human'
              ? `${line}\n`
              : `${progressLine(repo.name, line, new Date(clock.now()).toISOString())}\n`,
          ),
        onSweep: (sweep) => {
          if (!sweep.found) return;
          const event = {
            event: 'leftovers-ended',
            time: new Date(clock.now()).toISOString(),
            repo: repo.name,
            found: sweep.found,
            killed: sweep.killed,
            survivors: sweep.survivors,
            detail: describeSweep(sweep),
          };
          context.err(progress === 'human' ? `dispatch: ${event.detail}\n` : `${JSON.stringify(event)}\n`);
        },
      },
      stop,
    );
    context.out(options.json ? `${JSON.stringify(record, null, 2)}\n` : renderRunHuman(record));
    return dispatchExitCode(record);
  } finally {
    for (const off of unsubscribe) off();
    await lock.release();
  }
}
