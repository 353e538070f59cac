// A repo's notifications as its watcher sees them: the watcher says what
// changed (its hold, why it skipped the repo, a run that ended) and goes on;
// here, one change at a time and off the watcher's path, the facts are read
// (new run records, staging's count), the events derived (derive.ts),
// redacted, spooled, and the sender kicked. Nothing here throws into the
// watcher: a failure is logged.
import type { ControlPorts } from '../../ports.js';
import type { RegistryRepo } from '../../types.js';
import { latestRuns, type RunRecord } from '../runs/index.js';
import { revListLeftRightCount } from '../../git/outsider.js';
import { eventsOfRun, eventsOfWatcher, type StagingFacts, type WatcherFacts } from './derive.js';
import type { NotifyEvent } from './kinds.js';
import { Outbox, type OutboxFacts } from './outbox.js';
import { NotifySender, SEND_POLICY, type SendPolicy } from './sender.js';

/** Run records read back when a run ends: more than one run can end between two looks only after a crash. */
const RUNS_LOOKED_AT = 20;
/** Delivered and failed files are kept this long for dedup, then pruned at the watcher's start. */
const KEEP_SETTLED_MS = 30 * 86_400_000;
const COMMIT = /^[0-9a-f]{40}([0-9a-f]{24})?$/;

export interface NotifierDeps extends Pick<ControlPorts, 'fs' | 'process' | 'clock' | 'notifyPosts'> {
  readonly state: string;
  log(event: string, fields: Record<string, unknown>): void;
  /** The watcher's redaction (the repo user's credentials out), applied to every string of an event. */
  redact(repo: RegistryRepo | undefined, text: string): Promise<string>;
}

/** What the watcher tells: only the fields it names changed. */
export interface NotifierChange {
  /** The repo as the registry has it now (its webhooks); absent when the registry could not be read. */
  readonly repo?: RegistryRepo;
  readonly hold?: WatcherFacts['hold'] | null;
  readonly skipped?: WatcherFacts['skipped'] | null;
  /** A run ended: look for new run records. */
  readonly runEnded?: boolean;
}

export class RepoNotifier {
  private readonly outbox: Outbox;
  private readonly sender: NotifySender;
  private repo: RegistryRepo | undefined;
  private facts: OutboxFacts = { watcher: {} };
  private chain: Promise<void> = Promise.resolve();
  private started = false;

  constructor(
    private readonly deps: NotifierDeps,
    readonly name: string,
    policy: SendPolicy = SEND_POLICY,
  ) {
    this.outbox = new Outbox(deps.fs, deps.state, name);
    this.sender = new NotifySender(deps, this.outbox, policy);
  }

  /** Reads what was last told (a first start tells no past run), prunes old settled files, starts the sender. */
  async start(repo: RegistryRepo): Promise<void> {
    this.repo = repo;
    const facts = await this.outbox.readFacts();
    if (facts) this.facts = facts;
    else {
      const newest = (await latestRuns(this.deps.fs, this.deps.state, this.name, 1))[0];
      this.facts = { watcher: {}, ...(newest ? { lastRunId: newest.id } : {}) };
      await this.outbox.writeFacts(this.facts);
    }
    await this.outbox.ensure();
    await this.outbox.prune(this.deps.clock.now() - KEEP_SETTLED_MS);
    this.started = true;
    this.sender.start();
  }

  /** Takes a change and returns at once; changes are applied in order, one at a time. */
  observe(change: NotifierChange): void {
    // Before start (a crashed predecessor being repaired) nothing is known yet to compare with.
    if (!this.started) return;
    this.chain = this.chain
      .then(() => this.apply(change))
      .catch((error: Error) => this.deps.log('notify-failed', { error: error.message }));
  }

  /** Resolves when every change so far is spooled (tests, and stop). */
  settled(): Promise<void> {
    return this.chain;
  }

  async stop(): Promise<void> {
    await this.chain;
    await this.sender.stop();
  }

  private async apply(change: NotifierChange): Promise<void> {
    if (change.repo) this.repo = change.repo;
    const at = new Date(this.deps.clock.now()).toISOString();
    const previous = this.facts.watcher;
    const watcher: WatcherFacts = {
      ...previous,
      ...(change.hold === undefined ? {} : { hold: change.hold ?? undefined }),
      ...(change.skipped === undefined ? {} : { skipped: change.skipped ?? undefined }),
    };
    const events = eventsOfWatcher(this.name, previous, watcher, at);
    let lastRunId = this.facts.lastRunId;
    if (change.runEnded) {
      const runs = await this.newRuns();
      for (const run of runs) events.push(...eventsOfRun(run, await this.stagingOf(run)));
      lastRunId = runs.at(-1)?.id ?? lastRunId;
    }
    const next: OutboxFacts = { ...(lastRunId === undefined ? {} : { lastRunId }), watcher: stripUndefined(watcher) };
    const hooks = this.repo?.notify ?? [];
    if (events.length && hooks.length) {
      const redacted = await Promise.all(events.map((event) => this.redactEvent(event)));
      const spooled = await this.outbox.spool(redacted, hooks, at);
      if (spooled.length) {
        this.deps.log('notify-spooled', { events: [...new Set(spooled.map((delivery) => delivery.event.kind))] });
        this.sender.kick();
      }
    }
    if (JSON.stringify(next) !== JSON.stringify(this.facts)) {
      await this.outbox.writeFacts(next);
      this.facts = next;
    }
  }

  /** Finished runs newer than the last one told, oldest first. */
  private async newRuns(): Promise<RunRecord[]> {
    const last = this.facts.lastRunId;
    const runs = await latestRuns(this.deps.fs, this.deps.state, this.name, RUNS_LOOKED_AT);
    return runs.filter((run) => (last === undefined || run.id > last) && run.status !== 'running').reverse();
  }

  /** Staging as the run left it, counted by root's read-only git; the count is left out when git cannot say. */
  private async stagingOf(run: RunRecord): Promise<StagingFacts | undefined> {
    const staging = run.staging;
    // The record's commits come from the repo user's drain: only plain commit names reach git's argv.
    if (!staging || !COMMIT.test(staging.base) || !COMMIT.test(staging.head)) return undefined;
    if (staging.base === staging.head) return { base: staging.base, head: staging.head, ahead: 0 };
    if (!this.repo || !(this.repo.notify ?? []).length)
      return { base: staging.base, head: staging.head, ahead: undefined };
    const counts = await this.deps.process
      .run(revListLeftRightCount(this.repo.path, staging.base, staging.head))
      .catch(() => undefined);
    const ahead = counts?.exitCode === 0 ? Number(counts.stdout.trim().split(/\s+/)[1]) : Number.NaN;
    return { base: staging.base, head: staging.head, ahead: Number.isInteger(ahead) ? ahead : undefined };
  }

  private async redactEvent(event: NotifyEvent): Promise<NotifyEvent> {
    const walk = async (value: unknown): Promise<unknown> => {
      if (typeof value === 'string') return this.deps.redact(this.repo, value);
      if (Array.isArray(value)) return Promise.all(value.map(walk));
      if (value && typeof value === 'object')
        return Object.fromEntries(
          await Promise.all(Object.entries(value).map(async ([key, item]) => [key, await walk(item)] as const)),
        );
      return value;
    };
    return {
      ...event,
      summary: await this.deps.redact(this.repo, event.summary),
      details: (await walk(event.details)) as NotifyEvent['details'],
    };
  }
}

function stripUndefined(facts: WatcherFacts): WatcherFacts {
  return { ...(facts.hold ? { hold: facts.hold } : {}), ...(facts.skipped ? { skipped: facts.skipped } : {}) };
}
