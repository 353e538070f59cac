// One drain of one repo as its user: the caller holds the repo's run lock;
// this prepares the user's state dir, checks the user can read the install,
// records the run, starts orchestrate through setpriv with a clean
// environment inside the run's limits (a transient scope under systemd,
// rlimits otherwise: limits.ts), relays progress, ends every process the
// run left (user-sweep.ts) and records the outcome. Where the registry gives the repo a broker, the run's broker
// starts before orchestrate (a broker that cannot start fails the run, recorded) and ends after the last launched
// command, before the sweep; what it metered is in the ledger by then. Nothing from the repo
// runs as root: root only starts setpriv, and signals only that direct child
// of its own (whose pid cannot be recycled while root has not reaped it).
import * as path from 'node:path';
import type { Ports, ProcessControl } from '../../ports.js';
import type { Command, RegistryRepo } from '../../types.js';
import {
  dropPrivileges,
  type UserAccount,
  runnerCommandAsUser,
  type Install,
  repoUserSecrets,
  repoIdentities,
  launchIdentities,
  handoffProblems,
  type LaunchIdentity,
  type RepoIdentities,
} from '../repo-user/index.js';
import { handoffRoot, type LaunchedIdentity } from '../../identities.js';
import { EXIT, UsageError, type ExitCode } from '../../errors.js';
import { repoUserStateDir } from '../../paths.js';
import { finishRun, writeRun, type RunRecord, type RunTrigger } from '../runs/index.js';
import { confineCommand, confinementFor, stopUnitCommand, systemdIsRunning, type Confinement } from './limits.js';
import { describeSweep, endRunProcesses, type SweepResult } from './user-sweep.js';
import { SYSTEM_PATH } from '../../system-path.js';
import { sealRunUsage, spendForRun } from './usage.js';
import type { SpendPolicy } from '../../spend/policy.js';
import { redactDeep, redactSecrets } from '../../agent/secrets.js';
import { serveLaunches } from './launcher.js';
import { brokerUrl, type RunBrokerHandle } from '../broker/index.js';
import { brokerAccount, startRunBrokerOrFail } from './run-broker.js';
import { kubernetesRunArg } from './kubernetes-arg.js';

export interface DispatchInput {
  readonly repo: RegistryRepo;
  /** The root state dir (AGENT_RUNNER_STATE of the control plane). */
  readonly state: string;
  readonly install: Install;
  /** --drain or --task ID, plus pass-through flags (--no-push, --force, ...). */
  readonly orchestrateArgs: readonly string[];
  readonly trigger: RunTrigger;
  readonly jobId?: string;
  readonly progress: 'human' | 'json';
  readonly runId: string;
  /** Budgets and the ledger's totals for orchestrate (dispatchRun reads them when not given). */
  readonly spend?: SpendPolicy;
}

export interface DispatchHooks {
  onStderrLine(line: string): void;
  /** The run record was written and orchestrate started. */
  onStarted?(record: RunRecord): void;
  /** The user's leftover processes were ended (or there were none). */
  onSweep?(result: SweepResult): void;
}

/** Lets a caller ask a running dispatch to stop (SIGTERM to orchestrate, then force). */
export class StopRequest {
  private handlers: (() => void)[] = [];
  requested = false;
  request(): void {
    if (this.requested) return;
    this.requested = true;
    for (const handler of this.handlers) handler();
  }
  onRequest(handler: () => void): void {
    if (this.requested) handler();
    else this.handlers.push(handler);
  }
}

export interface DispatchDeps extends Ports {
  readonly control: Pick<ProcessControl, 'processesOfUser'>;
  /** After a stop request: how long orchestrate gets before its groups are killed (default STOP_GRACE_MS). */
  readonly killAfterMs?: number;
}

/** After the run: how long the user's leftover processes get between SIGTERM and SIGKILL. */
const LEFTOVER_GRACE_MS = 5_000;

/** Pure: the confinement as the run record keeps it. */
function confinementRecord(confinement: Confinement): NonNullable<RunRecord['confinement']> {
  return {
    kind: confinement.kind,
    ...(confinement.kind === 'systemd-scope' ? { unit: confinement.unit } : {}),
    ...confinement.limits,
  };
}

/** How long orchestrate gets after SIGTERM to wind down its agents before its groups are killed. */
const STOP_GRACE_MS = 60_000;

/** The repo's three accounts, and the agent and gate as the launcher starts commands as them. */
export interface RunIdentities {
  readonly accounts: RepoIdentities;
  readonly identities: ReadonlyMap<LaunchedIdentity, LaunchIdentity>;
}

/** Pure: the orchestrate command for a repo, before the privilege drop. */
export function orchestrateCommand(input: DispatchInput, user: UserAccount, accounts?: RepoIdentities): Command {
  return runnerCommandAsUser(input.install, input.repo, user, [
    'orchestrate',
    '--workspace',
    input.repo.path,
    ...input.orchestrateArgs,
    ...(input.orchestrateArgs.includes('--max-parallel') ? [] : ['--max-parallel', String(input.repo.maxParallel)]),
    // The registry's author signs the runner's own commits (landings, park and block notes).
    ...(input.repo.authorName && input.repo.authorEmail
      ? ['--author-name', input.repo.authorName, '--author-email', input.repo.authorEmail]
      : []),
    // The registry's non-secret env reaches the agents, not only orchestrate.
    ...(Object.keys(input.repo.env).length ? ['--pass-env', Object.keys(input.repo.env).join(',')] : []),
    // Where the other identities work and hand over (orchestrate, the runner, never enters their homes), and the
    // launch socket dispatchRun gives it to start their commands (a channel is always the child's fd 3).
    ...(accounts
      ? [
          '--agent-home',
          accounts.agent.home,
          '--gate-home',
          accounts.gate.home,
          '--handoff',
          handoffRoot(accounts.runner.home),
          '--agent-uid',
          String(accounts.agent.uid),
          '--launcher-fd',
          '3',
        ]
      : []),
    '--json',
    '--run-id',
    input.runId,
    '--progress',
    input.progress,
    ...(input.spend ? ['--spend', JSON.stringify(input.spend)] : []),
    // A repo can make its review stricter, never turn off what the registry requires.
    ...(input.repo.review === 'required' ? ['--review', 'required'] : []),
    // Where the agents' model sessions reach their model: the codex adapter names it in its provider settings.
    ...(input.repo.broker ? ['--broker-url', brokerUrl(input.repo.broker.port)] : []),
    // Task attempts as Jobs in the repo's cluster (backends/kubernetes/drain/runner.ts).
    ...(input.repo.kubernetes
      ? [
          '--kubernetes',
          kubernetesRunArg({ repo: input.repo.name, settings: input.repo.kubernetes, limits: input.repo.limits }),
        ]
      : []),
  ]);
}

/** `test ARGS` as `account`: what that account may do to a path, asked of the kernel as it. */
function testAs(ports: Ports, account: UserAccount, args: string[]) {
  return ports.process.run(dropPrivileges(account, { program: 'test', args, env: { PATH: SYSTEM_PATH }, cwd: '/' }));
}

/**
 * Creates the user's own state dir (as the user: root never writes in its home) and checks the user can run the
 * install.
 */
async function prepareUser(ports: Ports, input: DispatchInput, accounts: RepoIdentities): Promise<void> {
  const user = accounts.runner;
  // Root made them; a run never starts with a hand-off folder another identity could misuse.
  const handoff = await handoffProblems(ports.fs, user.home, accounts);
  if (handoff.length)
    throw new UsageError(
      `repo "${input.repo.name}": its hand-off folders are not as provisioning makes them: ${handoff.join('; ')}; repair them with: agent-runner provision repo ${input.repo.name}`,
    );
  const dir = repoUserStateDir(user.home);
  const made = await ports.process.run(
    dropPrivileges(user, {
      program: 'mkdir',
      args: ['-p', '-m', '0700', '--', dir],
      env: { PATH: SYSTEM_PATH },
      cwd: '/',
    }),
  );
  if (made.exitCode !== 0)
    throw new UsageError(
      `repo "${input.repo.name}": user ${user.name} cannot create its state dir ${dir}: ${made.stderr.trim()}; check that ${user.home} exists and belongs to ${user.name}`,
    );
  const asUser = (args: string[]) => testAs(ports, user, args);
  if ((await asUser(['-e', input.repo.path])).exitCode !== 0) {
    throw new UsageError(
      `repo "${input.repo.name}": its path ${input.repo.path} does not exist (or ${user.name} cannot see it); clone the repo there (agent-runner provision repo ${input.repo.name}) or fix repos.${input.repo.name}.path`,
    );
  }
  const result = await asUser([
    '-r',
    input.install.main,
    '-a',
    '-x',
    input.install.node,
    '-a',
    '-r',
    input.repo.path,
    '-a',
    '-x',
    input.repo.path,
  ]);
  if (result.exitCode !== 0) {
    throw new UsageError(
      `repo "${input.repo.name}": user ${user.name} cannot read ${input.install.main}, run ${input.install.node} or enter ${input.repo.path}; ` +
        'make the install world-readable (chmod -R o+rX on its directory and every parent) and give the user its checkout',
    );
  }
  // The agent's and the gate's repositories are in their own homes: each must be able to write its own.
  for (const part of ['agent', 'gate'] as const) {
    const other = accounts[part];
    if ((await testAs(ports, other, ['-w', other.home, '-a', '-x', other.home])).exitCode !== 0)
      throw new UsageError(
        `repo "${input.repo.name}": the ${part} identity ${other.name} cannot write its home ${other.home}; give it back (agent-runner provision repo ${input.repo.name})`,
      );
  }
  // The staging worktree lives beside the checkout (<parent>/.<repo>.worktrees): the user must be able to make it.
  const parent = path.dirname(input.repo.path);
  if ((await asUser(['-w', parent, '-a', '-x', parent])).exitCode !== 0) {
    throw new UsageError(
      `repo "${input.repo.name}": user ${user.name} cannot write ${parent}, where the task worktrees of ${input.repo.path} go (beside it, in .${path.basename(input.repo.path)}.worktrees); give ${user.name} that directory (chown ${user.name} ${parent}) or move the checkout into its home`,
    );
  }
}

/** Looks up and checks the repo's runner, agent and gate (a UsageError says what is missing and the fix). */
export async function runIdentities(
  ports: Pick<Ports, 'process' | 'fs'>,
  input: DispatchInput,
): Promise<RunIdentities> {
  const accounts = await repoIdentities(ports, input.repo);
  return { accounts, identities: launchIdentities(input.repo, accounts.agent, accounts.gate) };
}

/** Runs orchestrate as the repo's user and records the run. The caller holds the run lock. */
export async function dispatchRun(
  deps: DispatchDeps,
  input: DispatchInput,
  hooks: DispatchHooks,
  stop: StopRequest,
): Promise<RunRecord> {
  // The run's broker listens on this host's loopback: no pod reaches it, and the pods' sessions would go unmetered.
  if (input.repo.kubernetes && input.repo.broker)
    throw new UsageError(
      `repo "${input.repo.name}": backend = "kubernetes" with a broker: the broker listens on this host's loopback, where no pod reaches it (docs/operations.md, "Task workers on Kubernetes"); remove [repos.${input.repo.name}.broker] or set repos.${input.repo.name}.backend = "host"`,
    );
  const run: RunIdentities = await runIdentities(deps, input);
  const user = run.accounts.runner;
  await prepareUser(deps, input, run.accounts);
  const brokerUser = input.repo.broker ? await brokerAccount(deps, input.repo.name) : undefined;
  const confinement = confinementFor(await systemdIsRunning(deps.fs), input.repo.name, input.runId, input.repo.limits);
  // If the runner dies (kill -9, OOM), orchestrate gets SIGTERM and winds its
  // agents down itself instead of running on unwatched.
  const spend = input.spend ?? (await spendForRun(deps.fs, input.state, input.repo, deps.clock.now()));
  const command = confineCommand(
    dropPrivileges(user, orchestrateCommand({ ...input, spend }, user, run.accounts), { parentDeathSignal: 'SIGTERM' }),
    confinement,
  );
  const started: RunRecord = {
    id: input.runId,
    repo: input.repo.name,
    trigger: input.trigger,
    ...(input.jobId === undefined ? {} : { jobId: input.jobId }),
    user: user.name,
    args: [...input.orchestrateArgs],
    status: 'running',
    startedAt: new Date(deps.clock.now()).toISOString(),
    confinement: confinementRecord(confinement),
  };
  // Recorded before orchestrate can change anything, so a crash leaves a trace.
  await writeRun(deps.fs, input.state, started);
  const broker = await startRunBrokerOrFail(deps, input, started, spend, brokerUser, hooks.onStderrLine);
  try {
    return await superviseRun(deps, input, hooks, stop, { run, user, confinement, command, started, broker });
  } finally {
    await broker?.stop();
  }
}

interface SupervisedRun {
  readonly run: RunIdentities;
  readonly user: UserAccount;
  readonly confinement: Confinement;
  readonly command: Command;
  readonly started: RunRecord;
  readonly broker: RunBrokerHandle | undefined;
}

/** Starts orchestrate, serves its launches, waits for it, sweeps what it left, seals and records the run. */
async function superviseRun(
  deps: DispatchDeps,
  input: DispatchInput,
  hooks: DispatchHooks,
  stop: StopRequest,
  { run, user, confinement, command, started, broker }: SupervisedRun,
): Promise<RunRecord> {
  // orchestrate redacts what it knows; root redacts again with the home's credentials before relaying or recording.
  // The agent CLI's login lives in the agent's home: what it prints of it is redacted too.
  const secrets = [
    ...(await repoUserSecrets(deps.fs, user.home)),
    ...(await repoUserSecrets(deps.fs, run.accounts.agent.home)),
  ];
  const stdout: string[] = [];
  const stderrTail: string[] = [];
  const child = deps.process.start(
    command,
    {
      onStdoutLine: (line) => stdout.push(redactSecrets(line, secrets)),
      onStderrLine: (raw) => {
        const line = redactSecrets(raw, secrets);
        stderrTail.push(line);
        if (stderrTail.length > 20) stderrTail.shift();
        hooks.onStderrLine(line);
      },
    },
    { channel: true },
  );
  // The agent's and gate's commands, started as them on orchestrate's request for the whole run, in its confinement.
  const launches = child.channel && serveLaunches(deps, child.channel, run.identities, confinement, broker);
  const withProcess: RunRecord = {
    ...started,
    process: { pid: child.pid, startTime: await deps.process.startTimeOf(child.pid) },
  };
  await writeRun(deps.fs, input.state, withProcess);
  hooks.onStarted?.(withProcess);
  let forced: { cancel(): void } | undefined;
  const windDown = () => {
    if (forced) return;
    child.signalGroup('SIGTERM');
    forced = deps.clock.setTimer(deps.killAfterMs ?? STOP_GRACE_MS, () => {
      child.signalGroup('SIGKILL');
    });
  };
  stop.onRequest(windDown);
  // Without its broker no session can start: the run winds down as on a stop, its tasks interrupted, none charged.
  let brokerLost: string | undefined;
  broker?.broker.onLost((why) => {
    brokerLost = why;
    hooks.onStderrLine(`broker: ${why}; the run is stopped (its tasks are interrupted, no attempt charged)`);
    windDown();
  });
  const ended = await child.exited;
  forced?.cancel();
  // What root launched for the run and is still running is killed, and waited for, before the sweep; then the broker
  // ends, reporting what its last responses cost, and with it every capability of the run.
  if (launches) await launches.stop();
  await broker?.stop();
  // orchestrate ends its agents itself; whatever the run left (setsid or
  // double-forked children, a killed orchestrate's agents) goes now.
  const sweep = await endRunProcesses(
    deps,
    confinement.kind === 'systemd-scope' ? stopUnitCommand(confinement.unit) : undefined,
    [user, run.accounts.agent, run.accounts.gate],
    LEFTOVER_GRACE_MS,
  );
  hooks.onSweep?.(sweep);
  const finished = finishRun(withProcess, {
    exitCode: ended.exitCode,
    signal: ended.signal,
    stdout: stdout.join('\n'),
    stderrTail: stderrTail.join('\n'),
    endedAt: new Date(deps.clock.now()).toISOString(),
    interrupted: stop.requested || brokerLost !== undefined,
  });
  const usage = await sealRunUsage(
    deps.fs,
    input.state,
    finished,
    stdout.join('\n'),
    new Date(deps.clock.now()).toISOString(),
  );
  const recorded: RunRecord = redactDeep<RunRecord>(
    {
      ...finished,
      ...(brokerLost === undefined ? {} : { detail: `${brokerLost}; the run was stopped` }),
      ...usage,
      leftovers: {
        found: sweep.found,
        killed: sweep.killed,
        survivors: sweep.survivors.map(({ pid, name }) => ({ pid, name })),
        summary: describeSweep(sweep),
      },
    },
    secrets,
  );
  await writeRun(deps.fs, input.state, recorded);
  return recorded;
}

/**
 * The exit code of a dispatch: orchestrate's own when it is one of the EXIT table, else failed (it died without one).
 */
export function dispatchExitCode(record: RunRecord): ExitCode {
  const known: readonly number[] = Object.values(EXIT);
  return record.exitCode !== null && record.exitCode !== undefined && known.includes(record.exitCode)
    ? (record.exitCode as ExitCode)
    : EXIT.failed;
}
