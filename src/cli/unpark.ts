// agent-runner unpark TASK [--workspace DIR | --repo NAME]: take the parked
// label off a task on auto/work (staging/unpark.ts). As root on a registered
// repo it runs as the repo's user, like promote and discard.
import type { Command } from 'commander';
import type { CliContext } from './context.js';
import { EXIT, UsageError } from '../errors.js';
import { isSafeTaskId } from '../board/parse.js';
import { unparkTask } from '../drain/staging-board/unpark.js';
import { lifecycleInput, withWorkspaceLock } from './lifecycle-input.js';
import { routeLifecycle } from './lifecycle-route.js';
import { lifecycleChoice, targetFlags } from './target.js';
import { withExamples } from './help.js';

const EXAMPLES = [
  ['agent-runner unpark TASK-3 --repo web', 'give TASK-3 its tries back'],
  ['agent-runner unpark TASK-3 --workspace .', 'the same in your own checkout'],
] as const;

export function define(command: Command, context: CliContext, setExit: (code: number) => void): void {
  withExamples(targetFlags(command), EXAMPLES)
    .argument('<task>', 'the parked task, e.g. TASK-3')
    .option('--json', 'print the result as JSON')
    .action(async (taskId: string, options: { workspace?: string; repo?: string; json?: boolean }) => {
      if (!isSafeTaskId(taskId)) throw new UsageError(`"${taskId}" is not a task id (e.g. TASK-3)`);
      const route = await routeLifecycle(context, lifecycleChoice('unpark', options), [
        'unpark',
        taskId,
        ...(options.json ? ['--json'] : []),
      ]);
      if (route.kind === 'ran-as-user') return setExit(route.exitCode);
      const input = await lifecycleInput(context, route.workspace, false);
      const result = await withWorkspaceLock(context, input, 'unpark', () => unparkTask(input, taskId));
      context.out(options.json ? `${JSON.stringify(result)}\n` : `${result.detail}\n`);
      setExit(EXIT.ok);
    });
}
