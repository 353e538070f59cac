// What a scrape reads of a repo, kept between scrapes so that a scrape costs
// next to nothing on a long history: a finished run record never changes, so
// it is read once; a ledger day file is read again only when its size or
// mtime moved. A run record that retention removes keeps counting in this
// process (counters must not fall); a new watcher starts from the records on
// disk, which Prometheus sees as a counter reset only if retention removed
// some meanwhile.
import type { FsPort, ProcessPort } from '../../ports.js';
import { ledgerFile } from '../../paths.js';
import { listRunIds, readRun } from '../runs/index.js';
import { ledgerDays, parseLedger } from '../ledger/index.js';
import { Spool } from '../jobs/index.js';
import { addLedgerFacts, ledgerFacts, NO_LEDGER, runFacts, type LedgerFacts, type RunFacts } from './facts.js';

export interface RecordDeps {
  readonly fs: FsPort;
  readonly process: ProcessPort;
  readonly state: string;
}

export interface RunsRead {
  readonly runs: readonly RunFacts[];
  readonly running: boolean;
}

export class RepoRecords {
  /** Finished runs by id; never dropped (see above). */
  private readonly finished = new Map<string, RunFacts>();
  private readonly days = new Map<string, { size: number; mtimeMs: number; facts: LedgerFacts }>();
  private readonly spool: Spool;

  constructor(
    private readonly deps: RecordDeps,
    readonly name: string,
  ) {
    this.spool = new Spool(deps.fs, deps.state, name);
  }

  /** Every finished run seen, and whether a record says a run is in progress. */
  async runs(): Promise<RunsRead> {
    let running = false;
    for (const id of await listRunIds(this.deps.fs, this.deps.state, this.name)) {
      if (this.finished.has(id)) continue;
      const record = await readRun(this.deps.fs, this.deps.state, this.name, id);
      if (!record) continue;
      const facts = runFacts(record);
      if (facts) this.finished.set(id, facts);
      else running = true;
    }
    return { runs: [...this.finished.values()], running };
  }

  /** The finished runs read so far, for a scrape that cannot list the records now. */
  seenRuns(): RunFacts[] {
    return [...this.finished.values()];
  }

  /** The ledger's figures, every day of it. */
  async ledger(): Promise<LedgerFacts> {
    let total = NO_LEDGER;
    for (const day of await ledgerDays(this.deps.fs, this.deps.state, this.name)) {
      const file = ledgerFile(this.deps.state, this.name, day);
      const stat = await this.deps.fs.stat(file);
      if (!stat) continue;
      let cached = this.days.get(day);
      if (cached?.size !== stat.size || cached.mtimeMs !== stat.mtimeMs) {
        const facts = ledgerFacts(parseLedger((await this.deps.fs.readTextIfExists(file)) ?? ''));
        cached = { size: stat.size, mtimeMs: stat.mtimeMs, facts };
        this.days.set(day, cached);
      }
      total = addLedgerFacts(total, cached.facts);
    }
    return total;
  }

  async queued(): Promise<number> {
    return (await this.spool.ids('queue')).length;
  }
}
