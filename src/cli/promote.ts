// Placeholder until the command is built; it says so instead of pretending.
import type { Command } from 'commander';
import type { CliContext } from './context.js';
import { UsageError } from '../errors.js';

export function define(command: Command, _context: CliContext): void {
  command.allowUnknownOption().action(() => {
    throw new UsageError('"promote" is not built yet');
  });
}
