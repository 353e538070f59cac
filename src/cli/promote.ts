// agent-runner promote: fast-forward the base branch to auto/work and push it.
import type { Command } from 'commander';
import type { CliContext } from './context.js';
import { EXIT } from '../errors.js';
import { promote } from '../staging/lifecycle.js';
import { lifecycleInput, withWorkspaceLock } from './lifecycle-input.js';
import { routeLifecycle } from './lifecycle-route.js';

export function define(command: Command, context: CliContext, setExit: (code: number) => void): void {
  command
    .option('--workspace <dir>', 'the git checkout (default: the current directory)')
    .option('--repo <name>', "a repo from the registry (as root: runs as the repo's user)")
    .option('--json', 'print the result as JSON')
    .action(async (options: { workspace?: string; repo?: string; json?: boolean }) => {
      const route = await routeLifecycle(context, options, ['promote', ...(options.json ? ['--json'] : [])]);
      if (route.kind === 'ran-as-user') return setExit(route.exitCode);
      const input = await lifecycleInput(context, route.workspace, true);
      const result = await withWorkspaceLock(context, input, 'promote', () => promote(input));
      context.out(options.json ? `${JSON.stringify(result)}\n` : `${result.detail}${result.pushed ? `; pushed ${input.baseBranch}` : ''}\n`);
      setExit(EXIT.ok);
    });
}
