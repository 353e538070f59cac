// Domain types shared by the core. Data only: no behaviour lives here.

/** A Backlog.md task id as written in the file, e.g. "TASK-12". */
export type TaskId = string;

export type Priority = 'high' | 'medium' | 'low';

export interface AcceptanceCriterion {
  readonly index: number;
  readonly text: string;
  readonly checked: boolean;
}

/** One task file from backlog/tasks/, parsed. */
export interface Task {
  readonly id: TaskId;
  readonly title: string;
  readonly status: string;
  readonly labels: readonly string[];
  readonly dependencies: readonly TaskId[];
  readonly priority: Priority | undefined;
  readonly ordinal: number | undefined;
  readonly assignee: readonly string[];
  readonly description: string;
  readonly acceptanceCriteria: readonly AcceptanceCriterion[];
  readonly notes: string;
  /** Path of the file relative to the workspace, e.g. "backlog/tasks/task-1 - X.md". */
  readonly file: string;
}

/** A task file that could not be read as a task, with the reason. */
export interface UnreadableTask {
  readonly file: string;
  readonly reason: string;
  /** The id, when one could be recovered (used to report "unreadable" against it). */
  readonly id?: TaskId;
}

export interface Board {
  readonly tasks: readonly Task[];
  readonly unreadable: readonly UnreadableTask[];
  /** Statuses from backlog/config.yml, or Backlog.md's defaults. */
  readonly statuses: readonly string[];
}

export type NotReadyReason =
  | { readonly kind: 'done' }
  | { readonly kind: 'status'; readonly status: string }
  | { readonly kind: 'blocked-by'; readonly dependency: TaskId; readonly dependencyStatus: string }
  | { readonly kind: 'missing-dependency'; readonly dependency: TaskId }
  | { readonly kind: 'needs-human' }
  | { readonly kind: 'parked'; readonly note: string }
  | { readonly kind: 'unreadable'; readonly reason: string };

export interface Readiness {
  readonly ready: readonly Task[];
  readonly notReady: readonly { readonly id: TaskId; readonly file: string; readonly title: string; readonly reasons: readonly NotReadyReason[] }[];
}

// ---------------------------------------------------------------- config

export type AssistantName = 'claude' | 'codex' | 'command';
export type WorkBranchMode = 'reset' | 'accumulate';

/** .agent/config.json after validation and defaults. */
export interface RepoConfig {
  readonly assistant: AssistantName;
  readonly model: string | undefined;
  readonly effort: string | undefined;
  readonly workBranchMode: WorkBranchMode;
  readonly maxParallel: number;
  readonly gates: string;
  /** Run in each new worktree before the agent: an argv array, or the path of a script in the repo (run from the worktree). */
  readonly setup: readonly string[] | string | undefined;
  readonly agentIdleTimeoutSec: number;
  readonly agentWallClockSec: number;
  readonly maxAttempts: number;
  /** The most finished tasks the integrator merges and gates together (1: one at a time). */
  readonly maxBatch: number;
  readonly prompt: string;
  readonly command: readonly string[] | undefined;
  readonly baseBranch: string;
}

export interface ConfigProblem {
  readonly file: string;
  readonly key: string;
  readonly problem: string;
  readonly fix: string;
}

// ---------------------------------------------------------------- agents

/** A process to start, as data. One edge module spawns it. */
export interface Command {
  readonly program: string;
  readonly args: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  readonly cwd: string;
  readonly stdin?: string;
}

export interface AgentInvocation {
  /** The executable to run (resolved path or name on PATH). */
  readonly binary: string;
  readonly prompt: string;
  readonly workspace: string;
  readonly taskId: TaskId;
  readonly model: string | undefined;
  readonly effort: string | undefined;
  /** The complete environment for the agent; nothing else is inherited. */
  readonly env: Readonly<Record<string, string>>;
  /** For the command assistant: argv, first element is the program. */
  readonly command?: readonly string[];
}

/** How the agent process ended, as the run loop saw it. */
export type EndedBy = 'exit' | 'idle-timeout' | 'wall-clock';

export interface AgentOutput {
  readonly stdoutLines: readonly string[];
  readonly stderrTail: string;
  readonly exitCode: number | null;
  readonly signal: string | null;
  readonly endedBy: EndedBy;
  /** When the run ended (ms since the epoch); anchors relative reset times like "resets 7pm". */
  readonly endedAt?: number;
}

export type AgentFailure =
  | 'not-logged-in'
  | 'rate-limited'
  | 'max-turns'
  | 'crashed'
  | 'no-output'
  | 'idle-timeout'
  | 'wall-clock'
  | 'agent-error';

export interface AgentResult {
  readonly ok: boolean;
  readonly failure?: AgentFailure;
  /** Human-readable detail: the agent's own message, the reset time, the exit code. */
  readonly detail?: string;
  readonly sessionId?: string;
  readonly turns?: number;
  readonly inputTokens?: number;
  readonly outputTokens?: number;
  readonly costUsd?: number;
  /** For rate limits: when the agent says it resets (ISO 8601), if it says. */
  readonly resetAt?: string;
}

export interface AgentAdapter {
  readonly name: AssistantName;
  /** The binary looked up on PATH when the config does not name one. */
  readonly defaultBinary: string;
  buildCommand(invocation: AgentInvocation): Command;
  parseResult(output: AgentOutput): AgentResult;
}

// ---------------------------------------------------------------- registry

/** One [repos.NAME] entry of registry.toml after validation and defaults. */
/** What one run of a repo may use (registry keys tasks_max, memory_max, cpu_weight; src/control/registry/limits.ts). */
export interface RunLimits {
  /** Tasks (processes and threads) of the run at once. */
  readonly tasksMax: number;
  /** Bytes: the run's memory under systemd; each process's data segment without it. */
  readonly memoryMax: number;
  /** Relative CPU share under systemd (100 is every unit's default). */
  readonly cpuWeight: number;
}

export interface RegistryRepo {
  readonly name: string;
  readonly path: string;
  readonly user: string;
  readonly baseBranch: string;
  readonly proxyPort: number;
  readonly schedule: string;
  readonly maxParallel: number;
  readonly allow: readonly string[];
  readonly loopbackPorts: readonly number[];
  /** PATH for the agent user (toolchains). */
  readonly toolchainPath: string;
  /** Non-secret environment passed to the agent. */
  readonly env: Readonly<Record<string, string>>;
  readonly enabled: boolean;
  readonly url: string | undefined;
  readonly authorName: string | undefined;
  readonly authorEmail: string | undefined;
  /** What one run may use (control/registry/limits.ts). */
  readonly limits: RunLimits;
}

export interface Registry {
  readonly repos: readonly RegistryRepo[];
}
