// A run's usage as root keeps it: before the run, the budgets and the
// ledger's totals handed to orchestrate; after it, the sessions of
// orchestrate's summary sealed into the ledger and the run's total for its
// record. Root reads the summary from the pipe it holds, never from a file
// the repo user can write. A run its broker metered already has its
// responses in the ledger; its record's figures are those (the ledger's one
// counting rule), with the agents' report beside.
import type { FsPort } from '../../ports.js';
import type { RegistryRepo } from '../../types.js';
import type { SpendPolicy } from '../../spend/policy.js';
import { SPEND_DEFAULTS, utcDay } from '../../spend/verdict.js';
import { appendLedger, figureTokens, readLedger, sealRun, ledgerTotal, spendPolicyFor } from '../ledger/index.js';
import { parseOrchestrateSummary, type RunRecord, type RunUsage } from '../runs/index.js';

/** The spend policy for a run starting now: per-task totals only when a task budget needs them. */
export async function spendForRun(fs: FsPort, state: string, repo: RegistryRepo, now: number): Promise<SpendPolicy> {
  const limits = repo.spend ?? SPEND_DEFAULTS;
  const records = await readLedger(fs, state, repo.name, limits.taskUsd === undefined ? utcDay(now) : undefined);
  return spendPolicyFor(limits, records, now);
}

/** Seals the run's sessions into the ledger; returns what its record says about them. */
export async function sealRunUsage(
  fs: FsPort,
  state: string,
  run: RunRecord,
  stdout: string,
  sealedAt: string,
): Promise<Pick<RunRecord, 'usage' | 'budgetStop'>> {
  const summary = parseOrchestrateSummary(stdout);
  const records = sealRun({
    repo: run.repo,
    runId: run.id,
    startedAt: run.startedAt,
    endedAt: run.endedAt ?? sealedAt,
    summary,
    sealedAt,
  });
  await appendLedger(fs, state, run.repo, records);
  // Read back from the run's first day: the broker's records of this run landed there and after.
  const ofRun = (await readLedger(fs, state, run.repo, utcDay(Date.parse(run.startedAt)))).filter(
    (record) => record.run === run.id,
  );
  const total = ledgerTotal(ofRun);
  const reported = total.agentReported;
  const usage: RunUsage = {
    sessions: total.sessions,
    costUsd: total.costUsd,
    unknownCost: total.unknownCost,
    tokens: figureTokens(total),
    ...(total.metered && {
      metered: {
        responses: total.metered.records,
        agentReported: {
          costUsd: reported?.costUsd ?? 0,
          unknownCost: reported?.unknownCost ?? 0,
          tokens: reported ? figureTokens(reported) : 0,
        },
      },
    }),
  };
  const budgetStop = typeof summary?.budgetStop === 'string' ? summary.budgetStop.slice(0, 300) : undefined;
  return { usage, ...(budgetStop ? { budgetStop } : {}) };
}
