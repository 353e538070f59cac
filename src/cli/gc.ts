// agent-runner gc: remove task worktrees and branches that a drain keeps for
// inspection (parked tasks) or that a crash left, and everything older than
// the retention (transcripts, drain summaries; as root with --repo also the
// run records and finished jobs in root's state dir, never a running run's).
// Takes the drain lock, so nothing is running while it cleans.
// --retention-only keeps the worktrees and branches (the watcher's daily pass).
// Asks first on a terminal, listing what goes (consent.ts); --yes, --dry-run.
import type { Command } from 'commander';
import type { CliContext } from './context.js';
import { EXIT } from '../errors.js';
import { removeAllTaskBranches, type LifecycleInput } from '../staging/lifecycle.js';
import { listTaskBranches } from '../staging/task-branches.js';
import { lifecycleInput, withWorkspaceLock } from './lifecycle-input.js';
import { routeLifecycle } from './lifecycle-route.js';
import { parsePositiveInt } from './options.js';
import { DEFAULT_RETENTION_DAYS, MAX_RETENTION_DAYS, retentionDays } from '../control/retention/policy.js';
import {
  describePruned,
  NOTHING_PRUNED,
  pruneRootRecords,
  pruneWorkspaceRecords,
  type Pruned,
} from '../control/retention/prune.js';
import { findRepo } from '../control/registry/parse.js';
import { loadRegistry } from './root-support.js';
import { workspaceStateDir } from '../paths.js';
import { printableLine } from '../printable.js';
import { askToGoOn, consentFlag, consentStep, planWhereItRuns } from './consent.js';
import { lifecycleChoice, targetFlags } from './target.js';
import { withExamples } from './help.js';

interface GcOptions {
  workspace?: string;
  repo?: string;
  json?: boolean;
  retentionOnly?: boolean;
  retentionDays?: string;
  yes?: boolean;
  dryRun?: boolean;
}

/** What a gc would remove. `--dry-run --json` prints it. */
export interface GcPlan {
  readonly workspace: string;
  readonly taskBranches: readonly string[];
  readonly expired: Pruned;
  readonly retentionDays: number;
}

async function readGcPlan(
  context: CliContext,
  input: LifecycleInput,
  retentionOnly: boolean,
  days: number,
  now: number,
): Promise<GcPlan> {
  const state = workspaceStateDir(input.stateDir, input.workspace);
  return {
    workspace: input.workspace,
    taskBranches: retentionOnly ? [] : await listTaskBranches(input.git, input.workspace),
    expired: { ...NOTHING_PRUNED, ...(await pruneWorkspaceRecords(context.ports.fs, state, days, now, true)) },
    retentionDays: days,
  };
}

/** Pure: the plan as lines; undefined when nothing would go. */
export function gcPlanLines(label: string, plan: GcPlan): string[] | undefined {
  const e = plan.expired;
  if (!plan.taskBranches.length && !(e.transcripts + e.runRecords + e.drains + e.jobs)) return undefined;
  return [
    `gc ${label} removes:`,
    `  task branches and worktrees: ${plan.taskBranches.length ? plan.taskBranches.map((branch) => printableLine(branch)).join(', ') : 'none'}`,
    `  older than ${plan.retentionDays} days: ${e.transcripts} transcript(s), ${e.runRecords} run record(s), ${e.drains} drain summary(ies), ${e.jobs} finished job(s)`,
  ];
}

function addPruned(a: Pruned, b: Partial<Pruned>): Pruned {
  return {
    runRecords: a.runRecords + (b.runRecords ?? 0),
    jobs: a.jobs + (b.jobs ?? 0),
    transcripts: a.transcripts + (b.transcripts ?? 0),
    drains: a.drains + (b.drains ?? 0),
  };
}

export function define(command: Command, context: CliContext, setExit: (code: number) => void): void {
  targetFlags(command)
    .option(
      '--retention-days <n>',
      `remove records older than this (default: the registry's retention_days, else ${DEFAULT_RETENTION_DAYS})`,
    )
    .option('--retention-only', 'only remove old records; keep task worktrees and branches')
    .option('-y, --yes', 'do not ask: remove (what a script or a terminal-less caller passes)')
    .option('--dry-run', 'print what would be removed and change nothing')
    .option('--json', 'print the result (with --dry-run, the plan) as JSON')
    .action(async (options: GcOptions) => {
      const choice = lifecycleChoice('gc', options);
      const step = consentStep('gc', options, context.ask !== undefined);
      const now = context.ports.clock.now();
      let days =
        options.retentionDays === undefined
          ? undefined
          : parsePositiveInt('--retention-days', options.retentionDays, MAX_RETENTION_DAYS);
      // Root's own records of the repo are root's to remove, here; the workspace's go with the repo user below.
      let rootRecords: { name: string; state: string } | undefined;
      if (context.uid === 0 && choice.repo !== undefined) {
        const { registry, registryFile, state } = await loadRegistry(context);
        const repo = findRepo(registry, choice.repo, registryFile);
        days ??= retentionDays(repo);
        rootRecords = { name: repo.name, state };
      }
      days ??= DEFAULT_RETENTION_DAYS;
      const forward = [
        'gc',
        '--retention-days',
        String(days),
        ...(options.retentionOnly ? ['--retention-only'] : []),
      ] as const;
      const pruneRoot = (dryRun: boolean) =>
        rootRecords
          ? pruneRootRecords(context.ports.fs, rootRecords.state, rootRecords.name, days, now, dryRun)
          : Promise.resolve({});
      if (step === 'ask') {
        const plan = await planWhereItRuns(context, choice, forward, async (workspace) =>
          readGcPlan(
            context,
            await lifecycleInput(context, workspace, false),
            Boolean(options.retentionOnly),
            days,
            now,
          ),
        );
        if (typeof plan === 'number') return setExit(plan);
        const lines = gcPlanLines(choice.repo ?? plan.workspace, {
          ...plan,
          expired: addPruned(plan.expired, await pruneRoot(true)),
        });
        if (lines && !(await askToGoOn(context, 'gc', lines, `gc ${choice.repo ?? plan.workspace}? y / n `)))
          return setExit(EXIT.failed);
      }
      const rootPruned = addPruned(NOTHING_PRUNED, await pruneRoot(step === 'plan'));
      if (rootRecords && !options.json)
        context.out(
          `${rootRecords.name} (root's records): ${step === 'plan' ? `would remove ${rootPruned.runRecords} run record(s), ${rootPruned.jobs} finished job(s)` : describePruned(rootPruned, days)}\n`,
        );
      const route = await routeLifecycle(context, choice, [
        ...forward,
        consentFlag(step),
        ...(options.json ? ['--json'] : []),
      ]);
      if (route.kind === 'ran-as-user') return setExit(route.exitCode);
      const input = await lifecycleInput(context, route.workspace, false);
      if (step === 'plan') {
        const plan = await readGcPlan(context, input, Boolean(options.retentionOnly), days, now);
        const full = { ...plan, expired: addPruned(plan.expired, rootPruned) };
        context.out(
          options.json
            ? `${JSON.stringify(full)}\n`
            : `${(gcPlanLines(full.workspace, full) ?? [`gc ${full.workspace}: nothing to remove`]).join('\n')}\n(dry run: nothing changed)\n`,
        );
        return setExit(EXIT.ok);
      }
      const result = await withWorkspaceLock(context, input, 'gc', async () => ({
        removed: options.retentionOnly ? [] : await removeAllTaskBranches(input),
        pruned: addPruned(
          rootPruned,
          await pruneWorkspaceRecords(context.ports.fs, workspaceStateDir(input.stateDir, input.workspace), days, now),
        ),
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
  withExamples(command, [
    ['agent-runner gc --repo web', 'list what goes, ask, then remove it'],
    ['agent-runner gc --workspace . --retention-days 7 --yes', 'no question: for scripts'],
    ['agent-runner gc --repo web --dry-run --json', 'the plan only, as JSON'],
  ]);
}
