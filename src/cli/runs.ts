// agent-runner runs --repo NAME|--workspace DIR [--json] [--limit N] [--since WHEN]: the run
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
import { resolveTarget, targetOptions } from './target.js';
import { parseSince } from './since.js';
import { withExamples } from './help.js';
import { readLedger, type LedgerRecord } from '../control/ledger/index.js';

const DEFAULT_LIMIT = 20;
const MAX_LIMIT = 100_000;

/** The history of a repo or workspace: what `runs` prints and the dashboard's runs view shows. */
export async function readRunHistory(
  context: CliContext,
  repoName: string | undefined,
  workspace: string | undefined,
  limit: number,
  /** Only runs that ended at or after this instant (epoch ms), or have not ended. */
  since?: number,
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
  const runs = mergeRunHistory(records, drains, limit, ledger).filter(
    (run) => since === undefined || run.endedAt === null || Date.parse(run.endedAt) >= since,
  );
  return { target: target.label, runs, errors };
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

interface RunsOptions {
  repo?: string;
  workspace?: string;
  since?: string;
  limit: string;
  json?: boolean;
}

export function define(command: Command, context: CliContext, setExit: (code: number) => void): void {
  withExamples(command, [
    ['agent-runner runs --repo web --since yesterday', "as root: a registered repo's runs since yesterday (UTC)"],
    ['agent-runner runs --workspace . --limit 5 --json', 'the drains run by hand in your checkout, as JSON'],
  ])
    .argument('[repo]', 'the same as --repo NAME')
    .option('--repo <name>', 'a repo from the registry (as root)')
    .option('--workspace <dir>', 'a checkout: the drains run there by this user')
    .option('--since <when>', 'only runs that ended since: 90m, 2h, 3d, yesterday, 2026-12-01, 2026-12-01T10:00 (UTC)')
    .option('--limit <n>', 'at most this many runs, newest first', String(DEFAULT_LIMIT))
    .option('--json', 'print the history as JSON')
    .action(async (positional: string | undefined, options: RunsOptions) => {
      const choice = targetOptions(
        resolveTarget('runs', { ...options, positional }, { workspace: true, required: true }),
      );
      const history = await readRunHistory(
        context,
        choice.repo,
        choice.workspace,
        parsePositiveInt('--limit', options.limit, MAX_LIMIT),
        options.since === undefined ? undefined : parseSince('--since', options.since, context.ports.clock.now()),
      );
      context.out(options.json ? `${JSON.stringify(history, null, 2)}\n` : renderRunHistory(history));
      setExit(EXIT.ok);
    });
}
