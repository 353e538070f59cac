// agent-runner ledger as data: which repos, from which day, grouped how;
// the rows and the total, and the table people read. gatherLedger reads,
// ledgerReport and renderLedger are pure.
import type { FsPort } from '../../ports.js';
import { reposStateDir } from '../../paths.js';
import { REPO_NAME_PATTERN } from '../registry/index.js';
import { readLedger, type LedgerRecord } from './ledger.js';
import { describeCost, ledgerTotal, ledgerTotals, type LedgerGroup, type LedgerTotal } from './totals.js';

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

const tokens = (count: number, unknown: number, sessions: number) =>
  sessions > 0 && unknown === sessions ? '?' : `${count}${unknown ? '+?' : ''}`;

/** Pure: the table; unknown values show as "?" or "+ N unknown", never as 0. */
export function renderLedger(report: LedgerReport): string {
  const header = [
    report.by.toUpperCase(),
    'SESSIONS',
    'INPUT',
    'OUTPUT',
    'CACHE READ',
    'CACHE WRITE',
    'COST',
    'WALL',
    'RATE LIMITED',
  ];
  const cells = (row: LedgerTotal) => [
    row.key,
    String(row.sessions),
    tokens(row.inputTokens, row.unknownTokens, row.sessions),
    tokens(row.outputTokens, row.unknownTokens, row.sessions),
    tokens(row.cacheReadTokens, row.unknownTokens, row.sessions),
    tokens(row.cacheWriteTokens, row.unknownTokens, row.sessions),
    describeCost(row),
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
  return `${[line(header), ...report.rows.map((row) => line(cells(row))), line(rows.at(-1)!)].join('\n')}\n(${scope}; "?" is a value the agent CLI did not report)\n`;
}
