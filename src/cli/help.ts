// What --help adds under each command (examples) and `agent-runner help
// exit-codes`: the exit table as operators read it, from EXIT_MEANINGS.
import type { Command } from 'commander';
import { EXIT_MEANINGS } from '../errors.js';

/** Adds an "Examples:" block to the command's --help: each a command line and what it does. */
export function withExamples(command: Command, examples: readonly (readonly [string, string])[]): Command {
  const width = Math.max(...examples.map(([line]) => line.length));
  return command.addHelpText(
    'after',
    `\nExamples:\n${examples.map(([line, what]) => `  ${line.padEnd(width)}  # ${what}`).join('\n')}\n`,
  );
}

/** Pure: `agent-runner help exit-codes`. */
export function exitCodeTable(): string {
  const rows = EXIT_MEANINGS.map(({ code, meaning }) => `  ${String(code).padStart(3)}  ${meaning}`);
  return `Exit codes of agent-runner (every command):\n${rows.join('\n')}\n`;
}
