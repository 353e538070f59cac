// agent-runner ledger as data: which repos, from which day, grouped how;
// the rows and the total, and the table people read. gatherLedger reads,
// ledgerReport and renderLedger are pure.
import type { FsPort } from '../../ports.js';
import { reposStateDir } from '../../paths.js';
import { REPO_NAME_PATTERN } from '../registry/index.js';
import { readLedger, type LedgerRecord } from './ledger.js';
import {
  describeCost,
  figureTokens,
  ledgerTotal,
  ledgerTotals,
  type LedgerGroup,
  type LedgerTotal,
  type UsageFigures,
} from './totals.js';

export interface LedgerReport {
  readonly repos: readonly string[];
  readonly since: string | null;
  readonly by: LedgerGroup;
  readonly rows: readonly LedgerTotal[];
  readonly total: LedgerTotal;
}

/** The records of one repo, or of every repo root keeps state for. */
export async function gatherLedger(
  fs: FsPort,
  state: string,
  repo: string | undefined,
  since: string | undefined,
): Promise<{ repos: string[]; records: LedgerRecord[] }> {
  const repos = repo
    ? [repo]
    : (await fs.list(reposStateDir(state))).filter((name) => REPO_NAME_PATTERN.test(name)).sort();
  const records: LedgerRecord[] = [];
  for (const name of repos) records.push(...(await readLedger(fs, state, name, since)));
  return { repos, records };
}

/** Pure. */
export function ledgerReport(
  repos: readonly string[],
  records: readonly LedgerRecord[],
  by: LedgerGroup,
  since: string | undefined,
): LedgerReport {
  return { repos, since: since ?? null, by, rows: ledgerTotals(records, by), total: ledgerTotal(records) };
}

const tokens = (count: number, unknown: number, records: number) =>
  records > 0 && unknown === records ? '?' : `${count}${unknown ? '+?' : ''}`;

const sameFigures = (a: UsageFigures, b: UsageFigures) =>
  figureTokens(a) === figureTokens(b) &&
  a.unknownTokens === b.unknownTokens &&
  a.costUsd === b.costUsd &&
  a.unknownCost === b.unknownCost;

/** What the agents reported for a row's metered runs: "-" for none, "same" when it matches the metering. */
function agentReportedCell(row: LedgerTotal): string {
  const reported = row.agentReported;
  if (reported === null) return '-';
  if (row.metered !== null && sameFigures(reported, row.metered)) return 'same';
  return `${tokens(figureTokens(reported), reported.unknownTokens, reported.records)} tokens, ${describeCost(reported)}`;
}

/**
 * Pure: the table; unknown values show as "?" or "+ N unknown", never as 0. When any run was metered by its broker,
 * an AGENT REPORTED column shows beside what the agents said for those runs.
 */
export function renderLedger(report: LedgerReport): string {
  const metered = report.total.source !== 'agent';
  const header = [
    report.by.toUpperCase(),
    'SESSIONS',
    'INPUT',
    'OUTPUT',
    'CACHE READ',
    'CACHE WRITE',
    'COST',
    ...(metered ? ['AGENT REPORTED'] : []),
    'WALL',
    'RATE LIMITED',
  ];
  // A row of only metered runs' sessions (the drain's model names) has its figures in the broker's rows.
  const figure = (row: LedgerTotal, text: string) => (row.records === 0 && row.agentReported !== null ? '-' : text);
  const cells = (row: LedgerTotal) => [
    row.key,
    String(row.sessions),
    figure(row, tokens(row.inputTokens, row.unknownTokens, row.records)),
    figure(row, tokens(row.outputTokens, row.unknownTokens, row.records)),
    figure(row, tokens(row.cacheReadTokens, row.unknownTokens, row.records)),
    figure(row, tokens(row.cacheWriteTokens, row.unknownTokens, row.records)),
    figure(row, describeCost(row)),
    ...(metered ? [agentReportedCell(row)] : []),
    `${Math.round(row.wallMs / 1000)}s`,
    String(row.rateLimited),
  ];
  const rows = [...report.rows.map(cells), cells(report.total)];
  const widths = header.map((title, i) => Math.max(title.length, ...rows.map((row) => row[i]!.length)));
  const line = (row: readonly string[]) =>
    row
      .map((cell, i) => cell.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  const scope = `${report.repos.length === 1 ? `repo ${report.repos[0]}` : `${report.repos.length} repos`}${report.since ? ` since ${report.since}` : ''}`;
  if (!report.rows.length) return `no agent sessions in the ledger (${scope})\n`;
  const note = metered
    ? `${scope}; runs with broker records count the broker's metering, and AGENT REPORTED is what their agent CLIs said; "?" is a value not reported`
    : `${scope}; "?" is a value the agent CLI did not report`;
  return `${[line(header), ...report.rows.map((row) => line(cells(row))), line(rows.at(-1)!)].join('\n')}\n(${note})\n`;
}
