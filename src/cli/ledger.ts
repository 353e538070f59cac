// agent-runner ledger [REPO] [--since DATE] [--by task|repo|day|model|run] [--json]:
// what agent sessions cost, from root's ledger ($STATE/repos/NAME/ledger/).
import type { Command } from 'commander';
import type { CliContext } from './context.js';
import { stateDir } from '../paths.js';
import { EXIT, UsageError } from '../errors.js';
import { REPO_NAME_PATTERN } from '../control/registry/parse.js';
import { LEDGER_GROUPS, type LedgerGroup } from '../control/ledger/totals.js';
import { gatherLedger, ledgerReport, renderLedger } from '../control/ledger/report.js';

interface LedgerOptions {
  since?: string;
  by: string;
  json?: boolean;
}

export function define(command: Command, context: CliContext, setExit: (code: number) => void): void {
  command
    .argument('[repo]', 'one registered repo (default: all)')
    .option('--since <date>', 'only sessions that ended on this UTC day (YYYY-MM-DD) or later')
    .option('--by <group>', `total per ${LEDGER_GROUPS.join(', ')}`, 'task')
    .option('--json', 'print the report as JSON')
    .action(async (repo: string | undefined, options: LedgerOptions) => {
      if (repo !== undefined && !REPO_NAME_PATTERN.test(repo))
        throw new UsageError(`"${repo}" is not a repo name (lowercase letters, digits and "-")`);
      if (!(LEDGER_GROUPS as readonly string[]).includes(options.by))
        throw new UsageError(`--by must be one of ${LEDGER_GROUPS.join(', ')}, not "${options.by}"`);
      if (
        options.since !== undefined &&
        (!/^\d{4}-\d{2}-\d{2}$/.test(options.since) || Number.isNaN(Date.parse(options.since)))
      ) {
        throw new UsageError(`--since must be a date like 2026-11-30, not "${options.since}"`);
      }
      const state = stateDir(context.env);
      let gathered;
      try {
        gathered = await gatherLedger(context.ports.fs, state, repo, options.since);
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code === 'EACCES' || code === 'EPERM')
          throw new UsageError(
            `cannot read the ledger under ${state}/repos: it is root's; run agent-runner ledger as root`,
          );
        throw error;
      }
      const report = ledgerReport(gathered.repos, gathered.records, options.by as LedgerGroup, options.since);
      context.out(options.json ? `${JSON.stringify(report, null, 2)}\n` : renderLedger(report));
      setExit(EXIT.ok);
    });
}
