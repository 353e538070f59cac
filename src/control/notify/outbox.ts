// The outbox: one file per delivery (an event for one webhook) under
// <state>/repos/NAME/notify/, root-only like the rest of repos/NAME (the
// files hold the webhook's URL). pending/ waits to be sent, delivered/ and
// failed/ are kept, so an event spooled again (the same key for the same
// webhook) is never sent twice; facts.json is what events were last derived
// from. Every write is atomic, so a restart finds each file whole.
import { createHash } from 'node:crypto';
import * as path from 'node:path';
import type { FsPort } from '../../ports.js';
import type { NotifyFormat, NotifyHook } from '../../types.js';
import { repoStateDir } from '../../paths.js';
import { ensureRepoStateDir, ROOT_ONLY_DIR_MODE } from '../state-dirs.js';
import { TEST_EVENT_KIND, type NotifyEvent } from './kinds.js';
import type { WatcherFacts } from './derive.js';

export type OutboxFolder = 'pending' | 'delivered' | 'failed';
const FOLDERS: readonly OutboxFolder[] = ['pending', 'delivered', 'failed'];

export interface Delivery {
  readonly v: 1;
  /** The file's name without .json: a hash of the event's key and the webhook's URL. */
  readonly id: string;
  readonly event: NotifyEvent;
  readonly hook: { readonly url: string; readonly format: NotifyFormat };
  readonly createdAt: string;
  /** Tries made so far. */
  readonly attempts: number;
  /** Not sent before this (ISO). */
  readonly nextAt: string;
  /** Why the last try failed, without the URL's path or query. */
  readonly lastError?: string;
  readonly deliveredAt?: string;
  readonly gaveUpAt?: string;
}

/** What events were last derived from: the newest run already told, and the watcher's facts. */
export interface OutboxFacts {
  readonly lastRunId?: string;
  readonly watcher: WatcherFacts;
}

export function outboxDir(state: string, repo: string): string {
  return path.join(repoStateDir(state, repo), 'notify');
}

/** The delivery's id: the same event for the same webhook is always the same file. */
export function deliveryId(eventKey: string, url: string): string {
  return createHash('sha256').update(`${eventKey}\n${url}`).digest('hex').slice(0, 32);
}

/** Pure: whether a webhook takes this event (a test event goes to every webhook). */
export function hookWants(hook: NotifyHook, event: NotifyEvent): boolean {
  return event.kind === TEST_EVENT_KIND || hook.events.includes(event.kind);
}

export class Outbox {
  readonly dir: string;

  constructor(
    private readonly fs: FsPort,
    private readonly state: string,
    readonly repo: string,
  ) {
    this.dir = outboxDir(state, repo);
  }

  private file(folder: OutboxFolder, id: string): string {
    return path.join(this.dir, folder, `${id}.json`);
  }

  async ensure(): Promise<void> {
    await ensureRepoStateDir(this.fs, this.state, this.repo);
    await this.fs.mkdirp(this.dir, ROOT_ONLY_DIR_MODE);
    for (const folder of FOLDERS) await this.fs.mkdirp(path.join(this.dir, folder), ROOT_ONLY_DIR_MODE);
  }

  /** Spools each event for each webhook that takes it, unless it was spooled before; returns the new deliveries. */
  async spool(events: readonly NotifyEvent[], hooks: readonly NotifyHook[], now: string): Promise<Delivery[]> {
    if (!events.length || !hooks.length) return [];
    await this.ensure();
    const spooled: Delivery[] = [];
    for (const event of events)
      for (const hook of hooks) {
        if (!hookWants(hook, event)) continue;
        const id = deliveryId(event.key, hook.url);
        if (await this.known(id)) continue;
        const delivery: Delivery = {
          v: 1,
          id,
          event,
          hook: { url: hook.url, format: hook.format },
          createdAt: now,
          attempts: 0,
          nextAt: now,
        };
        await this.write('pending', delivery);
        spooled.push(delivery);
      }
    return spooled;
  }

  private async known(id: string): Promise<boolean> {
    for (const folder of FOLDERS) if ((await this.fs.stat(this.file(folder, id))) !== undefined) return true;
    return false;
  }

  private async write(folder: OutboxFolder, delivery: Delivery): Promise<void> {
    await this.fs.writeAtomic(this.file(folder, delivery.id), `${JSON.stringify(delivery, null, 2)}\n`, 0o600);
  }

  /** The deliveries in a folder, oldest first; unreadable files are skipped (root wrote them; a torn one cannot be). */
  async list(folder: OutboxFolder): Promise<Delivery[]> {
    const names = (await this.fs.list(path.join(this.dir, folder))).filter(
      (name) => name.endsWith('.json') && !name.startsWith('.'),
    );
    const deliveries: Delivery[] = [];
    for (const name of names) {
      const text = await this.fs.readTextIfExists(path.join(this.dir, folder, name));
      if (text === undefined) continue;
      try {
        deliveries.push(JSON.parse(text) as Delivery);
      } catch {
        // not ours to guess at
      }
    }
    return deliveries.sort((a, b) => (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : 0));
  }

  /** Pending deliveries; one a crash left both pending and delivered (or failed) is settled, not sent again. */
  async pending(): Promise<Delivery[]> {
    const waiting: Delivery[] = [];
    for (const delivery of await this.list('pending')) {
      const settled =
        (await this.fs.stat(this.file('delivered', delivery.id))) !== undefined ||
        (await this.fs.stat(this.file('failed', delivery.id))) !== undefined;
      if (settled) await this.fs.remove(this.file('pending', delivery.id));
      else waiting.push(delivery);
    }
    return waiting;
  }

  async delivered(delivery: Delivery, at: string): Promise<void> {
    await this.write('delivered', { ...delivery, attempts: delivery.attempts + 1, deliveredAt: at });
    await this.fs.remove(this.file('pending', delivery.id));
  }

  async retryLater(delivery: Delivery, error: string, nextAt: string): Promise<void> {
    await this.write('pending', { ...delivery, attempts: delivery.attempts + 1, lastError: error, nextAt });
  }

  async gaveUp(delivery: Delivery, error: string, at: string): Promise<void> {
    await this.write('failed', { ...delivery, attempts: delivery.attempts + 1, lastError: error, gaveUpAt: at });
    await this.fs.remove(this.file('pending', delivery.id));
  }

  /** Removes delivered and failed files older than `before` (ms): dedup only needs them while facts could recur. */
  async prune(before: number): Promise<number> {
    let removed = 0;
    for (const folder of ['delivered', 'failed'] as const)
      for (const name of await this.fs.list(path.join(this.dir, folder))) {
        const file = path.join(this.dir, folder, name);
        const stat = await this.fs.stat(file);
        if (stat && stat.mtimeMs < before) {
          await this.fs.remove(file);
          removed++;
        }
      }
    return removed;
  }

  async readFacts(): Promise<OutboxFacts | undefined> {
    const text = await this.fs.readTextIfExists(path.join(this.dir, 'facts.json'));
    if (text === undefined) return undefined;
    try {
      const facts = JSON.parse(text) as OutboxFacts;
      return typeof facts === 'object' && facts !== null ? { ...facts, watcher: facts.watcher ?? {} } : undefined;
    } catch {
      return undefined;
    }
  }

  async writeFacts(facts: OutboxFacts): Promise<void> {
    await this.ensure();
    await this.fs.writeAtomic(path.join(this.dir, 'facts.json'), `${JSON.stringify(facts, null, 2)}\n`, 0o600);
  }
}
