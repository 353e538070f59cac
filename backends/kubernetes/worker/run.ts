// The pod worker (`agent-runner pod-worker`): the agent container's program.
// It runs in the clone the Job's init container made, checks the clone is at
// the task's base, reads the task from the board there, runs the repo's
// setup and the agent as the host's task worker does (runTask, the same
// adapters and watchdog), writes every transcript event as one JSON line on
// stdout (the pod's log is the transcript), commits what the agent left,
// and pushes HEAD to the attempt's result ref. How it ended is its exit code
// (exit-codes.ts) and one line in the termination log. The push token and
// every credential are redacted from all it prints; the agent never gets
// the token.
import * as path from 'node:path';
import type { FsPort, Ports } from '../../../src/ports.js';
import type { RunOutcome } from '../../../src/types.js';
import { Git, gitsLastWords } from '../../../src/git/git.js';
import { readBoard, findTask } from '../../../src/board/read.js';
import { adapterFor } from '../../../src/agent/adapters/index.js';
import { resolveAgentBinary } from '../../../src/agent/binary.js';
import { agentBaseEnv } from '../../../src/agent/env.js';
import { brokerEnvironment, BROKER_TOKEN_VARIABLE, withCapability } from '../../../src/agent/broker-env.js';
import { knownSecrets, redactSecrets } from '../../../src/agent/secrets.js';
import { runSetupCommand } from '../../../src/agent/setup.js';
import { runTask } from '../../../src/agent/run-task.js';
import { commitLeftovers } from '../../../src/handoff/leftovers.js';
import { printableLine } from '../../../src/printable.js';
import { ExitError } from '../../../src/errors.js';
import { PUSH_TOKEN_KEY } from '../manifests/spec.js';
import { readPodWorkerSettings } from './settings.js';
import { POD_WORKER_EXIT, type PodWorkerEnding } from './exit-codes.js';
import { resultPushCommand } from './push.js';

export interface PodWorkerDeps {
  readonly ports: Pick<Ports, 'process' | 'fs' | 'clock'>;
  /** The clone (the agent container's working directory). */
  readonly cwd: string;
  /** One line of the pod's log (stdout), without its newline. */
  readonly out: (line: string) => void;
}

/** Where the worker's one-line reason goes unless AGENT_RUNNER_TERMINATION_LOG says otherwise. */
export const DEFAULT_TERMINATION_LOG = '/dev/termination-log';

/** The variables the Job sets for the worker (manifests/job.ts builtInEnv and the Secret). */
const REQUIRED = [
  'AGENT_RUNNER_RUN',
  'AGENT_RUNNER_TASK',
  'AGENT_RUNNER_ATTEMPT',
  'AGENT_RUNNER_BASE_COMMIT',
  'AGENT_RUNNER_PUSH_URL',
  'AGENT_RUNNER_RESULT_REF',
  PUSH_TOKEN_KEY,
] as const;

class Ending extends Error {
  constructor(
    readonly ending: PodWorkerEnding,
    readonly reason: string,
  ) {
    super(reason);
  }
}

/** A file system whose appends to `file` are lines of stdout instead (the transcript, as the pod's log). */
function transcriptToStdout(fs: FsPort, file: string, out: (line: string) => void): FsPort {
  return {
    ...fs,
    appendLine: (target, line) => {
      if (target !== file) return fs.appendLine(target, line);
      out(line);
      return Promise.resolve();
    },
  };
}

function describe(outcome: RunOutcome): string {
  return 'reason' in outcome ? `${outcome.kind}: ${outcome.reason}` : outcome.kind;
}

/**
 * The one line kept in the termination log, which the kubelet creates before the container starts: a missing file
 * (run outside a pod) is not an error, and is not made.
 */
async function writeTerminationLog(fs: FsPort, file: string, line: string): Promise<string | undefined> {
  if (!(await fs.stat(file).catch(() => undefined))) return undefined;
  try {
    await fs.appendLine(file, line);
    return undefined;
  } catch (error) {
    return `the termination log ${file} could not be written: ${(error as Error).message}`;
  }
}

/** Runs the task of this Job in the clone; the exit code (POD_WORKER_EXIT). */
export async function runPodWorker(
  deps: PodWorkerDeps,
  env: Readonly<Record<string, string | undefined>>,
): Promise<number> {
  const { fs, clock } = deps.ports;
  const plainEnv = Object.fromEntries(
    Object.entries(env).filter((entry): entry is [string, string] => entry[1] !== undefined),
  );
  const secrets = [
    ...new Set([...(env[PUSH_TOKEN_KEY] ? [env[PUSH_TOKEN_KEY]] : []), ...(await knownSecrets(fs, plainEnv))]),
  ];
  const emit = (event: Record<string, unknown>) =>
    deps.out(redactSecrets(JSON.stringify({ time: new Date(clock.now()).toISOString(), ...event }), secrets));
  const terminationLog = env.AGENT_RUNNER_TERMINATION_LOG || DEFAULT_TERMINATION_LOG;
  const finish = async (ending: PodWorkerEnding, reason: string): Promise<number> => {
    const line = printableLine(redactSecrets(reason, secrets)).slice(0, 1000);
    const exitCode = POD_WORKER_EXIT[ending];
    emit({ event: 'pod-worker-end', ending, exitCode, reason: line });
    const problem = await writeTerminationLog(fs, terminationLog, `${ending}: ${line}`);
    if (problem) emit({ event: 'pod-worker-warning', message: problem });
    return exitCode;
  };
  try {
    return await work(deps, env, plainEnv, secrets, emit, finish);
  } catch (error) {
    if (error instanceof Ending) return finish(error.ending, error.reason);
    if (error instanceof ExitError) return finish('settings', error.message);
    throw error;
  }
}

async function work(
  deps: PodWorkerDeps,
  env: Readonly<Record<string, string | undefined>>,
  plainEnv: Readonly<Record<string, string>>,
  secrets: string[],
  emit: (event: Record<string, unknown>) => void,
  finish: (ending: PodWorkerEnding, reason: string) => Promise<number>,
): Promise<number> {
  const { fs, clock, process } = deps.ports;
  const missing = REQUIRED.filter((name) => !env[name]);
  if (missing.length)
    throw new Ending(
      'settings',
      `${missing.join(', ')} not set: the Job sets them (backends/kubernetes/manifests/job.ts); run pod-worker only as a task Job's worker`,
    );
  const get = (name: (typeof REQUIRED)[number]) => env[name]!;
  const settings = readPodWorkerSettings(env);
  // The agent's credential (the operator's Secret) is redacted from every line from here on, as the push token is.
  for (const name of settings.secretEnv) {
    const value = env[name];
    if (value && !secrets.includes(value)) secrets.push(value);
  }
  const taskId = get('AGENT_RUNNER_TASK');
  const base = get('AGENT_RUNNER_BASE_COMMIT');
  emit({ event: 'pod-worker-start', task: taskId, attempt: Number(get('AGENT_RUNNER_ATTEMPT')), base });

  const gitEnv = agentBaseEnv(plainEnv);
  const git = new Git(process, { env: gitEnv });
  const head = await git.resolve(deps.cwd, 'HEAD');
  // Other tasks land on the base branch while this one starts: the clone is then ahead of the task's base, which is in
  // its history, and the task works from the base it was given. Anything else is not the branch the drain meant.
  if (head !== base && (head === undefined || !(await isAncestor(git, deps.cwd, base, head))))
    throw new Ending(
      'baseMismatch',
      `the clone in ${deps.cwd} is at ${head ?? 'no commit'}, and AGENT_RUNNER_BASE_COMMIT ${base} is not in its history: the base branch was reset after the Job was made; run the attempt again`,
    );
  if (head !== base) await git.run(deps.cwd, ['checkout', '--quiet', '--detach', base]);
  // The agent's commits are by the repo's author, as in the host's agent repository (not whoever the image names).
  if (settings.author) {
    await git.run(deps.cwd, ['config', 'user.name', settings.author.name]);
    await git.run(deps.cwd, ['config', 'user.email', settings.author.email]);
  }
  const board = await readBoard(fs, deps.cwd);
  const task = findTask(board, taskId);
  if (!task) throw new Ending('agentFailed', `unreadable: task ${taskId} is not on the board of the clone at ${base}`);

  let agentEnv: Record<string, string> = agentBaseEnv(plainEnv, [...settings.passEnv, ...settings.secretEnv]);
  if (settings.brokerUrl !== undefined) {
    const capability = env[BROKER_TOKEN_VARIABLE];
    if (!capability)
      throw new Ending(
        'settings',
        `${BROKER_TOKEN_VARIABLE} is not set, but the settings name a broker: put the capability in the attempt's Secret`,
      );
    agentEnv = withCapability(agentEnv, brokerEnvironment(settings.brokerUrl, capability));
  }
  const adapter = adapterFor(settings.config.assistant);
  const binary =
    adapter.name === 'command'
      ? await resolveAgentBinary(process, adapter, settings.config, deps.cwd, agentEnv.PATH ?? '')
      : await process.which(settings.binary, agentEnv.PATH ?? '');
  if (!binary)
    throw new Ending(
      'settings',
      `the agent ${settings.binary} is not in the image (PATH=${agentEnv.PATH ?? ''}): build the image with it, or fix the binary in the settings`,
    );

  const setupFailure = await runSetupCommand({ process, clock }, settings.config, agentEnv, deps.cwd);
  if (setupFailure) throw new Ending('setupFailed', setupFailure);

  const runId = get('AGENT_RUNNER_RUN');
  const transcriptFile = path.join(plainEnv.TMPDIR ?? '/tmp', 'agent-runner-pod', `${runId}-${task.id}.jsonl`);
  const report = await runTask(
    { ports: { process, fs: transcriptToStdout(fs, transcriptFile, deps.out), clock }, git },
    {
      workspace: deps.cwd,
      task,
      config: settings.config,
      adapter,
      binary,
      env: agentEnv,
      iterations: settings.iterations,
      transcriptFile,
      runId,
      secrets,
      ...(settings.brokerUrl !== undefined ? { brokerUrl: settings.brokerUrl } : {}),
      ...(settings.retryReason !== undefined ? { retryReason: settings.retryReason } : {}),
    },
  );
  const { outcome } = report;
  if (outcome.kind === 'blocked') throw new Ending('blocked', outcome.reason);
  if (outcome.kind !== 'done') throw new Ending('agentFailed', describe(outcome));
  if (report.leftovers) {
    const leftover = await commitLeftovers(git, deps.cwd, task.id);
    if (leftover) emit({ event: 'leftovers-committed', commit: leftover });
  }
  const commit = await git.resolve(deps.cwd, 'HEAD');
  const ref = get('AGENT_RUNNER_RESULT_REF');
  const pushed = await process.run(
    resultPushCommand({
      cwd: deps.cwd,
      url: get('AGENT_RUNNER_PUSH_URL'),
      ref,
      token: get(PUSH_TOKEN_KEY),
      env: gitEnv,
    }),
  );
  if (pushed.exitCode !== 0)
    throw new Ending(
      'pushRefused',
      `the push of ${commit ?? 'HEAD'} to ${ref} at ${get('AGENT_RUNNER_PUSH_URL')} was refused: ${gitsLastWords(`${pushed.stderr}\n${pushed.stdout}`)}`,
    );
  return finish('done', `pushed ${commit ?? 'HEAD'} to ${ref}`);
}

/** Whether `ancestor` is in the history of `commit` (both full ids). */
async function isAncestor(git: Git, cwd: string, ancestor: string, commit: string): Promise<boolean> {
  return (await git.try(cwd, ['merge-base', '--is-ancestor', ancestor, commit])).exitCode === 0;
}
