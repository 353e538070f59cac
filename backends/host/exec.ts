// How host effects are launched. Everything the isolation backend runs is a
// Command (data); a CommandWrapper decides where it runs. In production that
// is the host itself; tests and `doctor --netns` wrap every command in
// `ip netns exec NS` so nft and Squid act inside a namespace, never on the
// host's own ruleset.
import type { Command } from '../../src/types.js';
import { ROOT_TOOLS_PATH } from '../../src/system-path.js';

export type CommandWrapper = (command: Command) => Command;

export const onHost: CommandWrapper = (command) => command;

/** Runs the command inside an existing network namespace (as root). */
export function inNetns(namespace: string): CommandWrapper {
  return (command) => ({
    ...command,
    program: 'ip',
    args: ['netns', 'exec', namespace, command.program, ...command.args],
    env: { ...command.env, PATH: command.env.PATH ?? ROOT_TOOLS_PATH },
  });
}

/** A root tool invocation with a minimal, fixed environment. */
export function systemCommand(program: string, args: readonly string[], cwd = '/', stdin?: string): Command {
  return {
    program,
    args: [...args],
    env: { PATH: ROOT_TOOLS_PATH, LANG: 'C.UTF-8' },
    cwd,
    ...(stdin === undefined ? {} : { stdin }),
  };
}

/** One line of a failed command's output, for error messages. */
export function describeFailure(result: {
  exitCode: number | null;
  signal: string | null;
  stderr: string;
  stdout: string;
}): string {
  const output = (result.stderr.trim() || result.stdout.trim()).split('\n').slice(-6).join('\n');
  const how = result.signal ? `signal ${result.signal}` : `exit ${result.exitCode}`;
  return output ? `${how}: ${output}` : how;
}
