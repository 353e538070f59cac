// The results repository of one repo: a bare repository of the runner's own
// that task pods push their results into (through `results serve`), one ref
// per attempt, and the runner takes each from there (take.ts). Its config
// and hook are written each time the endpoint starts, so a repository made
// by an older agent-runner, or edited by hand, is brought back to the rules.
import * as path from 'node:path';
import type { FsPort } from '../../../src/ports.js';
import type { Git } from '../../../src/git/git.js';
import { PRE_RECEIVE_HOOK } from './hook.js';

/** The results repository of `repo` under the runner's state dir (AGENT_RUNNER_STATE of the runner). */
export function resultsRepository(state: string, repo: string): string {
  return path.join(state, 'results', `${repo}.git`);
}

/** Where the hashes of the push tokens of `repo` are kept: one file per attempt, the runner's alone. */
export function pushTokensDir(state: string, repo: string): string {
  return path.join(state, 'results', `${repo}.tokens`);
}

/** The default cap on one push (the pack and its commands). */
export const DEFAULT_RESULT_MAX_BYTES = 256 * 1024 * 1024;

/** The config every results repository is held to: pushes only, checked, never a delete or a rewrite. */
function resultsConfig(maxBytes: number): readonly [string, string][] {
  return [
    ['http.receivepack', 'true'],
    ['http.uploadpack', 'false'],
    ['http.getanyfile', 'false'],
    ['receive.denyDeletes', 'true'],
    ['receive.denyNonFastForwards', 'true'],
    ['receive.fsckObjects', 'true'],
    ['receive.maxInputSize', String(maxBytes)],
    ['receive.autogc', 'false'],
    ['receive.advertisePushOptions', 'false'],
    ['core.hooksPath', 'hooks'],
    ['gc.auto', '0'],
  ];
}

/** Makes the results repository when it is missing and (re)writes its config and hook; its path. */
export async function ensureResultsRepository(
  git: Git,
  fs: FsPort,
  state: string,
  repo: string,
  maxBytes: number,
): Promise<string> {
  const dir = resultsRepository(state, repo);
  await fs.mkdirp(path.dirname(dir), 0o700);
  if (!(await fs.stat(path.join(dir, 'HEAD')))) await git.run(path.dirname(dir), ['init', '--quiet', '--bare', dir]);
  for (const [key, value] of resultsConfig(maxBytes)) await git.run(dir, ['config', key, value]);
  await fs.mkdirp(path.join(dir, 'hooks'), 0o700);
  await fs.writeAtomic(path.join(dir, 'hooks', 'pre-receive'), PRE_RECEIVE_HOOK, 0o700);
  await fs.mkdirp(pushTokensDir(state, repo), 0o700);
  return dir;
}
