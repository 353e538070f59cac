// Root's push webhook receiver, without its socket (src/io/webhook/ moves
// the bytes): checks each delivery (delivery.ts decides), and for a push to
// a registered repo's base writes that repo's wake file in root's state dir,
// which its watcher listens for (control/watch/remote.ts checks origin then,
// as its poll does). It runs no git and starts nothing: the worst a forged
// or replayed push could do is make a watcher ask origin once more, and
// neither gets that far (401, 409).
import { Webhooks } from '@octokit/webhooks';
import type { Clock, FsPort, ScheduleCheck } from '../../ports.js';
import type { RegistryRepo } from '../../types.js';
import { CachedRegistry } from '../registry/index.js';
import { ensureRepoStateDir } from '../state-dirs.js';
import { wakeFile } from '../../paths.js';
import { parseOrigin } from '../../github/origin.js';
import { originUrlFromGitConfig } from './origin-config.js';
import {
  admitHead,
  DeliveryMemory,
  judgeDelivery,
  tooLarge,
  WEBHOOK_MAX_BODY_BYTES,
  type DeliveryAnswer,
  type DeliveryHead,
  type PushTarget,
} from './delivery.js';

/** A clone's .git/config larger than this is not read (its origin is then unknown: set the registry's url). */
const GIT_CONFIG_MAX_BYTES = 256 * 1024;

export interface ReceiverDeps {
  readonly fs: FsPort;
  readonly scheduler: ScheduleCheck;
  readonly clock: Clock;
}

export interface ReceiverSettings {
  readonly registryFile: string;
  readonly state: string;
  /** The shared secret GitHub signs with (read from webhook_secret_file by the command). */
  readonly secret: string;
  readonly maxBodyBytes?: number;
  log(event: string, fields: Record<string, unknown>): void;
}

/** What the socket (src/io/webhook/server.ts) asks of the receiver. */
export interface DeliveryHandler {
  readonly maxBodyBytes: number;
  admit(head: DeliveryHead): DeliveryAnswer | undefined;
  tooLarge(head: DeliveryHead): DeliveryAnswer;
  receive(head: DeliveryHead, body: Uint8Array): Promise<DeliveryAnswer>;
}

export interface WebhookListener {
  readonly host: string;
  readonly port: number;
  /** Stops listening and ends every connection. */
  close(): Promise<void>;
}

/** Listens on host (127.0.0.1 unless a test says otherwise) and port (0: an ephemeral one). */
export type WebhookListen = (
  handler: DeliveryHandler,
  options: { readonly port: number; readonly host?: string },
) => Promise<WebhookListener>;

export class WebhookReceiver implements DeliveryHandler {
  private readonly registry: CachedRegistry;
  private readonly memory = new DeliveryMemory();
  private readonly webhooks: Webhooks;
  readonly maxBodyBytes: number;

  constructor(
    private readonly deps: ReceiverDeps,
    private readonly settings: ReceiverSettings,
  ) {
    this.registry = new CachedRegistry(deps, settings.registryFile);
    this.webhooks = new Webhooks({ secret: settings.secret });
    this.maxBodyBytes = settings.maxBodyBytes ?? WEBHOOK_MAX_BODY_BYTES;
  }

  /** Before the body is read: an answer refuses the request (and the rest of the body is never read). */
  admit(head: DeliveryHead): DeliveryAnswer | undefined {
    const refused = admitHead(head, this.maxBodyBytes);
    if (refused) this.logAnswer(head, refused);
    return refused;
  }

  tooLarge(head: DeliveryHead): DeliveryAnswer {
    const verdict = tooLarge(this.maxBodyBytes);
    this.logAnswer(head, verdict);
    return verdict;
  }

  /** The body arrived whole (at most maxBodyBytes): verify, judge, wake. Never throws. */
  async receive(head: DeliveryHead, body: Uint8Array): Promise<DeliveryAnswer> {
    let verdict: DeliveryAnswer;
    try {
      verdict = await this.judge(head, body);
    } catch (error) {
      verdict = { status: 500, message: `the receiver failed: ${(error as Error).message}`, wake: [] };
    }
    this.logAnswer(head, verdict);
    return verdict;
  }

  private async judge(head: DeliveryHead, body: Uint8Array): Promise<DeliveryAnswer> {
    const text = new TextDecoder().decode(body);
    const verified = text !== '' && (await this.webhooks.verify(text, head.signature ?? '').catch(() => false));
    const seen = head.delivery !== undefined && this.memory.has(head.delivery);
    let payload: unknown;
    let targets: readonly PushTarget[] = [];
    if (verified && !seen && head.event === 'push') {
      try {
        payload = JSON.parse(text);
      } catch {
        payload = undefined;
      }
      try {
        targets = await this.targets();
      } catch (error) {
        // Not remembered: GitHub's redelivery, once the registry is fixed, goes through.
        return { status: 503, message: `cannot read the registry: ${(error as Error).message}`, wake: [] };
      }
    }
    const verdict = judgeDelivery({ head, verified, seen, payload, targets });
    for (const repo of verdict.wake) await this.wake(repo, head.delivery ?? '');
    // Remembered once answered: a wake file that could not be written (500) leaves GitHub's redelivery free to retry.
    if (verified && verdict.status !== 400 && verdict.status !== 409 && head.delivery !== undefined)
      this.memory.remember(head.delivery);
    return verdict;
  }

  /** Every registered repo with the GitHub repository its origin names: the registry's url, else the clone's. */
  private async targets(): Promise<PushTarget[]> {
    const registry = await this.registry.read();
    return Promise.all(
      registry.repos.map(async (repo) => ({
        name: repo.name,
        baseBranch: repo.baseBranch,
        enabled: repo.enabled,
        origin: parseOrigin((await this.originUrl(repo)) ?? ''),
      })),
    );
  }

  private async originUrl(repo: RegistryRepo): Promise<string | undefined> {
    if (repo.url !== undefined) return repo.url;
    // The clone is the repo user's: read as data, no link followed, bounded.
    const text = await this.deps.fs
      .readUntrusted(repo.path, '.git/config', GIT_CONFIG_MAX_BYTES)
      .catch(() => undefined);
    return text === undefined ? undefined : originUrlFromGitConfig(text);
  }

  /** Root-only, atomic: the watcher notices the rename (its content is for the operator, the watcher reads none). */
  private async wake(repo: string, delivery: string): Promise<void> {
    await ensureRepoStateDir(this.deps.fs, this.settings.state, repo);
    const at = new Date(this.deps.clock.now()).toISOString();
    await this.deps.fs.writeAtomic(wakeFile(this.settings.state, repo), `${JSON.stringify({ delivery, at })}\n`, 0o600);
  }

  private logAnswer(head: DeliveryHead, verdict: DeliveryAnswer): void {
    this.settings.log('delivery', {
      delivery: head.delivery ?? null,
      githubEvent: head.event ?? null,
      status: verdict.status,
      message: verdict.message,
      ...(verdict.wake.length > 0 ? { woke: verdict.wake } : {}),
    });
  }
}
