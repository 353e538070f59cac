// agent-runner runs REPO|--workspace DIR [--json] [--limit N]: the run
// history, newest first: dispatched, watched and queued runs (root's run
// records) and drains run by hand (the workspace's drain history), each with
// its outcome table and what its agent sessions cost.
import type { Command } from 'commander';
import type { CliContext } from './context.js';
import { EXIT } from '../errors.js';
import { printableLine } from '../printable.js';
import { latestRuns } from '../control/runs/record.js';
import { readDrainHistory } from '../control/repo-view/workspace-files.js';
import { mergeRunHistory, type HistoryEntry, type RunHistory } from '../control/runs/history.js';
import { renderTaskTable } from './drain-output.js';
import { parsePositiveInt } from './options.js';
import { recordsTarget } from './records-target.js';
import { readLedger, type LedgerRecord } from '../control/ledger/index.js';

const DEFAULT_LIMIT = 20;
const MAX_LIMIT = 100_000;

/** The history of a repo or workspace: what `runs` prints and the dashboard's runs view shows. */
export async function readRunHistory(
  context: CliContext,
  repoName: string | undefined,
  workspace: string | undefined,
  limit: number,
): Promise<RunHistory> {
  const target = await recordsTarget(context, 'runs', repoName, workspace);
  const errors: string[] = [];
  const records = target.registered
    ? await latestRuns(context.ports.fs, target.registered.state, target.registered.repo.name, limit)
    : [];
  let drains: Awaited<ReturnType<typeof readDrainHistory>> = [];
  if (target.records) {
    try {
      drains = await readDrainHistory(context.ports.fs, target.records, limit);
    } catch (error) {
      errors.push(`drain history: ${(error as Error).message}`);
    }
  } else if (target.recordsError) errors.push(`drain history: ${target.recordsError}`);
  // Root's ledger prices the runs whose record carries no figures (a drain run by hand that root sealed).
  let ledger: LedgerRecord[] = [];
  if (target.registered)
    try {
      ledger = await readLedger(context.ports.fs, target.registered.state, target.registered.repo.name);
    } catch (error) {
      errors.push(`ledger: ${(error as Error).message}`);
    }
  return { target: target.label, runs: mergeRunHistory(records, drains, limit, ledger), errors };
}

function spend(entry: HistoryEntry): string {
  const own = `${entry.tokens === null ? '' : `, ${entry.tokens} tokens`}${entry.cost === null ? '' : `, cost ${entry.cost}`}`;
  const reported = entry.agentReported;
  if (!reported) return own;
  const same = reported.tokens === entry.tokens && reported.cost === entry.cost;
  return `${own} (metered${same ? '' : `; agents reported ${reported.tokens ?? '?'} tokens, ${reported.cost}`})`;
}

export function renderRunHistory(history: RunHistory): string {
  const out: string[] = [];
  if (!history.runs.length) out.push(`no runs recorded for ${history.target}`);
  for (const run of history.runs) {
    const who = run.trigger === 'job' && run.jobId ? `job ${run.jobId}` : run.trigger;
    const ended = run.endedAt ? `, ended ${run.endedAt}` : '';
    const exit = run.exitCode === null ? '' : `, exit ${run.exitCode}`;
    const c = run.counts;
    out.push(
      printableLine(
        `${run.id}  ${run.outcome}  by ${who}, started ${run.startedAt}${ended}${exit}: ${c.landed} landed, ${c.parked} parked, ${c.blocked} blocked, ${c.failed} failed${spend(run)}`,
      ),
    );
    if (run.detail) out.push(`  ${printableLine(run.detail)}`);
    if (run.budgetStop) out.push(`  ${printableLine(run.budgetStop)}`);
    const table = renderTaskTable(run.tasks);
    if (table) out.push(table.trimEnd().replace(/^/gm, '  '));
  }
  for (const error of history.errors) out.push(printableLine(`could not read: ${error}`));
  return `${out.join('\n')}\n`;
}

export function define(command: Command, context: CliContext, setExit: (code: number) => void): void {
  command
    .argument('[repo]', 'a repo name from the registry (as root)')
    .option('--workspace <dir>', 'a checkout: the drains run there by this user')
    .option('--limit <n>', 'at most this many runs, newest first', String(DEFAULT_LIMIT))
    .option('--json', 'print the history as JSON')
    .action(async (repoName: string | undefined, options: { workspace?: string; limit: string; json?: boolean }) => {
      const history = await readRunHistory(
        context,
        repoName,
        options.workspace,
        parsePositiveInt('--limit', options.limit, MAX_LIMIT),
      );
      context.out(options.json ? `${JSON.stringify(history, null, 2)}\n` : renderRunHistory(history));
      setExit(EXIT.ok);
    });
}
