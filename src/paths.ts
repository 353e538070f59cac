// Where state lives. One function per location, so nothing else builds paths
// under the state or config directories by hand.
import * as path from 'node:path';

export const DEFAULT_STATE_DIR = '/var/lib/agent-runner';
export const DEFAULT_CONFIG_FILE = '/etc/agent-runner/registry.toml';

export function stateDir(env: Readonly<Record<string, string | undefined>>): string {
  return env.AGENT_RUNNER_STATE || DEFAULT_STATE_DIR;
}

export function registryFile(env: Readonly<Record<string, string | undefined>>): string {
  return env.AGENT_RUNNER_CONFIG || DEFAULT_CONFIG_FILE;
}

/**
 * A workspace's key under the state dir: its basename plus a short hash of the
 * full path, so two checkouts named alike never share state.
 */
export function workspaceKey(workspace: string): string {
  let hash = 0x811c9dc5;
  for (const char of path.resolve(workspace)) {
    hash ^= char.charCodeAt(0);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  const base = path.basename(path.resolve(workspace)).replace(/[^A-Za-z0-9._-]/g, '_') || 'root';
  return `${base}-${hash.toString(16).padStart(8, '0')}`;
}

export function workspaceStateDir(state: string, workspace: string): string {
  return path.join(state, 'workspaces', workspaceKey(workspace));
}

/** The transcript of one agent session: JSONL, one event a line. */
export function transcriptFile(state: string, workspace: string, runId: string, taskId: string): string {
  return path.join(workspaceStateDir(state, workspace), 'transcripts', `${runId}-${taskId}.jsonl`);
}

/**
 * A repo user's own state (transcripts, attempts, drain records): in its
 * home, so root's state dir never has to be open to agent users, and
 * nothing root keeps is writable by them.
 */
export function repoUserStateDir(home: string): string {
  return path.join(home, '.agent-runner');
}

/** Where every repo's control-plane state dir lives (root only). */
export function reposStateDir(state: string): string {
  return path.join(state, 'repos');
}

/** Per-repo control-plane state (locks, spool, run records, watcher status). */
export function repoStateDir(state: string, repo: string): string {
  return path.join(reposStateDir(state), repo);
}

/** Where a drain keeps its worktrees: beside the repo, never inside it. */
export function worktreesDir(workspace: string): string {
  const resolved = path.resolve(workspace);
  return path.join(path.dirname(resolved), `.${path.basename(resolved)}.worktrees`);
}

/** One drain at a time per repo: dispatch, watch and queued jobs all take it. */
export function runLockPath(state: string, repo: string): string {
  return path.join(repoStateDir(state, repo), 'run.lock');
}

/** One watcher per repo. */
export function watchLockPath(state: string, repo: string): string {
  return path.join(repoStateDir(state, repo), 'watch.lock');
}

/** A repo's run records, one JSON file per run. */
export function runsDir(state: string, repo: string): string {
  return path.join(repoStateDir(state, repo), 'runs');
}

export function runFile(state: string, repo: string, runId: string): string {
  return path.join(runsDir(state, repo), `${runId}.json`);
}

/** A repo's ledger: one append-only JSONL file of agent sessions per UTC day (root only). */
export function ledgerDir(state: string, repo: string): string {
  return path.join(repoStateDir(state, repo), 'ledger');
}

export function ledgerFile(state: string, repo: string, day: string): string {
  return path.join(ledgerDir(state, repo), `${day}.jsonl`);
}

/** A repo's job spool: one subdirectory per job state (queue, running, done, failed). */
export function spoolDir(state: string, repo: string): string {
  return path.join(repoStateDir(state, repo), 'spool');
}

/** The jobs in one state of the spool. */
export function spoolStateDir(state: string, repo: string, where: string): string {
  return path.join(spoolDir(state, repo), where);
}

export function spoolJobFile(state: string, repo: string, where: string, id: string): string {
  return path.join(spoolStateDir(state, repo, where), `${id}.json`);
}

/** What a repo's watcher last said about itself (fleet and the dashboard read it). */
export function watchStatusFile(state: string, repo: string): string {
  return path.join(repoStateDir(state, repo), 'watch.json');
}

/** Written by the webhook receiver when a push reached the repo's base: its watcher checks origin at once. */
export function wakeFile(state: string, repo: string): string {
  return path.join(repoStateDir(state, repo), 'wake.json');
}

/**
 * Root's cache of what fleet read from each repo's git objects, keyed by commit ids (control/fleet/cache.ts);
 * root-only.
 */
export function fleetCacheFile(state: string): string {
  return path.join(state, 'cache', 'fleet.json');
}

/** The install's root (the directory above bin/), from the path of bin/agent-runner. */
export function installRoot(selfBin: string): string {
  return path.resolve(path.dirname(selfBin), '..');
}

/** dist/src/main.js of the install: what a child agent-runner runs. */
export function installMainFile(selfBin: string): string {
  return path.join(installRoot(selfBin), 'dist', 'src', 'main.js');
}

// ------------------------------------------------ the host backend (backends/host)

/** The registry's directory: the host's other config files live beside it. */
export function configDir(env: Readonly<Record<string, string | undefined>>): string {
  return path.dirname(registryFile(env));
}

/** The applied egress ruleset, restored at boot by agent-runner-egress.service. */
export function egressFile(config: string): string {
  return path.join(config, 'egress.json');
}

/** The live Squid config. */
export function squidConfigFile(config: string): string {
  return path.join(config, 'squid.conf');
}

/** One `<repo>.txt` allowlist per repo. */
export function squidAllowlistDir(config: string): string {
  return path.join(config, 'allow');
}

export function squidAllowlistFile(allowlistDir: string, repo: string): string {
  return path.join(allowlistDir, `${repo}.txt`);
}

/** Squid's pid file and logs, writable by its effective user. */
export function squidStateDir(state: string): string {
  return path.join(state, 'squid');
}

export function squidPidFile(squidState: string): string {
  return path.join(squidState, 'squid.pid');
}

export function squidCacheLog(squidState: string): string {
  return path.join(squidState, 'cache.log');
}

export function squidAccessLog(squidState: string): string {
  return path.join(squidState, 'access.log');
}

/** Where a removed repo's home goes: moved aside, never deleted. */
export function removedDir(state: string): string {
  return path.join(state, 'removed');
}

export function removedHomeDir(removed: string, repo: string, stamp: string): string {
  return path.join(removed, `${repo}-${stamp}`);
}

// ------------------------------------------------ a drain's worktrees and records

/** A task's worktree: `<worktrees>/<task id>`. */
export function taskWorktree(workspace: string, taskId: string): string {
  return path.join(worktreesDir(workspace), taskId);
}

/** The staging worktree, where auto/work is checked out for the integrator. */
export function stagingWorktree(workspace: string): string {
  return path.join(worktreesDir(workspace), 'staging');
}

/**
 * The lock that keeps one drain (or lifecycle command) per repository: in the
 * repository's own (common) git dir, so every drain of the repo meets it
 * whatever its state dir and whichever worktree it was started from.
 */
export function repoDrainLock(gitCommonDir: string): string {
  return path.join(gitCommonDir, 'agent-runner-drain.lock');
}

/** The last drain's summary (status shows it). */
export function lastDrainFile(workspaceState: string): string {
  return path.join(workspaceState, 'last-drain.json');
}

/** The last rate-limit reset a drain waited for, so the next drain waits too. */
export function rateLimitFile(workspaceState: string): string {
  return path.join(workspaceState, 'rate-limit.json');
}

/** Failed attempts per task, kept across drains. */
/** What review said of each task (drain/review/records.ts): `<TASK>.json`, and each run's verdict files below. */
export function reviewsDir(workspaceState: string): string {
  return path.join(workspaceState, 'reviews');
}

export function reviewRecordFile(workspaceState: string, taskId: string): string {
  return path.join(reviewsDir(workspaceState), `${taskId.toUpperCase()}.json`);
}

export function attemptsFile(workspaceState: string): string {
  return path.join(workspaceState, 'attempts.json');
}

/** The folder of running agents' records. */
export function processRecordsDir(workspaceState: string): string {
  return path.join(workspaceState, 'agents');
}

/** One file per running agent, setup command or gate: pid and kernel start time, for whoever reaps after a crash. */
export function processRecordFile(workspaceState: string, name: string): string {
  return path.join(processRecordsDir(workspaceState), `${name}.json`);
}

// ------------------------------------------------ the operator's console (issue 12)

/** A drain's summary kept for good, one file per run (last-drain.json is only the newest). */
export function drainHistoryDir(workspaceState: string): string {
  return path.join(workspaceState, 'drains');
}

export function drainHistoryFile(workspaceState: string, runId: string): string {
  return path.join(drainHistoryDir(workspaceState), `${runId}.json`);
}

/** The workspace's transcripts folder. */
export function transcriptsDir(workspaceState: string): string {
  return path.join(workspaceState, 'transcripts');
}

/** Present while the operator has paused the repo's watcher (root-owned, in root's state dir). */
export function pauseFile(state: string, repo: string): string {
  return path.join(repoStateDir(state, repo), 'paused.json');
}

/** When the watcher last applied retention to the repo. */
export function retentionStampFile(state: string, repo: string): string {
  return path.join(repoStateDir(state, repo), 'retention.json');
}
