// agent-runner tui [--interval SEC] [--once]: the fleet dashboard. It reads
// exactly what `fleet --json` reads; the blessed layer is imported only when
// this command runs, so other commands never pay for loading it.
import type { Command } from 'commander';
import type { CliContext } from './context.js';
import { EXIT, UsageError } from '../errors.js';
import { registryFile, stateDir } from '../paths.js';
import { gatherFleet, type Fleet } from '../control/fleet/fleet.js';
import type { BoardSnapshot } from '../control/repo-view/board.js';
import { installPaths } from './root-support.js';
import { fleetRecords } from './records-target.js';

const DEFAULT_INTERVAL_SEC = 2;
const MIN_INTERVAL_SEC = 0.5;
const MAX_INTERVAL_SEC = 3600;

/** --interval: seconds between reads, fractions allowed. */
export function parseInterval(value: string): number {
  const sec = Number(value);
  if (!/^\d+(\.\d+)?$/.test(value) || sec < MIN_INTERVAL_SEC || sec > MAX_INTERVAL_SEC) {
    throw new UsageError(
      `--interval must be a number of seconds from ${MIN_INTERVAL_SEC} to ${MAX_INTERVAL_SEC}, not "${value}"`,
    );
  }
  return sec;
}

export function define(command: Command, context: CliContext, setExit: (code: number) => void): void {
  command
    .option('--interval <sec>', 'seconds between refreshes', String(DEFAULT_INTERVAL_SEC))
    .option('--once', 'print one frame as plain text and exit (for scripts; exit 2 on registry problems, like fleet)')
    .action(async (options: { interval: string; once?: boolean }) => {
      const intervalSec = parseInterval(options.interval);
      const { fs, process, clock, locks, scheduler } = context.ports;
      const snapshots = new Map<string, BoardSnapshot>();
      const records = fleetRecords(context);
      const loadFleet = (): Promise<Fleet> =>
        gatherFleet(
          { fs, process, locks, scheduler, snapshots, records },
          registryFile(context.env),
          stateDir(context.env),
          clock.now(),
        );
      if (options.once) {
        const { buildView, renderFrameText } = await import('../../tui/view-model.js');
        const fleet = await loadFleet();
        const now = clock.now();
        context.out(
          renderFrameText(buildView(fleet, null, now, { lastReadAt: now, error: null, reading: false, intervalSec })),
        );
        setExit(fleet.problems.length ? EXIT.usage : EXIT.ok);
        return;
      }
      if (!context.stdoutIsTTY)
        throw new UsageError('tui needs a terminal on stdout; use "tui --once" or "fleet --json" in scripts');
      const { runDashboard } = await import('../../tui/dashboard.js');
      const { consoleServices } = await import('./tui-services.js');
      const services = consoleServices(context, await installPaths(context));
      await runDashboard({ loadFleet, services, clock, intervalSec, terminate: context.terminate });
      setExit(EXIT.ok);
    });
}
