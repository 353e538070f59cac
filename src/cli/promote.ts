// agent-runner promote: fast-forward the base branch to auto/work and push
// it, or (--pr, or registry promote = "pr") open/update a GitHub pull
// request from auto/work and, with --merge, merge it once every check on
// staging's exact head is green (docs/github.md).
import type { Command } from 'commander';
import type { CliContext } from './context.js';
import type { RegistryRepo } from '../types.js';
import { EXIT, UsageError } from '../errors.js';
import { promote } from '../staging/lifecycle.js';
import {
  mergePullRequest,
  MergeNotDoneError,
  syncPullRequest,
  type PullRequestMerge,
  type PullRequestSync,
} from '../staging/pull-request.js';
import { readRepoConfig } from '../repo/read-config.js';
import { lifecycleInput, withWorkspaceLock } from './lifecycle-input.js';
import { routeLifecycle } from './lifecycle-route.js';
import { lifecycleChoice, targetFlags } from './target.js';
import { withExamples } from './help.js';
import { githubTarget } from './github-target.js';
import { printableLine } from '../printable.js';

interface PromoteOptions {
  workspace?: string;
  repo?: string;
  json?: boolean;
  pr?: boolean;
  merge?: boolean;
  push?: boolean;
  githubApi?: string;
  expectStaging?: string;
}

/** What the registry says about promoting this repo, as flags for the repo user's process. */
export function promoteFlagsFor(repo: RegistryRepo, options: Pick<PromoteOptions, 'push' | 'githubApi'>): string[] {
  const settings = repo.promote;
  if (!settings || options.push) return [];
  const api = options.githubApi === undefined && settings.githubApiUrl ? ['--github-api', settings.githubApiUrl] : [];
  return settings.mode === 'pr' ? ['--pr', ...api] : api;
}

/** Pure: the human lines of a PR sync or merge. */
export function renderPullRequestResult(result: PullRequestSync | PullRequestMerge): string {
  const lines = [printableLine(result.detail)];
  for (const check of result.pr?.checks ?? [])
    lines.push(
      `  ${check.state.padEnd(8)} ${check.kind} ${printableLine(check.name)} (${printableLine(check.conclusion)})`,
    );
  if ('reasons' in result && result.action !== 'merged')
    for (const reason of result.reasons) lines.push(`  ${printableLine(reason)}`);
  return `${lines.join('\n')}\n`;
}

const EXAMPLES = [
  ['agent-runner promote --repo web', 'fast-forward the base to auto/work and push it'],
  ['agent-runner promote --repo web --pr --merge', 'through a pull request, merged when its checks are green'],
] as const;

export function define(command: Command, context: CliContext, setExit: (code: number) => void): void {
  withExamples(targetFlags(command), EXAMPLES)
    .option('--pr', 'open or update a GitHub pull request from auto/work instead of pushing the base')
    .option(
      '--merge',
      'with --pr: merge it when every check on the staging head is green (exit 75 while one is pending)',
    )
    .option('--push', 'push the base even when the registry says promote = "pr"')
    .option(
      '--github-api <url>',
      'GitHub API root (GitHub Enterprise: https://HOST/api/v3); default from the origin host',
    )
    .option('--expect-staging <commit>', 'refuse unless auto/work is at this commit (what you confirmed)')
    .option('--json', 'print the result as JSON')
    .action(async (options: PromoteOptions) => {
      if (options.push && (options.pr || options.merge))
        throw new UsageError(
          '--push and --pr/--merge exclude each other: push the base, or promote through a pull request',
        );
      if (options.expectStaging !== undefined && !/^[0-9a-f]{40}([0-9a-f]{24})?$/.test(options.expectStaging))
        throw new UsageError(`--expect-staging "${options.expectStaging}" is not a full commit id`);
      const own = [
        ...(options.expectStaging === undefined ? [] : ['--expect-staging', options.expectStaging]),
        ...(options.pr || options.merge ? ['--pr'] : []),
        ...(options.merge ? ['--merge'] : []),
        ...(options.push ? ['--push'] : []),
        ...(options.githubApi ? ['--github-api', options.githubApi] : []),
        ...(options.json ? ['--json'] : []),
      ];
      const route = await routeLifecycle(context, lifecycleChoice('promote', options), ['promote', ...own], (repo) =>
        promoteFlagsFor(repo, options),
      );
      if (route.kind === 'ran-as-user') return setExit(route.exitCode);
      const input = await lifecycleInput(context, route.workspace, true);
      if (!options.pr && !options.merge) {
        const result = await withWorkspaceLock(context, input, 'promote', () => promote(input, options.expectStaging));
        context.out(
          options.json
            ? `${JSON.stringify(result)}\n`
            : `${result.detail}${result.pushed ? `; pushed ${input.baseBranch}` : ''}\n`,
        );
        return setExit(EXIT.ok);
      }
      const target = await githubTarget(context, input, options.githubApi);
      const { config } = await readRepoConfig(context.ports.fs, input.workspace);
      try {
        const result = await withWorkspaceLock(context, input, 'promote', async () => {
          if (!options.merge) {
            const { status: _status, raw: _raw, ...sync } = await syncPullRequest(input, target);
            return sync;
          }
          return mergePullRequest(input, target, config.mergeMethod);
        });
        context.out(options.json ? `${JSON.stringify(result)}\n` : renderPullRequestResult(result));
        setExit(EXIT.ok);
      } catch (error) {
        if (!(error instanceof MergeNotDoneError)) throw error;
        if (options.json) context.out(`${JSON.stringify(error.result)}\n`);
        else context.out(renderPullRequestResult(error.result));
        context.err(`${printableLine(error.message)}\n`);
        setExit(error.exitCode);
      }
    });
}
