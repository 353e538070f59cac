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

/** Per-repo control-plane state (locks, spool, run records, watcher status). */
export function repoStateDir(state: string, repo: string): string {
  return path.join(state, 'repos', repo);
}

/** Where a drain keeps its worktrees: beside the repo, never inside it. */
export function worktreesDir(workspace: string): string {
  const resolved = path.resolve(workspace);
  return path.join(path.dirname(resolved), `.${path.basename(resolved)}.worktrees`);
}

/** A task's worktree: `<worktrees>/<task id>`. */
export function taskWorktree(workspace: string, taskId: string): string {
  return path.join(worktreesDir(workspace), taskId);
}

/** The staging worktree, where auto/work is checked out for the integrator. */
export function stagingWorktree(workspace: string): string {
  return path.join(worktreesDir(workspace), 'staging');
}

/** The lock file that keeps one drain (or lifecycle command) per workspace. */
export function workspaceLockFile(workspaceState: string): string {
  return path.join(workspaceState, 'orchestrate.lock');
}

/** The last drain's summary (status shows it). */
export function lastDrainFile(workspaceState: string): string {
  return path.join(workspaceState, 'last-drain.json');
}

/** Failed attempts per task, kept across drains. */
export function attemptsFile(workspaceState: string): string {
  return path.join(workspaceState, 'attempts.json');
}

/** The folder of running agents' records. */
export function agentRecordsDir(workspaceState: string): string {
  return path.join(workspaceState, 'agents');
}

/** One file per running agent: pid and kernel start time, for whoever reaps after a crash. */
export function agentRecordFile(workspaceState: string, taskId: string): string {
  return path.join(agentRecordsDir(workspaceState), `${taskId}.json`);
}
