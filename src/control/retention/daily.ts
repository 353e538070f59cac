// The watcher's daily retention pass for its repo: root's records here, the
// workspace's as the repo user (`gc --retention-only`, which takes the
// workspace lock, so it waits for a quiet moment: busy means try again next
// tick). A stamp file says when it last ran, so a restarted watcher does not
// run it again at once.
import type { ControlPorts } from '../../ports.js';
import type { RegistryRepo } from '../../types.js';
import { EXIT } from '../../errors.js';
import { retentionStampFile } from '../../paths.js';
import { retentionDays, retentionDue } from './policy.js';
import { describePruned, NOTHING_PRUNED, pruneRootRecords, retentionCommandAsUser, type Pruned } from './prune.js';
import { repoUser, type Install, dropPrivileges } from '../repo-user/index.js';
import { ensureRepoStateDir } from '../state-dirs.js';

export interface RetentionDeps extends ControlPorts {
  readonly state: string;
  readonly install: Install;
  log(event: string, fields: Record<string, unknown>): void;
}

async function lastRun(deps: RetentionDeps, repo: string): Promise<number | undefined> {
  const text = await deps.fs.readTextIfExists(retentionStampFile(deps.state, repo));
  try {
    return text === undefined ? undefined : Date.parse((JSON.parse(text) as { at?: string }).at ?? '');
  } catch {
    return undefined;
  }
}

/** Runs the pass when a day has gone by since the last one. Never throws: a failure is logged and retried next tick. */
export async function applyDailyRetention(deps: RetentionDeps, repo: RegistryRepo): Promise<void> {
  const now = deps.clock.now();
  try {
    if (!retentionDue(await lastRun(deps, repo.name), now)) return;
    const days = retentionDays(repo);
    const root = await pruneRootRecords(deps.fs, deps.state, repo.name, days, now);
    const user = await repoUser(deps, repo);
    const result = await deps.process.run(
      dropPrivileges(user, retentionCommandAsUser(deps.install, repo, user, days), { parentDeathSignal: 'SIGTERM' }),
    );
    if (result.exitCode === EXIT.busy) {
      deps.log('retention-deferred', { reason: 'the workspace is busy', rootRecords: root });
      return;
    }
    if (result.exitCode !== EXIT.ok)
      throw new Error(
        `gc --retention-only as ${user.name} exited ${result.exitCode}: ${result.stderr.trim().split('\n').slice(-2).join(' | ')}`,
      );
    let workspace: Partial<Pruned> = {};
    try {
      workspace =
        (JSON.parse(result.stdout.trim().split('\n').at(-1) ?? '{}') as { pruned?: Partial<Pruned> }).pruned ?? {};
    } catch {
      // The counts are for the log only.
    }
    const pruned: Pruned = { ...NOTHING_PRUNED, ...workspace, ...root };
    await ensureRepoStateDir(deps.fs, deps.state, repo.name);
    await deps.fs.writeAtomic(
      retentionStampFile(deps.state, repo.name),
      `${JSON.stringify({ at: new Date(now).toISOString(), days, pruned })}\n`,
      0o600,
    );
    deps.log('retention-applied', { days, ...pruned, detail: describePruned(pruned, days) });
  } catch (error) {
    deps.log('retention-failed', { error: (error as Error).message });
  }
}
