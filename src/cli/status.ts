// agent-runner status: base and staging, landed, parked and blocked tasks,
// and the last drain's summary.
import { printableLine } from '../printable.js';
import type { Command } from 'commander';
import type { CliContext } from './context.js';
import { EXIT } from '../errors.js';
import { stagingStatus, type StagingStatus, type LifecycleInput } from '../staging/lifecycle.js';
import { lifecycleInput } from './lifecycle-input.js';
import { routeLifecycle } from './lifecycle-route.js';
import { lifecycleChoice, targetFlags } from './target.js';
import { withExamples } from './help.js';
import { renderTaskTable } from './drain-output.js';
import { STAGING_BRANCH } from '../staging/names.js';
import { readLastDrain } from '../drain/history.js';
import type { DrainSummary } from '../drain/types.js';
import { workspaceStateDir } from '../paths.js';
import { pullRequestState, type PullRequestView } from '../staging/pull-request.js';
import { githubTarget } from './github-target.js';
import { promoteFlagsFor } from './promote.js';

const EXAMPLES = [
  ['agent-runner status --repo web', 'as root: staging of a registered repo, read as its user'],
  ['agent-runner status --workspace . --no-fetch --json', 'your own checkout, without fetching, as JSON'],
] as const;

export function define(command: Command, context: CliContext, setExit: (code: number) => void): void {
  withExamples(targetFlags(command), EXAMPLES)
    .option('--no-fetch', 'do not fetch origin first')
    .option(
      '--pr',
      'also show the staging pull request on GitHub and the checks on its head (on by default when the registry says promote = "pr")',
    )
    .option('--github-api <url>', 'GitHub API root (GitHub Enterprise: https://HOST/api/v3)')
    .option('--json', 'print the status as JSON')
    .action(
      async (options: {
        workspace?: string;
        repo?: string;
        fetch: boolean;
        json?: boolean;
        pr?: boolean;
        githubApi?: string;
      }) => {
        const own = [
          ...(options.fetch ? [] : ['--no-fetch']),
          ...(options.pr ? ['--pr'] : []),
          ...(options.githubApi ? ['--github-api', options.githubApi] : []),
          ...(options.json ? ['--json'] : []),
        ];
        const route = await routeLifecycle(context, lifecycleChoice('status', options), ['status', ...own], (repo) =>
          options.pr ? [] : promoteFlagsFor(repo, options),
        );
        if (route.kind === 'ran-as-user') return setExit(route.exitCode);
        const input = await lifecycleInput(context, route.workspace, options.fetch);
        const status: StatusReport = {
          ...(await stagingStatus(input)),
          lastDrain: await readLastDrain(context.ports.fs, workspaceStateDir(input.stateDir, input.workspace)),
          ...(options.pr ? await pullRequestPart(context, input, options.githubApi) : {}),
        };
        context.out(options.json ? `${JSON.stringify(status, null, 2)}\n` : renderStatus(status));
        setExit(EXIT.ok);
      },
    );
}

/** Staging as it is, what the last drain did, and (with --pr) the staging pull request. */
export type StatusReport = StagingStatus & {
  readonly lastDrain: DrainSummary | undefined;
  readonly pullRequest?: PullRequestView | null;
  readonly pullRequestError?: string;
};

/** The staging PR, or why it could not be read: status still shows the rest. */
async function pullRequestPart(
  context: CliContext,
  input: LifecycleInput,
  githubApi: string | undefined,
): Promise<Pick<StatusReport, 'pullRequest' | 'pullRequestError'>> {
  try {
    const target = await githubTarget(context, input, githubApi);
    return { pullRequest: (await pullRequestState(target, input.baseBranch)) ?? null };
  } catch (error) {
    return { pullRequestError: (error as Error).message };
  }
}

export function renderStatus(status: StatusReport): string {
  const lines = [
    `base     ${status.baseBranch} (${status.baseRef.replace(/^refs\//, '')}) ${status.base.slice(0, 12)}`,
    `staging  ${STAGING_BRANCH} ${status.staging ? `${status.staging.slice(0, 12)}: ${status.ahead} ahead, ${status.behind} behind` : 'does not exist yet'}`,
    `landed   ${status.landed.length}${status.landed.map((landing) => `\n  ${printableLine(landing.taskId)}  ${landing.commit.slice(0, 10)}  ${printableLine(landing.subject)}${landing.review ? `\n    review ${printableLine(landing.review)}` : ''}`).join('')}`,
    `parked   ${status.parked.length}${status.parked.map((task) => `\n  ${printableLine(task.id)}  ${printableLine(task.reason)}`).join('')}`,
    `blocked  ${status.blocked.length}${status.blocked.map((task) => `\n  ${printableLine(task.id)}  ${printableLine(task.reason)}`).join('')}`,
  ];
  if (status.pullRequest !== undefined || status.pullRequestError !== undefined) {
    const pr = status.pullRequest;
    if (status.pullRequestError !== undefined)
      lines.push(`pr       could not be read: ${printableLine(status.pullRequestError)}`);
    else if (!pr) lines.push('pr       none open');
    else {
      lines.push(
        `pr       #${pr.number} ${pr.merged ? 'merged' : pr.state}, ${pr.mergeable === null ? 'mergeable unknown' : pr.mergeable ? 'mergeable' : 'not mergeable'}: ${printableLine(pr.url)}`,
      );
      lines.push(
        `checks   on ${pr.headSha.slice(0, 12)}: ${pr.checks.length ? pr.checks.map((check) => `${printableLine(check.name)} ${printableLine(check.conclusion)}`).join(', ') : 'none reported'}`,
      );
    }
  }
  if (status.lastDrain) {
    lines.push(`last drain ${status.lastDrain.runId}: ${status.lastDrain.outcome} at ${status.lastDrain.endedAt}`);
    const table = renderTaskTable(status.lastDrain.tasks);
    if (table) lines.push(table.trimEnd());
  }
  return `${lines.join('\n')}\n`;
}
