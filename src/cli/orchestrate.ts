// agent-runner orchestrate: drain the board (or one task) into parallel
// worktrees and integrate into auto/work. Progress on stderr; the summary on
// stdout (--json: one object).
import * as path from 'node:path';
import type { Command } from 'commander';
import type { CliContext } from './context.js';
import { EXIT, UsageError } from '../errors.js';
import { checkWorkspace, ensureStateDir } from '../repo/workspace.js';
import { applyOverrides, MAX_PARALLEL_CEILING } from '../repo/config.js';
import { readRepoConfig } from '../repo/read-config.js';
import { adapterFor } from '../agent/adapters/index.js';
import { resolveAgentBinary } from '../agent/binary.js';
import { agentBaseEnv } from '../agent/env.js';
import { knownSecrets } from '../agent/secrets.js';
import { orchestrate } from '../drain/orchestrate.js';
import { Git, type GitIdentity } from '../git/git.js';
import { configuredIdentity } from '../git/identity.js';
import { stateDir, workspaceStateDir } from '../paths.js';
import { parseBrokerUrl, parsePositiveInt } from './options.js';
import { progressPrinter, renderSummary } from './drain-output.js';
import { isSafeTaskId } from '../board/parse.js';
import { STAGING_BRANCH } from '../staging/names.js';
import { parseSpendPolicy } from '../spend/policy.js';
import { handoffDirs, type IdentityLayout } from '../identities.js';
import { DEFAULT_BUNDLE_MAX_BYTES } from '../handoff/heads.js';
import { localLauncher, remoteLauncher, type Launcher } from '../launch/index.js';
import type { LineChannel } from '../ports.js';
import { runnerKubeAttempts } from '../../backends/kubernetes/drain/index.js';
import { readKubernetesRun } from '../control/dispatch/kubernetes-arg.js';
import type { KubeConnector } from '../../backends/kubernetes/port.js';

interface OrchestrateOptions {
  workspace?: string;
  drain?: boolean;
  task?: string;
  maxParallel?: string;
  push: boolean;
  force?: boolean;
  json?: boolean;
  runId?: string;
  progress: string;
  graceSec: string;
  passEnv?: string;
  spend?: string;
  authorName?: string;
  authorEmail?: string;
  agentHome?: string;
  gateHome?: string;
  handoff?: string;
  agentUid?: string;
  bundleMaxMb?: string;
  launcherFd?: string;
  review?: string;
  brokerUrl?: string;
  kubernetes?: string;
}

export function define(command: Command, context: CliContext, setExit: (code: number) => void): void {
  command
    .option('--workspace <dir>', 'the git checkout (a clone of the repo) to drain (default: the current directory)')
    .option('--drain', 'work until nothing is ready and nothing is running (the default)')
    .option('--task <id>', 'run only this task')
    .option('--max-parallel <n>', 'agents at once (never above the config or registry cap)')
    .option('--no-push', `do not publish ${STAGING_BRANCH} to origin`)
    .option('--force', 'workBranchMode reset: throw away landed, unpromoted work')
    .option('--json', 'print the summary as one JSON object')
    .option('--run-id <id>', 'the run id to record (dispatch passes its own)')
    .option('--progress <format>', 'progress on stderr: human or json', 'human')
    .option(
      '--author-name <name>',
      "author of the runner's own commits (landings, park and block notes); default: the checkout's user.name",
    )
    .option('--author-email <email>', "that author's email; default: the checkout's user.email")
    .option('--pass-env <names>', 'comma-separated variables to pass to agents beyond the built-in list')
    .option('--spend <json>', 'budgets, rate-limit wait bounds and what the ledger says was spent (dispatch passes it)')
    .option('--launcher-fd <n>', 'start agent and gate commands through root on this socket (dispatch passes 3)')
    .option('--grace-sec <n>', 'on SIGTERM, how long running agents may finish before they are stopped', '30')
    .option('--agent-home <dir>', "the agent identity's home, where its repository and task worktrees are (dispatch)")
    .option('--gate-home <dir>', "the gate identity's home, where candidates are checked out (dispatch)")
    .option('--handoff <dir>', 'the folder holding the one-way hand-off folders (dispatch)')
    .option('--agent-uid <uid>', 'the uid every handed-over bundle must belong to (dispatch)')
    .option(
      '--bundle-max-mb <n>',
      'the largest task bundle accepted, in MiB',
      String(DEFAULT_BUNDLE_MAX_BYTES / 2 ** 20),
    )
    .option(
      '--review <policy>',
      "required: review every Done task before it lands, whatever .agent/config.json says (the registry's review key); optional: as the config says",
      'optional',
    )
    .option(
      '--broker-url <url>',
      "the run's provider broker, http://127.0.0.1:PORT: agents reach their model through it, with no login (dispatch)",
    )
    .option(
      '--kubernetes <json>',
      "run each task attempt as a Job in the repo's cluster: the repo's name, its [repos.NAME.kubernetes] settings and run limits as JSON (dispatch passes them)",
    )
    .action(async (options: OrchestrateOptions) => {
      setExit(await run(context, options));
    });
}

/**
 * The other identities' places as dispatch passes them (all four flags), or undefined: one user plays every part, in
 * places orchestrate makes itself.
 */
function layoutFrom(options: OrchestrateOptions): IdentityLayout | undefined {
  const given = [options.agentHome, options.gateHome, options.handoff, options.agentUid];
  if (given.every((value) => value === undefined)) return undefined;
  if (given.some((value) => value === undefined))
    throw new UsageError('--agent-home, --gate-home, --handoff and --agent-uid go together (dispatch passes all four)');
  for (const [flag, dir] of [
    ['--agent-home', options.agentHome],
    ['--gate-home', options.gateHome],
    ['--handoff', options.handoff],
  ] as const)
    if (!path.isAbsolute(dir!)) throw new UsageError(`${flag} must be an absolute path, not "${dir}"`);
  if (!/^[1-9][0-9]{0,9}$/.test(options.agentUid!))
    throw new UsageError(`--agent-uid must be a uid (a positive number), not "${options.agentUid}"`);
  return {
    agentHome: options.agentHome!,
    gateHome: options.gateHome!,
    handoff: handoffDirs(options.handoff!),
    agentUid: Number(options.agentUid),
  };
}

/** --author-name and --author-email together (dispatch passes the registry's), or neither. */
function authorFrom(options: OrchestrateOptions): GitIdentity | undefined {
  if (options.authorName === undefined && options.authorEmail === undefined) return undefined;
  const name = options.authorName?.trim() ?? '';
  const email = options.authorEmail?.trim() ?? '';
  if (!name || /[<>\n]/.test(name))
    throw new UsageError('--author-name must be a name without <, > or newlines, given with --author-email');
  if (!/^[^\s<>@]+@[^\s<>@]+$/.test(email))
    throw new UsageError('--author-email must be an email address like bot@example.com, given with --author-name');
  return { name, email };
}

async function run(context: CliContext, options: OrchestrateOptions): Promise<number> {
  const { fs, process, ids } = context.ports;
  if (options.drain && options.task) throw new UsageError('use either --drain or --task ID, not both');
  if (options.task && !isSafeTaskId(options.task))
    throw new UsageError(`"${options.task}" is not a task id (like TASK-12)`);
  if (options.runId && !/^[A-Za-z0-9][A-Za-z0-9._-]{0,80}$/.test(options.runId))
    throw new UsageError(`--run-id "${options.runId}" may only contain letters, digits, . _ -`);
  if (options.progress !== 'human' && options.progress !== 'json')
    throw new UsageError(`--progress must be human or json, not "${options.progress}"`);
  const spend = options.spend === undefined ? undefined : parseSpendPolicy(options.spend);
  if (typeof spend === 'string') throw new UsageError(`--spend ${spend}`);
  const workspace = await checkWorkspace(fs, context.cwd, options.workspace);
  const maxParallel = options.maxParallel
    ? parsePositiveInt('--max-parallel', options.maxParallel, MAX_PARALLEL_CEILING)
    : undefined;
  const graceSec = parsePositiveInt('--grace-sec', options.graceSec, 3600);
  const bundleMaxMb = parsePositiveInt('--bundle-max-mb', options.bundleMaxMb ?? '256', 64 * 1024);
  const layout = layoutFrom(options);
  const brokerUrl = options.brokerUrl === undefined ? undefined : parseBrokerUrl('--broker-url', options.brokerUrl);
  const kubernetes = options.kubernetes === undefined ? undefined : readKubernetesRun(options.kubernetes);
  if (kubernetes && brokerUrl !== undefined)
    throw new UsageError(
      `--kubernetes and --broker-url: the run's broker listens on this host's loopback, where no pod reaches it; a repo with backend = "kubernetes" has no [repos.${kubernetes.repo}.broker] yet`,
    );
  if (options.review !== undefined && options.review !== 'required' && options.review !== 'optional')
    throw new UsageError(`--review must be required or optional, not "${options.review}"`);
  const { config: repoConfig, warnings } = await readRepoConfig(fs, workspace);
  // --max-parallel is a cap: it may lower the repo's own setting, never raise it.
  const config = applyOverrides(repoConfig, {}, maxParallel === undefined ? {} : { maxParallel });
  for (const warning of warnings)
    context.err(`warning: ${warning.file}: ${warning.key}: ${warning.problem}; ${warning.fix}\n`);
  const passEnv = (options.passEnv ?? '')
    .split(',')
    .map((name) => name.trim())
    .filter(Boolean);
  const badName = passEnv.find((name) => !/^[A-Za-z_][A-Za-z0-9_]*$/.test(name));
  if (badName) throw new UsageError(`--pass-env: "${badName}" is not a variable name`);
  const env = agentBaseEnv(context.env, passEnv);
  const adapter = adapterFor(config.assistant);
  const binary = await resolveAgentBinary(process, adapter, config, workspace, env.PATH ?? '');
  const state = stateDir(context.env);
  await ensureStateDir(fs, workspaceStateDir(state, workspace));

  const runId = options.runId ?? ids.next();
  const git = new Git(process, { env, files: fs, startedBy: await context.ports.control.self() });
  const identity = authorFrom(options) ?? (await configuredIdentity(git, workspace));
  const channel = launcherChannel(context, options.launcherFd);
  const launcher: Launcher = channel
    ? remoteLauncher(channel, process, {
        onBadEvent: (reason) => context.err(`launcher: dropped an event: ${reason}\n`),
      })
    : localLauncher(process);
  const summary = await orchestrate(context.ports, identity ? git.withIdentity(identity) : git, {
    workspace,
    config,
    only: options.task,
    push: options.push,
    force: Boolean(options.force),
    runId,
    env,
    secrets: await knownSecrets(fs, env),
    stateDir: state,
    adapter,
    binary,
    onEvent: progressPrinter(context, options.progress === 'json' ? 'json' : 'human'),
    stop: context.terminate,
    graceMs: graceSec * 1000,
    control: context.ports.control,
    locks: context.ports.locks,
    ...(spend ? { spend } : {}),
    bundleMaxBytes: bundleMaxMb * 2 ** 20,
    review: options.review === 'required' ? 'required' : 'optional',
    ...(layout ? { layout } : {}),
    ...(identity ? { author: identity } : {}),
    ...(brokerUrl !== undefined ? { brokerUrl } : {}),
    ...(kubernetes
      ? {
          remote: runnerKubeAttempts({
            run: kubernetes,
            connector: kubeConnector(context),
            fs,
            clock: context.ports.clock,
            git,
            runId,
            workspace,
            state,
            runnerHome: context.env.HOME ?? '',
            config,
            adapter,
            binary,
            passEnv,
            author: identity,
            bundleMaxBytes: bundleMaxMb * 2 ** 20,
            stop: context.terminate,
          }),
        }
      : {}),
    launcher,
  }).finally(() => channel?.close());
  context.out(options.json ? `${JSON.stringify(summary)}\n` : renderSummary(summary));
  return summary.outcome === 'failed' ? EXIT.failed : EXIT.ok;
}

/** The cluster client of this process (src/main.ts wires it; a process without one cannot run Jobs). */
function kubeConnector(context: CliContext): KubeConnector {
  if (!context.kubernetes) throw new UsageError('--kubernetes: this process has no cluster client');
  return context.kubernetes;
}

/** Root's launch socket when dispatch gave one (--launcher-fd), else undefined: commands run here, as this user. */
function launcherChannel(context: CliContext, fd: string | undefined): LineChannel | undefined {
  if (fd === undefined) return undefined;
  const number = parsePositiveInt('--launcher-fd', fd, 1023);
  if (!context.openLauncherChannel) throw new UsageError('--launcher-fd: this process cannot open an inherited socket');
  return context.openLauncherChannel(number);
}
