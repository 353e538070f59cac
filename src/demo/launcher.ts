// The demo's launcher: the local launcher (one user plays the runner, the
// agent and the gate), except that a command which is a model session
// (Command.modelSessionOf) starts the way root's launcher starts one: with a
// capability the broker grants for its task and the demo user's uid, the
// broker's variables laid over the command's own (no provider login passes),
// revoked when it exits. Every other command starts as it always does.
import type { Command } from '../types.js';
import type { ProcessPort } from '../ports.js';
import { localLauncher, type Launcher } from '../launch/index.js';
import { startWithCapability, type RunBroker } from '../control/broker/index.js';
import { withCapability } from '../agent/broker-env.js';

/** `process`, with model sessions started through the broker. */
export function brokeredProcess(
  process: ProcessPort,
  broker: Pick<RunBroker, 'url' | 'grant' | 'revoke'>,
  uid: number,
): ProcessPort {
  return {
    run: (command) => process.run(command),
    startTimeOf: (pid) => process.startTimeOf(pid),
    which: (program, pathVariable) => process.which(program, pathVariable),
    start(command, handlers, options) {
      const task = command.modelSessionOf;
      if (task === undefined) return process.start(command, handlers, options);
      return startWithCapability({
        broker,
        task,
        uid,
        handlers,
        begin: (brokerEnv) => process.start(sessionCommand(command, brokerEnv), handlers, options),
      });
    },
  };
}

/** Pure: the session's command with the broker's variables over its own, less any provider login. */
export function sessionCommand(command: Command, brokerEnv: Readonly<Record<string, string>>): Command {
  return { ...command, env: withCapability(command.env, brokerEnv) };
}

export function demoLauncher(
  process: ProcessPort,
  broker: Pick<RunBroker, 'url' | 'grant' | 'revoke'>,
  uid: number,
): Launcher {
  return localLauncher(brokeredProcess(process, broker, uid));
}
