// Commands are registered here, one line each, and imported lazily so that
// start-up only loads the one that runs.
import { Command, CommanderError } from 'commander';
import type { CliContext } from './context.js';
import { escapeForTerminal } from '../printable.js';
import { EXIT, ExitError } from '../errors.js';
import { STAGING_BRANCH } from '../staging/names.js';

export interface CommandModule {
  /** Adds options and the action to the command. The action resolves to an exit code. */
  define(command: Command, context: CliContext, setExit: (code: number) => void): void;
}

const COMMANDS: readonly { name: string; summary: string; load: () => Promise<CommandModule> }[] = [
  { name: 'run', summary: 'one agent session on one task in the current tree', load: () => import('./run.js') },
  {
    name: 'next',
    summary: 'the ready tasks in order, and why the others are not ready',
    load: () => import('./next.js'),
  },
  {
    name: 'orchestrate',
    summary: `drain the board into parallel worktrees and integrate into ${STAGING_BRANCH}`,
    load: () => import('./orchestrate.js'),
  },
  { name: 'status', summary: 'staging branch, landed, parked and blocked tasks', load: () => import('./status.js') },
  {
    name: 'promote',
    summary: `fast-forward the base branch to ${STAGING_BRANCH} and push it`,
    load: () => import('./promote.js'),
  },
  { name: 'discard', summary: `reset ${STAGING_BRANCH} to the base branch`, load: () => import('./discard.js') },
  {
    name: 'gc',
    summary: 'remove parked worktrees and branches of tasks no longer parked',
    load: () => import('./gc.js'),
  },
  {
    name: 'doctor',
    summary: 'check the isolation of one repo or all of them, for real',
    load: () => import('./doctor.js'),
  },
  { name: 'fleet', summary: 'every registered repo at a glance', load: () => import('./fleet.js') },
  {
    name: 'ledger',
    summary: 'what agent sessions cost: tokens and USD per task, repo, day, model or run',
    load: () => import('./ledger.js'),
  },
  { name: 'tui', summary: 'the fleet dashboard', load: () => import('./tui.js') },
  { name: 'provision', summary: 'set up the host or one repo (idempotent)', load: () => import('./provision.js') },
  {
    name: 'demo',
    summary: 'the whole loop on an embedded example, no root or network',
    load: () => import('./demo.js'),
  },
  {
    name: 'broker-serve',
    summary: 'internal: the provider broker of one run, started by dispatch',
    load: () => import('./broker-serve.js'),
  },
  {
    name: 'dispatch',
    summary: 'as root: lock a repo, drop to its user, run orchestrate',
    load: () => import('./dispatch.js'),
  },
  { name: 'enqueue', summary: 'as root: queue a one-off job for a repo', load: () => import('./enqueue.js') },
  { name: 'watch', summary: 'as root: the per-repo watch loop', load: () => import('./watch.js') },
  {
    name: 'webhook',
    summary: "as root: receive GitHub's push webhook on 127.0.0.1 and wake the repo's watcher",
    load: () => import('./webhook.js'),
  },
  { name: 'logs', summary: "tail or follow a task's transcript", load: () => import('./logs.js') },
  { name: 'runs', summary: 'the run history: dispatched, watched and manual drains', load: () => import('./runs.js') },
  { name: 'pause', summary: "as root: pause a repo's watcher (nothing new starts)", load: () => import('./pause.js') },
  { name: 'resume', summary: "as root: resume a paused repo's watcher", load: () => import('./resume.js') },
  {
    name: 'notify',
    summary: "as root: test a repo's webhooks, or list their pending and failed deliveries",
    load: () => import('./notify.js'),
  },
  {
    name: 'pod-worker',
    summary: "internal: a Kubernetes task Job's worker, run in its clone",
    load: () => import('./pod-worker.js'),
  },
  {
    name: 'results',
    summary: "as a repo's runner: serve the results endpoint task pods push to",
    load: () => import('./results.js'),
  },
  {
    name: 'unpark',
    summary: `take the parked label off a task on ${STAGING_BRANCH}`,
    load: () => import('./unpark.js'),
  },
];

export async function runCli(argv: readonly string[], given: CliContext): Promise<number> {
  // Output carries agent text (titles, reasons, errors): nothing reaches the terminal as a control sequence.
  const context: CliContext = {
    ...given,
    out: (text) => given.out(escapeForTerminal(text)),
    err: (text) => given.err(escapeForTerminal(text)),
  };
  let exitCode: number = EXIT.ok;
  if (argv[0] === '--version' || argv[0] === '-V') {
    const { installVersion } = await import('./version.js');
    context.out(`${await installVersion(context)}\n`);
    return EXIT.ok;
  }
  if (argv[0] === 'help' && argv[1] === 'exit-codes') {
    const { exitCodeTable } = await import('./help.js');
    context.out(exitCodeTable());
    return EXIT.ok;
  }
  const program = new Command('agent-runner')
    .description('Run headless coding agents unattended against git repositories.')
    .exitOverride()
    .configureOutput({ writeOut: (text) => context.out(text), writeErr: (text) => context.err(text) })
    .showHelpAfterError(false)
    .option('-V, --version', 'print the version')
    .addHelpText('after', '\nExit codes: agent-runner help exit-codes. Each command: agent-runner help COMMAND.\n');
  const invoked = argv[0];
  for (const entry of COMMANDS) {
    const command = program.command(entry.name).description(entry.summary);
    if (entry.name === invoked) {
      const module = await entry.load();
      module.define(command, context, (code) => {
        exitCode = code;
      });
    }
  }
  try {
    await program.parseAsync([...argv], { from: 'user' });
  } catch (error) {
    if (error instanceof CommanderError) {
      if (
        error.code === 'commander.helpDisplayed' ||
        error.code === 'commander.help' ||
        error.code === 'commander.version'
      )
        return EXIT.ok;
      return EXIT.usage;
    }
    if (error instanceof ExitError) {
      context.err(`agent-runner: ${error.message}\n`);
      return error.exitCode;
    }
    context.err(
      `agent-runner: internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    return EXIT.failed;
  }
  return exitCode;
}
