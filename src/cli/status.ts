// agent-runner status: base and staging, landed, parked and blocked tasks,
// and the last drain's summary.
import { printableLine } from '../printable.js';
import type { Command } from 'commander';
import type { CliContext } from './context.js';
import { EXIT } from '../errors.js';
import { stagingStatus, type StagingStatus } from '../staging/lifecycle.js';
import { lifecycleInput } from './lifecycle-input.js';
import { routeLifecycle } from './lifecycle-route.js';
import { renderTaskTable } from './drain-output.js';
import { STAGING_BRANCH } from '../staging/names.js';
import { readLastDrain } from '../drain/records.js';
import type { DrainSummary } from '../drain/types.js';
import { workspaceStateDir } from '../paths.js';

export function define(command: Command, context: CliContext, setExit: (code: number) => void): void {
  command
    .option('--workspace <dir>', 'the git checkout (default: the current directory)')
    .option('--repo <name>', "a repo from the registry (as root: runs as the repo's user)")
    .option('--no-fetch', 'do not fetch origin first')
    .option('--json', 'print the status as JSON')
    .action(async (options: { workspace?: string; repo?: string; fetch: boolean; json?: boolean }) => {
      const route = await routeLifecycle(context, options, ['status', ...(options.fetch ? [] : ['--no-fetch']), ...(options.json ? ['--json'] : [])]);
      if (route.kind === 'ran-as-user') return setExit(route.exitCode);
      const input = await lifecycleInput(context, route.workspace, options.fetch);
      const status: StatusReport = { ...(await stagingStatus(input)), lastDrain: await readLastDrain(context.ports.fs, workspaceStateDir(input.stateDir, input.workspace)) };
      context.out(options.json ? `${JSON.stringify(status, null, 2)}\n` : renderStatus(status));
      setExit(EXIT.ok);
    });
}

/** Staging as it is, and what the last drain did. */
export type StatusReport = StagingStatus & { readonly lastDrain: DrainSummary | undefined };

export function renderStatus(status: StatusReport): string {
  const lines = [
    `base     ${status.baseBranch} (${status.baseRef.replace(/^refs\//, '')}) ${status.base.slice(0, 12)}`,
    `staging  ${STAGING_BRANCH} ${status.staging ? `${status.staging.slice(0, 12)}: ${status.ahead} ahead, ${status.behind} behind` : 'does not exist yet'}`,
    `landed   ${status.landed.length}${status.landed.map((landing) => `\n  ${printableLine(landing.taskId)}  ${landing.commit.slice(0, 10)}  ${printableLine(landing.subject)}`).join('')}`,
    `parked   ${status.parked.length}${status.parked.map((task) => `\n  ${printableLine(task.id)}  ${printableLine(task.reason)}`).join('')}`,
    `blocked  ${status.blocked.length}${status.blocked.map((task) => `\n  ${printableLine(task.id)}  ${printableLine(task.reason)}`).join('')}`,
  ];
  if (status.lastDrain) {
    lines.push(`last drain ${status.lastDrain.runId}: ${status.lastDrain.outcome} at ${status.lastDrain.endedAt}`);
    const table = renderTaskTable(status.lastDrain.tasks);
    if (table) lines.push(table.trimEnd());
  }
  return `${lines.join('\n')}\n`;
}
