// agent-runner gc: remove task worktrees and branches that a drain keeps for
// inspection (parked tasks) or that a crash left. Takes the drain lock, so
// nothing is running while it cleans.
import type { Command } from 'commander';
import type { CliContext } from './context.js';
import { EXIT } from '../errors.js';
import { removeAllTaskBranches } from '../staging/lifecycle.js';
import { lifecycleInput, withWorkspaceLock } from './lifecycle-input.js';
import { routeLifecycle } from './lifecycle-route.js';

export function define(command: Command, context: CliContext, setExit: (code: number) => void): void {
  command
    .option('--workspace <dir>', 'the git checkout (default: the current directory)')
    .option('--repo <name>', "a repo from the registry (as root: runs as the repo's user)")
    .option('--json', 'print the result as JSON')
    .action(async (options: { workspace?: string; repo?: string; json?: boolean }) => {
      const route = await routeLifecycle(context, options, ['gc', ...(options.json ? ['--json'] : [])]);
      if (route.kind === 'ran-as-user') return setExit(route.exitCode);
      const input = await lifecycleInput(context, route.workspace, false);
      const removed = await withWorkspaceLock(context, input, 'gc', () => removeAllTaskBranches(input));
      context.out(options.json ? `${JSON.stringify({ removed })}\n` : removed.length ? `removed ${removed.join(', ')}\n` : 'nothing to remove\n');
      setExit(EXIT.ok);
    });
}
