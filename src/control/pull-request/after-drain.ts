// The watcher's one hook for promote = "pr": after a published drain, keep
// the staging pull request current. A GitHub problem is logged, never thrown:
// the drain already succeeded and the next one tries again.
import type { RegistryRepo } from '../../types.js';
import { keepPullRequestCurrent, type PullRequestSyncDeps } from './sync.js';

export async function afterPublishedDrain(
  deps: PullRequestSyncDeps,
  repo: RegistryRepo,
  log: (event: string, fields: Record<string, unknown>) => void,
): Promise<void> {
  try {
    const record = await keepPullRequestCurrent(deps, repo);
    if (!record) return;
    const event =
      record.exitCode === 0 ? 'pull-request' : record.exitCode === 75 ? 'pull-request-waiting' : 'pull-request-failed';
    log(event, {
      action: record.action,
      number: record.number,
      url: record.url,
      exitCode: record.exitCode,
      detail: record.detail,
    });
  } catch (error) {
    log('pull-request-failed', { error: (error as Error).message });
  }
}
