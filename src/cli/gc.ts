// agent-runner gc: remove task worktrees and branches that a drain keeps for
// inspection (parked tasks) or that a crash left. Takes the drain lock, so
// nothing is running while it cleans.
import type { Command } from 'commander';
import type { CliContext } from './context.js';
import { removeAllTaskBranches } from '../lifecycle.js';
import { lifecycleInput, withWorkspaceLock } from './lifecycle-input.js';

export function define(command: Command, context: CliContext, setExit: (code: number) => void): void {
  command
    .option('--workspace <dir>', 'the git checkout')
    .option('--json', 'print the result as JSON')
    .action(async (options: { workspace?: string; json?: boolean }) => {
      const input = await lifecycleInput(context, options.workspace, false);
      const removed = await withWorkspaceLock(context, input, 'gc', () => removeAllTaskBranches(input));
      context.out(options.json ? `${JSON.stringify({ removed })}\n` : removed.length ? `removed ${removed.join(', ')}\n` : 'nothing to remove\n');
      setExit(0);
    });
}
