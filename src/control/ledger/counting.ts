// The one rule for summing the ledger, used by every total, every budget
// figure and every run's usage: a run with broker records has its tokens and
// USD from those records only, because the broker metered each provider
// response itself; the drain's reports of that run still count its sessions,
// and their figures are kept apart as what the agent reported, never added.
// A run without broker records counts its drain's reports, as it always has.
// The rule looks at the records it is given: a caller that reads from a day
// on decides on the runs of those days. Pure.
import type { LedgerRecord, SessionLedgerRecord } from './ledger.js';

/** The records whose tokens and USD count, and the reports shown beside (their runs were metered). */
export interface CountedLedger {
  readonly counted: readonly LedgerRecord[];
  readonly agentReported: readonly SessionLedgerRecord[];
}

const runOf = (record: LedgerRecord) => `${record.repo} ${record.run}`;

/** Pure: the records split by the rule above, each side in the order given. */
export function countLedger(records: readonly LedgerRecord[]): CountedLedger {
  const metered = new Set(records.filter((record) => record.source === 'broker').map(runOf));
  const counted: LedgerRecord[] = [];
  const agentReported: SessionLedgerRecord[] = [];
  for (const record of records) {
    if (record.source !== 'broker' && metered.has(runOf(record))) agentReported.push(record);
    else counted.push(record);
  }
  return { counted, agentReported };
}
