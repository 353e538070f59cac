// agent-runner discard: reset auto/work to the base branch, publish that, and
// remove task branches and worktrees (parked ones too). Asks first on a
// terminal, listing what goes in the dashboard's words (consent.ts).
import type { Command } from 'commander';
import type { CliContext } from './context.js';
import { EXIT } from '../errors.js';
import { discard, stagingStatus, type LifecycleInput, type StagingStatus } from '../staging/lifecycle.js';
import { listTaskBranches } from '../staging/task-branches.js';
import { STAGING_BRANCH } from '../staging/names.js';
import { lifecycleInput, withWorkspaceLock } from './lifecycle-input.js';
import { routeLifecycle } from './lifecycle-route.js';
import { askToGoOn, consentFlag, consentStep, planWhereItRuns } from './consent.js';
import { lifecycleChoice, targetFlags } from './target.js';
import { discardConfirmation } from '../../tui/repo-view.js';
import { printableLine } from '../printable.js';
import { withExamples } from './help.js';

interface DiscardOptions {
  workspace?: string;
  repo?: string;
  json?: boolean;
  yes?: boolean;
  dryRun?: boolean;
}

/** What a discard would drop: staging as it is and the task branches. `--dry-run --json` prints it. */
export interface DiscardPlan extends StagingStatus {
  readonly workspace: string;
  readonly taskBranches: readonly string[];
}

async function readDiscardPlan(input: LifecycleInput): Promise<DiscardPlan> {
  return {
    ...(await stagingStatus(input)),
    workspace: input.workspace,
    taskBranches: await listTaskBranches(input.git, input.workspace),
  };
}

/** Pure: the plan in the dashboard's words, and the question; nothing to ask when there is nothing to drop. */
export function discardQuestion(label: string, plan: DiscardPlan): { lines: string[]; question: string } | undefined {
  const confirmation = discardConfirmation(label, plan);
  if ('nothing' in confirmation && !plan.taskBranches.length) return undefined;
  const lines = 'lines' in confirmation ? confirmation.lines.slice(0, -2) : [confirmation.nothing];
  if (plan.taskBranches.length)
    lines.push('', `task branches removed: ${plan.taskBranches.map((branch) => printableLine(branch)).join(', ')}`);
  return { lines, question: `discard ${label}? y / n ` };
}

export function define(command: Command, context: CliContext, setExit: (code: number) => void): void {
  targetFlags(command)
    .option('-y, --yes', 'do not ask: discard (what a script or a terminal-less caller passes)')
    .option('--dry-run', 'print what would be dropped and change nothing')
    .option('--json', 'print the result (with --dry-run, the plan) as JSON')
    .action(async (options: DiscardOptions) => {
      const choice = lifecycleChoice('discard', options);
      const step = consentStep('discard', options, context.ask !== undefined);
      if (step === 'ask') {
        const plan = await planWhereItRuns(context, choice, ['discard'], async (workspace) =>
          readDiscardPlan(await lifecycleInput(context, workspace, true)),
        );
        if (typeof plan === 'number') return setExit(plan);
        const asking = discardQuestion(choice.repo ?? plan.workspace, plan);
        if (asking && !(await askToGoOn(context, 'discard', asking.lines, asking.question)))
          return setExit(EXIT.failed);
      }
      const forward = ['discard', consentFlag(step), ...(options.json ? ['--json'] : [])] as const;
      const route = await routeLifecycle(context, choice, forward);
      if (route.kind === 'ran-as-user') return setExit(route.exitCode);
      const input = await lifecycleInput(context, route.workspace, true);
      if (step === 'plan') {
        const plan = await readDiscardPlan(input);
        const shown = discardQuestion(plan.workspace, plan);
        context.out(
          options.json
            ? `${JSON.stringify(plan)}\n`
            : `${shown ? shown.lines.join('\n') : `discard ${plan.workspace}: nothing to drop`}\n(dry run: nothing changed)\n`,
        );
        return setExit(EXIT.ok);
      }
      const result = await withWorkspaceLock(context, input, 'discard', () => discard(input));
      context.out(
        options.json
          ? `${JSON.stringify(result)}\n`
          : `${STAGING_BRANCH} ${result.discarded ? 'reset' : 'already'} at ${input.baseBranch} (${result.to.slice(0, 10)})${result.pushed ? ', pushed' : ''}; removed ${result.removedBranches.length} task branch(es)\n`,
      );
      setExit(EXIT.ok);
    });
  withExamples(command, [
    ['agent-runner discard --repo web', 'list what goes, ask, then reset auto/work'],
    ['agent-runner discard --workspace . --dry-run --json', 'the plan only, as JSON'],
  ]);
}
