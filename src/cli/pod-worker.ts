// agent-runner pod-worker: the program of a task Job's agent container
// (backends/kubernetes/worker/). Not for a terminal: every line it prints is
// JSON for the drain, which reads the pod's log as the task's transcript.
import type { Command } from 'commander';
import type { CliContext } from './context.js';
import { runPodWorker } from '../../backends/kubernetes/worker/index.js';

export function define(command: Command, context: CliContext, setExit: (code: number) => void): void {
  command
    .addHelpText(
      'after',
      '\nRun by a task Job in its clone, with the Job\'s environment (docs/kubernetes-runtime.md, "The pod\'s side").\nExit codes: 0 done and pushed, 2 settings, 3 clone not at the base, 4 setup failed, 5 agent failed, 6 blocked, 7 push refused.\n',
    )
    .action(async () => {
      setExit(
        await runPodWorker(
          { ports: context.ports, cwd: context.cwd, out: (line) => context.out(`${line}\n`) },
          context.env,
        ),
      );
    });
}
