// agent-runner promote: fast-forward the base branch to auto/work and push it.
import type { Command } from 'commander';
import type { CliContext } from './context.js';
import { promote } from '../lifecycle.js';
import { lifecycleInput, withWorkspaceLock } from './lifecycle-input.js';

export function define(command: Command, context: CliContext, setExit: (code: number) => void): void {
  command
    .option('--workspace <dir>', 'the git checkout')
    .option('--json', 'print the result as JSON')
    .action(async (options: { workspace?: string; json?: boolean }) => {
      const input = await lifecycleInput(context, options.workspace, true);
      const result = await withWorkspaceLock(context, input, 'promote', () => promote(input));
      context.out(options.json ? `${JSON.stringify(result)}\n` : `${result.detail}${result.pushed ? `; pushed ${input.baseBranch}` : ''}\n`);
      setExit(0);
    });
}
