// agent-runner gc: remove task worktrees and branches that a drain keeps for
// inspection (parked tasks) or that a crash left, and everything older than
// the retention (transcripts, drain summaries; as root with --repo also the
// run records and finished jobs in root's state dir, never a running run's).
// Takes the drain lock, so nothing is running while it cleans.
// --retention-only keeps the worktrees and branches (the watcher's daily pass).
import type { Command } from 'commander';
import type { CliContext } from './context.js';
import { EXIT } from '../errors.js';
import { removeAllTaskBranches } from '../staging/lifecycle.js';
import { lifecycleInput, withWorkspaceLock } from './lifecycle-input.js';
import { routeLifecycle } from './lifecycle-route.js';
import { parsePositiveInt } from './options.js';
import { DEFAULT_RETENTION_DAYS, MAX_RETENTION_DAYS, retentionDays } from '../control/retention/policy.js';
import { describePruned, NOTHING_PRUNED, pruneRootRecords, pruneWorkspaceRecords } from '../control/retention/prune.js';
import { findRepo } from '../control/registry/parse.js';
import { loadRegistry } from './root-support.js';
import { workspaceStateDir } from '../paths.js';

interface GcOptions {
  workspace?: string;
  repo?: string;
  json?: boolean;
  retentionOnly?: boolean;
  retentionDays?: string;
}

export function define(command: Command, context: CliContext, setExit: (code: number) => void): void {
  command
    .option('--workspace <dir>', 'the git checkout (default: the current directory)')
    .option('--repo <name>', "a repo from the registry (as root: runs as the repo's user)")
    .option(
      '--retention-days <n>',
      `remove records older than this (default: the registry's retention_days, else ${DEFAULT_RETENTION_DAYS})`,
    )
    .option('--retention-only', 'only remove old records; keep task worktrees and branches')
    .option('--json', 'print the result as JSON')
    .action(async (options: GcOptions) => {
      const now = context.ports.clock.now();
      let days =
        options.retentionDays === undefined
          ? undefined
          : parsePositiveInt('--retention-days', options.retentionDays, MAX_RETENTION_DAYS);
      let rootPruned = NOTHING_PRUNED;
      if (context.uid === 0 && options.repo !== undefined) {
        // Root's own records of the repo first, here; the workspace's records go with the repo user below.
        const { registry, registryFile, state } = await loadRegistry(context);
        const repo = findRepo(registry, options.repo, registryFile);
        days ??= retentionDays(repo);
        rootPruned = { ...NOTHING_PRUNED, ...(await pruneRootRecords(context.ports.fs, state, repo.name, days, now)) };
        if (!options.json) context.out(`${repo.name} (root's records): ${describePruned(rootPruned, days)}\n`);
      }
      days ??= DEFAULT_RETENTION_DAYS;
      const forward = [
        '--retention-days',
        String(days),
        ...(options.retentionOnly ? ['--retention-only'] : []),
        ...(options.json ? ['--json'] : []),
      ];
      const route = await routeLifecycle(context, options, ['gc', ...forward]);
      if (route.kind === 'ran-as-user') return setExit(route.exitCode);
      const input = await lifecycleInput(context, route.workspace, false);
      const result = await withWorkspaceLock(context, input, 'gc', async () => ({
        removed: options.retentionOnly ? [] : await removeAllTaskBranches(input),
        pruned: {
          ...rootPruned,
          ...(await pruneWorkspaceRecords(
            context.ports.fs,
            workspaceStateDir(input.stateDir, input.workspace),
            days,
            now,
          )),
        },
      }));
      if (options.json) context.out(`${JSON.stringify({ ...result, retentionDays: days })}\n`);
      else {
        if (!options.retentionOnly)
          context.out(
            result.removed.length ? `removed ${result.removed.join(', ')}\n` : 'no task branches to remove\n',
          );
        context.out(`${describePruned(result.pruned, days)}\n`);
      }
      setExit(EXIT.ok);
    });
}
