// What dispatch tells orchestrate of a repo whose tasks run as Jobs: one
// argument, --kubernetes JSON, the repo's name, its resolved
// [repos.NAME.kubernetes] settings and its run limits
// (backends/kubernetes/drain/runner.ts builds the drain's path from it). Pure.
import type { RepoKubernetes, RunLimits } from '../../types.js';
import { UsageError } from '../../errors.js';

/** What dispatch passes: root resolved it from the registry, which validated every key. */
export interface KubernetesRun {
  readonly repo: string;
  readonly settings: RepoKubernetes;
  readonly limits: RunLimits;
}

/** Pure: the --kubernetes argument of orchestrate. */
export function kubernetesRunArg(run: KubernetesRun): string {
  return JSON.stringify(run);
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Pure: the --kubernetes argument read back. Root wrote it from the validated registry; this checks only that it is
 * that shape, so a hand-typed one fails here, naming the flag, rather than deep in a manifest builder.
 */
export function readKubernetesRun(text: string): KubernetesRun {
  const bad = (problem: string): never => {
    throw new UsageError(`--kubernetes: ${problem}; dispatch passes it from the registry's [repos.NAME.kubernetes]`);
  };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return bad(`not JSON (${(error as Error).message})`);
  }
  if (!isObject(value)) return bad('not an object');
  const { repo, settings, limits } = value;
  if (typeof repo !== 'string' || !/^[A-Za-z0-9][A-Za-z0-9_-]{0,62}$/.test(repo)) return bad('repo is not a repo name');
  if (!isObject(settings) || !isObject(settings.cluster) || !isObject(settings.proxy))
    return bad('settings are missing');
  for (const key of ['namespace', 'image', 'gitFetchUrl', 'gitPushUrl'])
    if (typeof settings[key] !== 'string') bad(`settings.${key} is not a string`);
  for (const key of ['workspaceBytes', 'tmpBytes', 'ttlSec'])
    if (typeof settings[key] !== 'number') bad(`settings.${key} is not a number`);
  if (!isObject(limits) || ['tasksMax', 'memoryMax', 'cpuWeight'].some((key) => typeof limits[key] !== 'number'))
    return bad('limits are missing');
  return value as unknown as KubernetesRun;
}
