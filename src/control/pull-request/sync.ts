// The watcher, with promote = "pr": after a drain that published staging,
// open or update the staging pull request (and, with auto_merge = true,
// merge it when its checks are green) by running `agent-runner promote --pr`
// as the repo user, then record what it printed for status, fleet and the
// dashboard. It never merges unless the registry says auto_merge.
import type { FsPort, ProcessPort } from '../../ports.js';
import type { RegistryRepo } from '../../types.js';
import { type Install, repoUser, runnerCommandAsUser, dropPrivileges } from '../repo-user/index.js';
import { pullRequestRecordFrom, writePullRequestRecord, type PullRequestRecord } from './record.js';

/** Pure: the promote arguments for this repo after a published drain, or undefined when it promotes by push. */
export function pullRequestPromoteArgs(repo: RegistryRepo): string[] | undefined {
  const settings = repo.promote;
  if (settings?.mode !== 'pr') return undefined;
  return [
    'promote',
    '--workspace',
    repo.path,
    '--pr',
    ...(settings.autoMerge ? ['--merge'] : []),
    ...(settings.githubApiUrl ? ['--github-api', settings.githubApiUrl] : []),
    '--json',
  ];
}

export interface PullRequestSyncDeps {
  readonly process: ProcessPort;
  readonly fs: FsPort;
  readonly install: Install;
  readonly state: string;
  now(): string;
}

/** Runs promote --pr as the repo user and records the outcome; undefined when the repo promotes by push. */
export async function keepPullRequestCurrent(
  deps: PullRequestSyncDeps,
  repo: RegistryRepo,
): Promise<PullRequestRecord | undefined> {
  const args = pullRequestPromoteArgs(repo);
  if (!args) return undefined;
  const user = await repoUser(deps, repo);
  const result = await deps.process.run(
    dropPrivileges(user, runnerCommandAsUser(deps.install, repo, user, args), { parentDeathSignal: 'SIGTERM' }),
  );
  const record = pullRequestRecordFrom(result.stdout, result.stderr, result.exitCode ?? 1, deps.now());
  await writePullRequestRecord(deps.fs, deps.state, repo.name, record);
  return record;
}
