// agent-runner ledger [--repo NAME|--workspace DIR] [--since WHEN] [--by task|repo|day|model|run] [--json]:
// what agent sessions cost, from root's ledger ($STATE/repos/NAME/ledger/).
import type { Command } from 'commander';
import type { CliContext } from './context.js';
import { stateDir } from '../paths.js';
import { EXIT, UsageError } from '../errors.js';
import { registeredTarget, resolveTarget } from './target.js';
import { parseSince, utcDayOf } from './since.js';
import { withExamples } from './help.js';
import { LEDGER_GROUPS, type LedgerGroup } from '../control/ledger/totals.js';
import { gatherLedger, ledgerReport, renderLedger } from '../control/ledger/report.js';

interface LedgerOptions {
  repo?: string;
  workspace?: string;
  since?: string;
  by: string;
  json?: boolean;
}

export function define(command: Command, context: CliContext, setExit: (code: number) => void): void {
  withExamples(command, [
    ['agent-runner ledger --since 3d --by day', 'every repo, the last three days, a row per day'],
    ['agent-runner ledger --repo web --since 2026-12-01 --json', 'one repo since a UTC day, as JSON'],
  ])
    .argument('[repo]', 'the same as --repo NAME')
    .option('--repo <name>', 'one registered repo (default: all)')
    .option('--workspace <dir>', 'the path of a registered repo (the same as --repo with its name)')
    .option(
      '--since <when>',
      'only sessions that ended since: 90m, 2h, 3d, yesterday, 2026-12-01, 2026-12-01T10:00 (UTC)',
    )
    .option('--by <group>', `total per ${LEDGER_GROUPS.join(', ')}`, 'task')
    .option('--json', 'print the report as JSON')
    .action(async (positional: string | undefined, options: LedgerOptions) => {
      const target = resolveTarget('ledger', { ...options, positional }, { workspace: true, required: false });
      if (!(LEDGER_GROUPS as readonly string[]).includes(options.by))
        throw new UsageError(`--by must be one of ${LEDGER_GROUPS.join(', ')}, not "${options.by}"`);
      const since =
        options.since === undefined ? undefined : parseSince('--since', options.since, context.ports.clock.now());
      const repo =
        target.kind === 'repo'
          ? target.name
          : target.kind === 'workspace'
            ? (await registeredTarget(context, 'ledger', target)).repo.name
            : undefined;
      const state = stateDir(context.env);
      let gathered;
      try {
        gathered = await gatherLedger(context.ports.fs, state, repo, since === undefined ? undefined : utcDayOf(since));
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code === 'EACCES' || code === 'EPERM')
          throw new UsageError(
            `cannot read the ledger under ${state}/repos: it is root's; run agent-runner ledger as root`,
          );
        throw error;
      }
      // The ledger is filed by UTC day: the day files from since's day on, then the records from since itself on.
      const records =
        since === undefined
          ? gathered.records
          : gathered.records.filter((record) => Date.parse(record.endedAt) >= since);
      const report = ledgerReport(
        gathered.repos,
        records,
        options.by as LedgerGroup,
        since === undefined ? undefined : new Date(since).toISOString(),
      );
      context.out(options.json ? `${JSON.stringify(report, null, 2)}\n` : renderLedger(report));
      setExit(EXIT.ok);
    });
}
