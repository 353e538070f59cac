// agent-runner broker-serve: the provider broker of one run. Not for operators: dispatch starts it as root with its
// control socket on fd 3 (src/control/broker/), and it drops to the broker identity itself (src/io/broker/serve.ts).
import type { Command } from 'commander';
import type { CliContext } from './context.js';
import { UsageError } from '../errors.js';

export function define(command: Command, context: CliContext, setExit: (code: number) => void): void {
  command.action(async () => {
    if (!context.openLauncherChannel || !context.serveBroker)
      throw new UsageError('broker-serve: this process cannot open its control socket on fd 3');
    setExit(
      await context.serveBroker({
        channel: context.openLauncherChannel(3),
        log: (line) => context.err(`${line}\n`),
        stop: context.terminate,
      }),
    );
  });
}
