// agent-runner discard: reset auto/work to the base branch, publish that, and
// remove task branches and worktrees (parked ones too).
import type { Command } from 'commander';
import type { CliContext } from './context.js';
import { EXIT } from '../errors.js';
import { discard } from '../staging/lifecycle.js';
import { STAGING_BRANCH } from '../staging/names.js';
import { lifecycleInput, withWorkspaceLock } from './lifecycle-input.js';
import { routeLifecycle } from './lifecycle-route.js';

export function define(command: Command, context: CliContext, setExit: (code: number) => void): void {
  command
    .option('--workspace <dir>', 'the git checkout (default: the current directory)')
    .option('--repo <name>', "a repo from the registry (as root: runs as the repo's user)")
    .option('--json', 'print the result as JSON')
    .action(async (options: { workspace?: string; repo?: string; json?: boolean }) => {
      const route = await routeLifecycle(context, options, ['discard', ...(options.json ? ['--json'] : [])]);
      if (route.kind === 'ran-as-user') return setExit(route.exitCode);
      const input = await lifecycleInput(context, route.workspace, true);
      const result = await withWorkspaceLock(context, input, 'discard', () => discard(input));
      context.out(
        options.json
          ? `${JSON.stringify(result)}\n`
          : `${STAGING_BRANCH} ${result.discarded ? 'reset' : 'already'} at ${input.baseBranch} (${result.to.slice(0, 10)})${result.pushed ? ', pushed' : ''}; removed ${result.removedBranches.length} task branch(es)\n`,
      );
      setExit(EXIT.ok);
    });
}
