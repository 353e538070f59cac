// A repo's metrics endpoint, owned by its watcher: it listens on
// 127.0.0.1:metrics_port while the registry names one (follow() after every
// registry read moves, opens or closes it), and answers GET /metrics with the
// repo's figures read from root's records at that moment. A port it cannot
// bind is said in the journal once per new problem and tried again on the
// next tick; the watcher goes on watching either way. Scrapes that arrive
// together share one reading of the records.
import type { Clock, FsPort, LoopbackAnswer, LoopbackHttp, LoopbackListener, ProcessPort } from '../../ports.js';
import type { RegistryRepo } from '../../types.js';
import { RepoRecords } from './records.js';
import { metricFamilies, type RepoFacts, type Source, type WatcherView } from './families.js';
import { exposition } from './exposition.js';

export const METRICS_PATH = '/metrics';

export interface MetricsDeps {
  readonly fs: FsPort;
  readonly process: ProcessPort;
  readonly clock: Clock;
  readonly loopbackHttp: LoopbackHttp;
  readonly state: string;
  /**
   * The agents of the repo running now, as the fleet counts them (control/fleet/agents.ts: the drain's records, read
   * without following links); passed in, since the fleet reads the watcher's status.
   */
  readonly runningAgents: (repo: RegistryRepo) => Promise<number>;
}

/** What the endpoint asks of its watcher. */
export interface MetricsWatcher {
  readonly name: string;
  status(): WatcherView;
  log(event: string, fields?: Record<string, unknown>): void;
}

export class MetricsEndpoint {
  private readonly records: RepoRecords;
  private listener: { port: number; server: LoopbackListener } | undefined;
  private repo: RegistryRepo | undefined;
  private lastProblem: string | undefined;
  private lastTickMs: number | undefined;
  private reading: Promise<LoopbackAnswer> | undefined;
  private closed = false;

  constructor(
    private readonly deps: MetricsDeps,
    private readonly watcher: MetricsWatcher,
  ) {
    this.records = new RepoRecords(deps, watcher.name);
  }

  /** The watcher's tick did its work without an error. */
  tickSucceeded(): void {
    this.lastTickMs = this.deps.clock.now();
  }

  /** Listens where the registry says now; never throws (a problem goes to the journal, once). */
  async follow(repo: RegistryRepo): Promise<void> {
    this.repo = repo;
    const port = repo.metricsPort;
    if (this.closed || this.listener?.port === port) return;
    await this.stopListening();
    if (port === undefined) return;
    try {
      const server = await this.deps.loopbackHttp.listen(port, (request) => this.answer(request.path));
      this.listener = { port, server };
      this.lastProblem = undefined;
      this.watcher.log('metrics-listening', { address: `127.0.0.1:${port}`, path: METRICS_PATH });
    } catch (error) {
      const problem = `metrics_port ${port}: ${(error as Error).message}`;
      if (problem !== this.lastProblem)
        this.watcher.log('metrics-not-served', {
          error: problem,
          fix: `free the port or set another metrics_port for repos.${this.watcher.name}; the watcher tries again every tick`,
        });
      this.lastProblem = problem;
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.stopListening();
  }

  private async stopListening(): Promise<void> {
    const listener = this.listener;
    this.listener = undefined;
    await listener?.server.close();
  }

  private answer(path: string): Promise<LoopbackAnswer> {
    if (path !== METRICS_PATH && path !== '/')
      return Promise.resolve({ status: 404, contentType: 'text/plain; charset=utf-8', body: `try ${METRICS_PATH}\n` });
    this.reading ??= this.scrape().finally(() => {
      this.reading = undefined;
    });
    return this.reading;
  }

  /** One reading of the records; a source that cannot be read is left out, said in the journal and in the body. */
  private async scrape(): Promise<LoopbackAnswer> {
    const unreadable = new Set<Source>();
    const attempt = async <T>(source: Source, read: () => Promise<T>): Promise<T | undefined> => {
      try {
        return await read();
      } catch (error) {
        unreadable.add(source);
        this.watcher.log('metrics-source-unreadable', { source, error: (error as Error).message });
        return undefined;
      }
    };
    const runs = await attempt('runs', () => this.records.runs());
    const running = runs?.running ?? this.watcher.status().state === 'running';
    const repo = this.repo;
    const facts: RepoFacts = {
      repo: this.watcher.name,
      nowMs: this.deps.clock.now(),
      runs: runs?.runs ?? this.records.seenRuns(),
      running,
      ledger: await attempt('ledger', () => this.records.ledger()),
      queued: await attempt('queue', () => this.records.queued()),
      runningAgents: !running ? 0 : repo ? await attempt('agents', () => this.deps.runningAgents(repo)) : undefined,
      watcher: this.watcher.status(),
      lastSuccessfulTickMs: this.lastTickMs,
    };
    const { contentType, body } = await exposition(metricFamilies(facts, unreadable));
    return { status: 200, contentType, body };
  }
}
