// The watcher's eye on origin. Tasks are filed the way a team files work:
// pushed to the base branch on origin. Without this an idle watcher never
// fetches (only a drain does), so new work there would wait until someone
// queued a job. Every `remote_poll_sec` seconds, while the repo is idle, one
// `git ls-remote origin refs/heads/<base>` runs AS THE REPO USER, through
// its proxy (the same environment a drain fetches with), and compares
// origin's commit with the local refs/remotes/origin/<base>. Only when they
// differ is the base fetched (again as the user), and the watcher ticks at
// once: the board snapshot then reads the new tasks from git objects and
// starts a drain when one is ready.
//
// Limits: ls-remote asks the remote over the network (one small request per
// interval per repo); a hung remote is ended by `timeout` after
// REMOTE_TIMEOUT_SEC, as the user, and reported.
import type { Command, RegistryRepo } from '../../types.js';
import type { Clock, Ports, ProcessPort } from '../../ports.js';
import { gitCommand, outsiderReadCommand } from '../../git/git.js';
import { repoUser, agentEnvironment, dropPrivileges, type UserAccount } from '../repo-user/index.js';
import { verifyCommitArgs } from '../../git/plumbing.js';

/** Seconds a single ls-remote or fetch may take before `timeout` ends it. */
export const REMOTE_TIMEOUT_SEC = 60;

/** The remote-tracking ref of the base: what the board snapshot reads as "origin's board". */
export function trackingRef(baseBranch: string): string {
  return `refs/remotes/origin/${baseBranch}`;
}

/** Pure: a git command run as the repo user, with its proxy environment, ended after REMOTE_TIMEOUT_SEC. */
function asRepoUser(user: UserAccount, repo: RegistryRepo, args: readonly string[]): Command {
  // ls-remote and fetch run as the runner: through its own proxy port, the git host's.
  const env = agentEnvironment({ user, path: repo.toolchainPath, proxyPort: repo.runnerProxyPort, extra: {} });
  const git = gitCommand(repo.path, args, { env });
  return dropPrivileges(user, {
    ...git,
    program: 'timeout',
    args: ['--kill-after=5', String(REMOTE_TIMEOUT_SEC), git.program, ...git.args],
  });
}

/** Pure: origin's commit of the base branch, asked of the remote itself. */
export function lsRemoteCommand(user: UserAccount, repo: RegistryRepo): Command {
  return asRepoUser(user, repo, ['ls-remote', '--quiet', 'origin', `refs/heads/${repo.baseBranch}`]);
}

/** Pure: fetches only the base branch into its remote-tracking ref. */
export function fetchBaseCommand(user: UserAccount, repo: RegistryRepo): Command {
  return asRepoUser(user, repo, [
    'fetch',
    '--quiet',
    '--no-tags',
    'origin',
    `+refs/heads/${repo.baseBranch}:${trackingRef(repo.baseBranch)}`,
  ]);
}

/** Pure: root's read of the local remote-tracking ref (data only, no repo program runs). */
export function trackingRefCommand(repo: RegistryRepo): Command {
  return outsiderReadCommand(repo.path, verifyCommitArgs(trackingRef(repo.baseBranch)));
}

/** Pure: the commit of `refs/heads/<base>` in `ls-remote` output; undefined when origin has no such branch. */
export function parseLsRemote(stdout: string, baseBranch: string): string | undefined {
  for (const line of stdout.split('\n')) {
    const [oid, ref] = line.trim().split(/\s+/);
    if (ref === `refs/heads/${baseBranch}` && oid && /^[0-9a-f]{40,64}$/.test(oid)) return oid;
  }
  return undefined;
}

export type RemoteCheck =
  | { readonly kind: 'unchanged' }
  | { readonly kind: 'moved'; readonly from: string | undefined; readonly to: string }
  | { readonly kind: 'no-branch' };

/** Pure: what origin's answer means, given the local remote-tracking commit. */
export function judgeRemote(remote: string | undefined, local: string | undefined): RemoteCheck {
  if (remote === undefined) return { kind: 'no-branch' };
  if (remote === local) return { kind: 'unchanged' };
  return { kind: 'moved', from: local, to: remote };
}

function failure(what: string, result: { exitCode: number | null; stderr: string }): Error {
  const how = result.exitCode === 124 ? `timed out after ${REMOTE_TIMEOUT_SEC} s` : `exit ${result.exitCode}`;
  return new Error(
    `${what} failed (${how}): ${result.stderr.trim().split('\n').slice(-2).join(' | ') || 'no message'}`,
  );
}

/**
 * One check: ls-remote as the user; when origin moved, fetch the base as the
 * user. Returns what it found (after the fetch, for `moved`); throws with
 * git's words when the remote cannot be reached.
 */
export async function checkRemote(process: ProcessPort, user: UserAccount, repo: RegistryRepo): Promise<RemoteCheck> {
  const asked = await process.run(lsRemoteCommand(user, repo));
  if (asked.exitCode !== 0) throw failure(`git ls-remote origin (as ${user.name}, in ${repo.path})`, asked);
  const local = await process.run(trackingRefCommand(repo));
  const check = judgeRemote(
    parseLsRemote(asked.stdout, repo.baseBranch),
    local.exitCode === 0 ? local.stdout.trim() : undefined,
  );
  if (check.kind !== 'moved') return check;
  const fetched = await process.run(fetchBaseCommand(user, repo));
  if (fetched.exitCode !== 0)
    throw failure(`git fetch origin ${repo.baseBranch} (as ${user.name}, in ${repo.path})`, fetched);
  return check;
}

export interface RemotePollHost {
  readonly clock: Clock;
  readonly ports: Pick<Ports, 'process' | 'fs'>;
  /** The repo as the registry says now (undefined: no longer registered, or the registry is broken). */
  repo(): Promise<RegistryRepo | undefined>;
  /** A run is in progress or the watcher is stopping: a drain fetches by itself. */
  busy(): boolean;
  /** Origin's base moved and is fetched: look at the board now. */
  onMoved(check: Extract<RemoteCheck, { kind: 'moved' }>): Promise<void>;
  log(event: string, fields: Record<string, unknown>): void;
  /** Git's error can quote the remote's URL, credentials and all: the watcher's redaction. */
  redact(repo: RegistryRepo | undefined, message: string): Promise<string>;
}

/** How soon a watcher whose polling is off (remote_poll_sec = 0) looks again whether it was turned on. */
const OFF_RECHECK_SEC = 60;

/**
 * The poll loop of one watcher: one check per interval, never two at once, quiet unless something happens. A wake (the
 * push webhook's wake file) runs the same check at once, whatever the interval (0 too); one that comes during a check
 * or a run is kept, and checked once after it.
 */
export class RemotePoller {
  private timer: { cancel(): void } | undefined;
  private stopped = false;
  private lastError: string | undefined;
  private user: UserAccount | undefined;
  private checking = false;
  private wakePending = false;

  constructor(private readonly host: RemotePollHost) {}

  start(intervalSec: number): void {
    this.next(intervalSec);
  }

  stop(): void {
    this.stopped = true;
    this.timer?.cancel();
  }

  private next(intervalSec: number): void {
    if (this.stopped) return;
    this.timer = this.host.clock.setTimer(
      (intervalSec > 0 ? intervalSec : OFF_RECHECK_SEC) * 1000,
      () => void this.poll(),
    );
  }

  /** One periodic round; never throws. */
  async poll(): Promise<void> {
    let interval = 0;
    try {
      interval = await this.check('poll');
    } finally {
      this.next(interval);
    }
  }

  /** Origin's base may have moved (a push webhook said so): check now, or once the check or run in progress ends. */
  async wake(): Promise<void> {
    if (this.stopped) return;
    if (this.checking || this.host.busy()) {
      this.wakePending = true;
      return;
    }
    await this.check('wake');
  }

  /** The watcher's run ended: a wake that came during it is checked now. */
  async afterRun(): Promise<void> {
    if (!this.wakePending || this.stopped) return;
    this.wakePending = false;
    await this.wake();
  }

  /** One check, never two at once and never throwing; the interval the registry says now. */
  private async check(trigger: 'poll' | 'wake'): Promise<number> {
    if (this.checking) {
      if (trigger === 'wake') this.wakePending = true;
      return 0;
    }
    this.checking = true;
    const repo = await this.host.repo().catch(() => undefined);
    const interval = repo?.remotePollSec ?? 0;
    try {
      if (!repo || (trigger === 'poll' && interval === 0) || !repo.enabled || this.host.busy()) return interval;
      if (this.user?.name !== repo.user) this.user = await repoUser(this.host.ports, repo);
      const check = await checkRemote(this.host.ports.process, this.user, repo);
      if (this.lastError !== undefined) this.host.log('remote-check-recovered', { previousError: this.lastError });
      this.lastError = undefined;
      if (check.kind === 'moved') {
        this.host.log('remote-moved', { branch: repo.baseBranch, from: check.from ?? null, to: check.to, trigger });
        if (!this.stopped) await this.host.onMoved(check);
      }
    } catch (error) {
      const message = await this.host.redact(repo, error instanceof Error ? error.message : String(error));
      // Said once per new problem, not every interval.
      if (message !== this.lastError) this.host.log('remote-check-failed', { error: message });
      this.lastError = message;
    } finally {
      this.checking = false;
    }
    // A wake during this check: origin may have moved after it asked.
    if (this.wakePending && !this.host.busy() && !this.stopped) {
      this.wakePending = false;
      await this.check('wake');
    }
    return interval;
  }
}
