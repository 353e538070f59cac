// agent-runner fleet [--json]: every registered repo at a glance. Exit 0 even
// when some repo is broken (that is what it reports); 2 when the registry has
// problems, after printing what it could.
import type { Command } from 'commander';
import type { CliContext } from './context.js';
import { registryFile, stateDir } from '../paths.js';
import { gatherFleet, renderFleetHuman } from '../control/fleet/fleet.js';
import { EXIT } from '../errors.js';
import { fleetRecords } from './records-target.js';

export function define(command: Command, context: CliContext, setExit: (code: number) => void): void {
  command
    .option('--json', 'print the fleet as JSON (the shape the dashboard reads)')
    .action(async (options: { json?: boolean }) => {
      const { fs, process, clock, locks, scheduler } = context.ports;
      const fleet = await gatherFleet(
        { fs, process, locks, scheduler, records: fleetRecords(context) },
        registryFile(context.env),
        stateDir(context.env),
        clock.now(),
      );
      context.out(options.json ? `${JSON.stringify(fleet, null, 2)}\n` : renderFleetHuman(fleet));
      setExit(fleet.problems.length ? EXIT.usage : EXIT.ok);
    });
}
