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
