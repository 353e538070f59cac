// What the pod worker is told about its agent: one environment variable,
// AGENT_RUNNER_POD_WORKER, holding a JSON object the drain builds with
// podWorkerEnv from the repo's trusted config (auto/work's, as on the host)
// and the pod reads with readPodWorkerSettings, every field checked (the
// config by the repo config's own validator). Pure.
import type { RepoConfig } from '../../../src/types.js';
import { UsageError } from '../../../src/errors.js';
import { validateConfig } from '../../../src/repo/config.js';

/** The one variable the pod worker's settings travel in (the Job's spec.env). */
export const POD_WORKER_VARIABLE = 'AGENT_RUNNER_POD_WORKER';
const VERSION = 1;

/** The parts of the repo config a task worker uses: the agent, its setup, its prompt, its watchdog. */
const CONFIG_KEYS = [
  'assistant',
  'model',
  'effort',
  'command',
  'setup',
  'prompt',
  'agentIdleTimeoutSec',
  'agentWallClockSec',
] as const;

export interface PodWorkerSettings {
  readonly config: RepoConfig;
  /** The agent's executable in the image (claude, codex; for a command agent its argv is config.command). */
  readonly binary: string;
  /** Sessions at most (the drain's 1). */
  readonly iterations: number;
  /** Variables of the pod's environment the agent gets beside the usual ones (the registry's env, credentials). */
  readonly passEnv: readonly string[];
  /** The run's broker as the pod reaches it; its capability is the pod's AGENT_RUNNER_BROKER_TOKEN. */
  readonly brokerUrl: string | undefined;
  /** Why the task runs again (the drain's retry reason), told to the agent in its prompt. */
  readonly retryReason: string | undefined;
  /** Who the agent's commits are by (the registry's author, as the host's agent repository is given). */
  readonly author: { readonly name: string; readonly email: string } | undefined;
  /** Variables of the pod holding the agent's credential (agent_secret): given to the agent, redacted everywhere. */
  readonly secretEnv: readonly string[];
}

export interface PodWorkerExtra {
  readonly iterations?: number;
  readonly passEnv?: readonly string[];
  readonly brokerUrl?: string;
  readonly retryReason?: string;
  readonly author?: { readonly name: string; readonly email: string };
  readonly secretEnv?: readonly string[];
}

/** Pure: the Job's env entry that carries the settings (put it in TaskJobSpec.env). */
export function podWorkerEnv(config: RepoConfig, binary: string, extra: PodWorkerExtra = {}): Record<string, string> {
  const subset: Record<string, unknown> = {};
  for (const key of CONFIG_KEYS) if (config[key] !== undefined) subset[key] = config[key];
  const value = {
    version: VERSION,
    config: subset,
    binary,
    iterations: extra.iterations ?? 1,
    passEnv: [...(extra.passEnv ?? [])],
    ...(extra.brokerUrl === undefined ? {} : { brokerUrl: extra.brokerUrl }),
    ...(extra.retryReason === undefined ? {} : { retryReason: extra.retryReason }),
    ...(extra.author === undefined ? {} : { author: { name: extra.author.name, email: extra.author.email } }),
    ...(extra.secretEnv?.length ? { secretEnv: [...extra.secretEnv] } : {}),
  };
  // The settings are checked as the pod will read them: a drain never starts a Job whose worker would refuse them.
  readPodWorkerSettings({ [POD_WORKER_VARIABLE]: JSON.stringify(value) });
  return { [POD_WORKER_VARIABLE]: JSON.stringify(value) };
}

const FIX = `the drain builds it with podWorkerEnv (backends/kubernetes/worker/settings.ts); see docs/kubernetes-runtime.md, "The pod's side"`;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const KNOWN = new Set([
  'version',
  'config',
  'binary',
  'iterations',
  'passEnv',
  'brokerUrl',
  'retryReason',
  'author',
  'secretEnv',
]);

/** The settings of the pod worker from its environment; a UsageError naming the variable, each problem and the fix. */
export function readPodWorkerSettings(env: Readonly<Record<string, string | undefined>>): PodWorkerSettings {
  const text = env[POD_WORKER_VARIABLE];
  const fail = (problems: readonly string[]): never => {
    throw new UsageError(`${POD_WORKER_VARIABLE}: ${problems.join('; ')}; ${FIX}`);
  };
  if (text === undefined || text === '') return fail(['is not set']);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    return fail([`is not JSON (${(error as Error).message})`]);
  }
  if (json === null || typeof json !== 'object' || Array.isArray(json)) return fail(['is not a JSON object']);
  const input = json as Record<string, unknown>;
  const problems: string[] = [];
  for (const key of Object.keys(input)) if (!KNOWN.has(key)) problems.push(`${key}: is not a known key`);
  if (input.version !== VERSION) problems.push(`version: must be ${VERSION}, got ${JSON.stringify(input.version)}`);
  const configIn = input.config;
  let config: RepoConfig | undefined;
  if (configIn === null || typeof configIn !== 'object' || Array.isArray(configIn))
    problems.push('config: must be an object');
  else {
    const extraKeys = Object.keys(configIn).filter((key) => !(CONFIG_KEYS as readonly string[]).includes(key));
    if (extraKeys.length) problems.push(`config: ${extraKeys.join(', ')}: not a task worker's setting`);
    const validated = validateConfig(configIn, `${POD_WORKER_VARIABLE}.config`);
    for (const problem of validated.problems) problems.push(`config.${problem.key}: ${problem.problem}`);
    config = validated.config;
  }
  const binary = input.binary;
  if (typeof binary !== 'string' || binary === '' || binary.includes('\0'))
    problems.push('binary: must be the path or name of the agent executable');
  const iterations = input.iterations;
  if (typeof iterations !== 'number' || !Number.isInteger(iterations) || iterations < 1 || iterations > 100)
    problems.push(`iterations: must be a whole number 1-100, got ${JSON.stringify(iterations)}`);
  const passEnv = input.passEnv;
  if (!Array.isArray(passEnv) || !passEnv.every((name) => typeof name === 'string' && ENV_NAME.test(name)))
    problems.push('passEnv: must be a list of variable names');
  const brokerUrl = input.brokerUrl;
  if (brokerUrl !== undefined && (typeof brokerUrl !== 'string' || !/^https?:\/\/[^\s/@]+(\/\S*)?$/.test(brokerUrl)))
    problems.push('brokerUrl: must be an http(s) URL without credentials');
  const retryReason = input.retryReason;
  if (retryReason !== undefined && (typeof retryReason !== 'string' || retryReason.length > 4000))
    problems.push('retryReason: must be a string of at most 4000 characters');
  const author = input.author as Record<string, unknown> | undefined;
  if (
    author !== undefined &&
    (typeof author !== 'object' ||
      author === null ||
      typeof author.name !== 'string' ||
      !/^[^<>\n]{1,200}$/.test(author.name) ||
      typeof author.email !== 'string' ||
      !/^[^\s<>@]+@[^\s<>@]+$/.test(author.email))
  )
    problems.push(
      'author: must be {"name": a name without <, > or newlines, "email": an address like bot@example.com}',
    );
  const secretEnv = input.secretEnv ?? [];
  if (!Array.isArray(secretEnv) || !secretEnv.every((name) => typeof name === 'string' && ENV_NAME.test(name)))
    problems.push('secretEnv: must be a list of variable names');
  if (problems.length || !config) return fail(problems);
  return {
    config,
    binary: binary as string,
    iterations: iterations as number,
    passEnv: passEnv as string[],
    brokerUrl: brokerUrl as string | undefined,
    retryReason: retryReason as string | undefined,
    author: author === undefined ? undefined : { name: author.name as string, email: author.email as string },
    secretEnv: secretEnv as string[],
  };
}
