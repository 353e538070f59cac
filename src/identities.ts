// Who does what for a repo: the runner (the registry's user: the drain, the
// integrator, the clone, auto/work, the git token), the agent (agent sessions
// and the setup command, in a repository of its own) and the gate (candidate
// code, with no credential). Commits cross between them only as bundles,
// through one-way hand-off folders; this file names the identities and those
// places, once.
import * as path from 'node:path';

export type Identity = 'runner' | 'agent' | 'gate';
/** The identities root starts commands as on the runner's request. */
export type LaunchedIdentity = 'agent' | 'gate';

export interface HandoffDirs {
  /** Written by the runner, read by the agent: bundles of auto/work. */
  readonly toAgent: string;
  /** Written by the agent, read by the runner as hostile input: bundles of task branches. */
  readonly fromAgent: string;
  /** Written by the runner, read by the gate: bundles of candidates. */
  readonly toGate: string;
}

/** What the runner knows of the other identities' places. */
export interface IdentityLayout {
  readonly agentHome: string;
  readonly gateHome: string;
  readonly handoff: HandoffDirs;
  /** The uid every file in fromAgent must belong to; undefined when the identities are one user (the demo). */
  readonly agentUid: number | undefined;
}

/** The longest registry user that still leaves room for the identities' suffixes (Linux names: 32). */
export const MAX_RUNNER_NAME = 26;

/** The accounts of a repo whose registry user is `user`. */
export function identityNames(user: string): {
  readonly runner: string;
  readonly agent: string;
  readonly gate: string;
} {
  return { runner: user, agent: `${user}-agent`, gate: `${user}-gate` };
}

/** The root-owned folder that holds a repo's hand-off folders, beside the runner's home. */
export function handoffRoot(runnerHome: string): string {
  return `${runnerHome.replace(/\/+$/, '')}.handoff`;
}

export function handoffDirs(root: string): HandoffDirs {
  return {
    toAgent: path.join(root, 'to-agent'),
    fromAgent: path.join(root, 'from-agent'),
    toGate: path.join(root, 'to-gate'),
  };
}

/** The layout on a provisioned host: three accounts, hand-off folders beside the runner's home. */
export function hostIdentityLayout(
  runner: { readonly home: string },
  agent: { readonly home: string; readonly uid: number },
  gate: { readonly home: string },
): IdentityLayout {
  return {
    agentHome: agent.home,
    gateHome: gate.home,
    handoff: handoffDirs(handoffRoot(runner.home)),
    agentUid: agent.uid,
  };
}

/**
 * One user playing all three parts (the demo, a trial checkout): the same places and the same bundle hand-off, inside
 * the workspace's state dir.
 */
export function sameUserLayout(workspaceState: string): IdentityLayout {
  const root = path.join(workspaceState, 'identities');
  return {
    agentHome: path.join(root, 'agent'),
    gateHome: path.join(root, 'gate'),
    handoff: handoffDirs(path.join(root, 'handoff')),
    agentUid: undefined,
  };
}

/** The agent's (or gate's) own repository inside its home. */
export function sideRepository(home: string): string {
  return path.join(home, 'repo.git');
}

/** The folder of the task worktrees in the agent's home. */
export function agentTasksDir(agentHome: string): string {
  return path.join(agentHome, 'tasks');
}

/** Where a task's worktree lives in the agent's home. */
export function agentTaskDir(agentHome: string, taskId: string): string {
  return path.join(agentTasksDir(agentHome), taskId);
}

/** Where a candidate is checked out in the gate's home. */
export function gateCandidateDir(gateHome: string, name: string): string {
  return path.join(gateHome, 'candidates', name);
}
