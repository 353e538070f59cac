// agent-runner runs [REPO] [--last N] [--json]: a repo's newest runs, each
// with its total cost (as root: the run records are root's).
import type { Command } from 'commander';
import type { CliContext } from './context.js';
import { stateDir, reposStateDir } from '../paths.js';
import { EXIT, UsageError } from '../errors.js';
import { REPO_NAME_PATTERN } from '../control/registry/parse.js';
import { latestRuns } from '../control/runs.js';
import { renderRuns, type RunsReport } from '../control/runs-report.js';
import { parsePositiveInt } from './options.js';

export function define(command: Command, context: CliContext, setExit: (code: number) => void): void {
  command
    .argument('[repo]', 'one repo (default: every repo with run records)')
    .option('--last <n>', 'how many runs per repo, newest first', '10')
    .option('--json', 'print the run records as JSON')
    .action(async (repo: string | undefined, options: { last: string; json?: boolean }) => {
      if (repo !== undefined && !REPO_NAME_PATTERN.test(repo)) throw new UsageError(`"${repo}" is not a repo name (lowercase letters, digits and "-")`);
      const last = parsePositiveInt('--last', options.last, 1000);
      const { fs } = context.ports;
      const state = stateDir(context.env);
      let report: RunsReport;
      try {
        const names = repo ? [repo] : (await fs.list(reposStateDir(state))).filter((name) => REPO_NAME_PATTERN.test(name)).sort();
        report = { repos: await Promise.all(names.map(async (name) => ({ repo: name, runs: await latestRuns(fs, state, name, last) }))) };
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code === 'EACCES' || code === 'EPERM') throw new UsageError(`cannot read the run records under ${state}/repos: they are root's; run agent-runner runs as root`);
        throw error;
      }
      context.out(options.json ? `${JSON.stringify(report, null, 2)}\n` : renderRuns(report));
      setExit(EXIT.ok);
    });
}
