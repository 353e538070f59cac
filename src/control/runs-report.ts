// agent-runner runs as data: a repo's newest run records, each with what its
// agent sessions cost (the total root sealed into the ledger) and a daily
// budget stop when there was one. renderRuns is pure.
import { printableLine } from '../printable.js';
import type { RunRecord } from './runs.js';
import { describeCost } from './ledger-totals.js';

export interface RunsReport {
  readonly repos: readonly { readonly repo: string; readonly runs: readonly RunRecord[] }[];
}

/** "$0.42", "$0.42 + 1 unknown", "unknown", "-" (the run predates the ledger or is still running). */
export function runCost(run: RunRecord): string {
  return run.usage ? describeCost(run.usage) : '-';
}

/** Pure: one line per run, newest first, under each repo. */
export function renderRuns(report: RunsReport): string {
  const header = ['REPO', 'RUN', 'TRIGGER', 'OUTCOME', 'STARTED', 'TASKS', 'SESSIONS', 'COST'];
  const rows = report.repos.flatMap(({ repo, runs }) =>
    runs.map((run) => [
      repo,
      run.id,
      run.trigger,
      printableLine(run.outcome ?? run.status),
      run.startedAt.slice(0, 19).replace('T', ' '),
      String((run.tasks ?? []).filter((task) => task.outcome === 'landed').length) + ' landed',
      run.usage ? String(run.usage.sessions) : '-',
      runCost(run),
    ]),
  );
  if (!rows.length) return 'no runs recorded\n';
  const widths = header.map((title, i) => Math.max(title.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: readonly string[]) => cells.map((cell, i) => cell.padEnd(widths[i]!)).join('  ').trimEnd();
  const notes = report.repos.flatMap(({ repo, runs }) => runs.filter((run) => run.budgetStop).map((run) => `${repo} ${run.id}: ${printableLine(run.budgetStop!)}`));
  return `${[line(header), ...rows.map(line), ...notes].join('\n')}\n`;
}
