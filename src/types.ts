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
  /**
   * A `Blocked: ...` paragraph written outside the notes section (after the
   * last section, say), present only when there is one: agents do not always
   * write the reason where the CLI would.
   */
  readonly blockedNote?: string;
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
  /**
   * Ids of the tasks in backlog/completed/ (`backlog task complete` moves a
   * task there): finished, whatever their status says, as for the CLI.
   */
  readonly completed?: readonly TaskId[];
}

/** A task label the assistant that would run the task cannot take (src/repo/escalation.ts), and the fix. */
export interface LabelProblem {
  readonly label: string;
  readonly problem: string;
  readonly fix: string;
}

/** The labels of a task that its repo's assistant cannot take; [] when it can take them all. Pure. */
export type LabelCheck = (task: Task) => readonly LabelProblem[];

export type NotReadyReason =
  | { readonly kind: 'done' }
  | { readonly kind: 'status'; readonly status: string }
  | { readonly kind: 'blocked-by'; readonly dependency: TaskId; readonly dependencyStatus: string }
  | { readonly kind: 'missing-dependency'; readonly dependency: TaskId }
  | { readonly kind: 'needs-human'; readonly labels?: readonly string[] }
  | { readonly kind: 'no-status' }
  | { readonly kind: 'parked'; readonly note: string }
  | { readonly kind: 'unreadable'; readonly reason: string }
  | ({ readonly kind: 'label' } & LabelProblem);

export interface Readiness {
  readonly ready: readonly Task[];
  readonly notReady: readonly {
    readonly id: TaskId;
    readonly file: string;
    readonly title: string;
    readonly reasons: readonly NotReadyReason[];
  }[];
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
  /**
   * Run in each new worktree before the agent: an argv array, or the path of a script in the repo (run from the
   * worktree).
   */
  readonly setup: readonly string[] | string | undefined;
  readonly agentIdleTimeoutSec: number;
  readonly agentWallClockSec: number;
  readonly maxAttempts: number;
  /** The most finished tasks the integrator merges and gates together (1: one at a time). */
  readonly maxBatch: number;
  readonly prompt: string;
  readonly command: readonly string[] | undefined;
  readonly baseBranch: string;
  /** How `promote --pr --merge` merges the staging pull request (default merge: each landing commit survives). */
  readonly mergeMethod: MergeMethodName;
  /** The review stage before a task lands (src/repo/review-config.ts). */
  readonly review: ReviewConfig;
}

export type MergeMethodName = 'merge' | 'squash' | 'rebase';

/** Who reviews: the other CLI than the implementer's, the same one, or a named one. */
export type ReviewAssistant = 'other' | 'same' | AssistantName;

/** .agent/config.json's `review` block after validation and defaults. */
export interface ReviewConfig {
  readonly enabled: boolean;
  readonly assistant: ReviewAssistant;
  readonly model: string | undefined;
  /** The most fix rounds; review rounds are one more. */
  readonly maxRounds: number;
  /** Findings of these severities keep a task from landing. */
  readonly blockingSeverities: readonly Severity[];
  /** A criterion claimed met must cite a line the change touches (else: any line that exists). */
  readonly requireDiffEvidence: boolean;
  /** Run the gate at the candidate before the reviewer; a red gate becomes findings for a fix round. */
  readonly preGate: boolean;
  /** A file in the repo whose text is added to the reviewer's prompt. */
  readonly prompt: string | undefined;
  readonly timeoutSec: number;
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
  /**
   * stdout is bytes, not text (git tree objects): captured as latin1, one char per byte, so Buffer.from(stdout,
   * 'latin1') gives them back exactly.
   */
  readonly binaryStdout?: true;
  /**
   * This command is a model session for this task (the `task` of a launch request): where the run has a broker, the
   * launcher grants it a capability for the task (its budget and ledger line) and revokes it when the command ends.
   * Set only on agent sessions, never on the git and file steps run as the agent.
   */
  readonly modelSessionOf?: TaskId;
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
  /**
   * USD this session may spend (task_usd minus what the task already cost),
   * for a CLI with a budget flag of its own; absent: no cap. Always > 0: a
   * task with nothing left is parked before a session starts.
   */
  readonly maxBudgetUsd?: number;
  /** The session's job; absent: implement (review when `review` is given). Every agent sees it as AGENT_ROLE. */
  readonly role?: ReviewRole;
  /**
   * For a reviewer: the verdict's JSON schema, as text (claude's --json-schema) and as a file (codex's
   * --output-schema), and the file a CLI that writes its verdict to a file puts it in (codex -o, a command agent's
   * AGENT_REVIEW_VERDICT). Paths are absolute, in the hand-off folders.
   */
  readonly review?: { readonly schemaText: string; readonly schemaFile: string; readonly verdictFile: string };
  /**
   * The run's provider broker, where it has one: the adapter points the CLI at `url` (http://127.0.0.1:PORT) in place
   * of a login, with `session` in the X-Agent-Runner-Session header. The capability token is never here: root's
   * launcher puts it in the session's environment.
   */
  readonly broker?: { readonly url: string; readonly session: string };
}

/**
 * How the agent process ended, as the run loop saw it (over-budget: the stream reported a cost past the session's
 * budget and the runner ended it).
 */
export type EndedBy = 'exit' | 'idle-timeout' | 'wall-clock' | 'over-budget';

export interface AgentOutput {
  readonly stdoutLines: readonly string[];
  readonly stderrTail: string;
  readonly exitCode: number | null;
  readonly signal: string | null;
  readonly endedBy: EndedBy;
  /** When the run ended (ms since the epoch); anchors relative reset times like "resets 7pm". */
  readonly endedAt?: number;
  /** When the provider said its rate limit lifts (ISO), as the broker recorded a 429 during the session. */
  readonly rateLimitResetAt?: string;
}

/** What one task's agent sessions came to (agent/run-task.ts judges it). */
export type RunOutcome =
  | { readonly kind: 'done' }
  | { readonly kind: 'blocked'; readonly reason: string }
  | { readonly kind: 'agent-failed'; readonly reason: string }
  | { readonly kind: 'stalled'; readonly reason: string }
  | { readonly kind: 'unfinished'; readonly reason: string }
  | { readonly kind: 'unreadable'; readonly reason: string }
  /** The task cost more than its budget: stopped, and parked for a human. */
  | {
      readonly kind: 'over-budget';
      readonly reason: string;
      /** The repo's daily budget, not the task's: the task waits for tomorrow uncharged, and no new task starts. */
      readonly daily?: true;
    };

export type AgentFailure =
  | 'not-logged-in'
  | 'rate-limited'
  | 'max-turns'
  | 'crashed'
  | 'no-output'
  | 'idle-timeout'
  | 'wall-clock'
  /** Stopped at the task's budget: by the CLI's own budget flag, or by the runner reading its reported cost. */
  | 'over-budget'
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
  /** The agent's last message of a session that ended normally (a Blocked reason may be only there). */
  readonly finalMessage?: string;
  /** Tokens as the CLI reported them, split for the ledger; a field it did not report is absent (unknown, never 0). */
  readonly usage?: TokenUsage;
  /** The model the CLI says it used, when it says. */
  readonly model?: string;
  /**
   * The stream said the account is rate limited (claude's rate_limit_event
   * with status "rejected"), whatever the session's own result was: new
   * sessions wait, but a usable result is still used.
   */
  readonly rateLimitSeen?: { readonly resetAt?: string };
  /**
   * claude with --json-schema: JSON.stringify of the result event's `structured_output` (the input of claude's
   * StructuredOutput tool call), when the result has one. Untrusted: the review stage parses and checks it.
   */
  readonly structuredOutput?: string;
  /**
   * The broker refused the session over budget (failure over-budget): its reason, the text after
   * OVER_BUDGET_MESSAGE_PREFIX. The drain parks the task with it.
   */
  readonly brokerOverBudget?: string;
}

/** One session's tokens as reported: input excludes cache reads and writes. */
export interface TokenUsage {
  readonly input?: number;
  readonly output?: number;
  readonly cacheRead?: number;
  readonly cacheWrite?: number;
}

export interface AgentAdapter {
  readonly name: AssistantName;
  /** The binary looked up on PATH when the config does not name one. */
  readonly defaultBinary: string;
  buildCommand(invocation: AgentInvocation): Command;
  parseResult(output: AgentOutput): AgentResult;
  /**
   * The session's cumulative USD cost a stdout line reports, if that line
   * reports one: what the runner reads while the session runs to end it at
   * its budget. Absent: the CLI reports no cost (its cost is unknown).
   */
  costReported?(line: string): number | undefined;
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
  /** The agent's proxy port (its `allow` list, without the git host unless anonymousFetch). */
  readonly proxyPort: number;
  /**
   * The runner's proxy port (the git host alone); undefined until provision allocates it, and then the runner reaches
   * nothing.
   */
  readonly runnerProxyPort?: number;
  /** The agent may reach the git host too (a public repo fetched without a token); default false. */
  readonly anonymousFetch?: boolean;
  /** What the gate may reach: nothing (default), or what the agent may. */
  readonly gateEgress?: GateEgress;
  readonly schedule: string;
  /** Seconds between checks of origin's base branch for new commits (ls-remote); 0: never, only the drains fetch. */
  readonly remotePollSec: number;
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
  /** retention_days when the registry sets it; control/retention/policy.ts has the default. */
  readonly retentionDays?: number;
  /**
   * How promote reaches the base: push it, or through a GitHub pull request (registry promote, auto_merge,
   * github_api_url).
   */
  readonly promote?: PromoteSettings;
  /** Budgets and rate-limit waits (control/registry/spend.ts); absent means SPEND_DEFAULTS. */
  readonly spend?: SpendLimits;
  /** The registry's review = "required": every task is reviewed, whatever the repo's config says. */
  readonly review?: 'required';
  /**
   * The provider broker of the repo's runs (broker_port, [repos.NAME.broker] over [defaults.broker]); absent: its
   * agents hold their own logins, as before the broker.
   */
  readonly broker?: RepoBroker;
  /** Webhooks told of the repo's events ([[repos.NAME.notify]], else [[defaults.notify]]); root's alone. */
  readonly notify?: readonly NotifyHook[];
  /**
   * Present when the registry says backend = "kubernetes": the repo's task workers run as Kubernetes Jobs
   * ([repos.NAME.kubernetes] over [defaults.kubernetes]); absent, they run on this host.
   */
  readonly kubernetes?: RepoKubernetes;
  /** The loopback port its watcher serves Prometheus metrics on (metrics_port); absent: no metrics. */
  readonly metricsPort?: number;
}

/** How a webhook's body is shaped: agent-runner's JSON, or a Slack-compatible {"text": …}. */
export type NotifyFormat = 'json' | 'slack';

/** One webhook as the registry names it (control/registry/notify.ts); the URL may carry a token. */
export interface NotifyHook {
  readonly url: string;
  /** Event names (control/notify/kinds.ts), validated by the registry. */
  readonly events: readonly string[];
  readonly format: NotifyFormat;
}

/** Where and how a repo's task workers run as Kubernetes Jobs (control/registry/kubernetes.ts). */
export interface RepoKubernetes {
  /** A context of a kubeconfig file (the runner reads it), or the service account of the pod the runner runs in. */
  readonly cluster:
    | { readonly kind: 'context'; readonly context: string; readonly kubeconfig?: string }
    | { readonly kind: 'in-cluster' };
  /** The repo's own namespace (a DNS-1123 label), one per repo. */
  readonly namespace: string;
  /** The task worker's image, pinned by digest: name@sha256:<64 hex>. */
  readonly image: string;
  /** The agent's proxy as the pods reach it, by IP (the pods get no DNS). */
  readonly proxy: { readonly ip: string; readonly port: number };
  /** The runner's read-only git endpoint the clone step fetches from (git:// or http(s)://, host an IP). */
  readonly gitFetchUrl: string;
  /** The runner's git endpoint a task pushes its result to, with its per-task token (http(s)://, host an IP). */
  readonly gitPushUrl: string;
  /** emptyDir size limits, bytes: the clone and the agent's work, and /tmp with the agent's home. */
  readonly workspaceBytes: number;
  readonly tmpBytes: number;
  /** ttlSecondsAfterFinished of every Job. */
  readonly ttlSec: number;
  /** A CPU limit per pod (a Kubernetes quantity such as "2" or "1500m"); absent: none, only the request. */
  readonly cpuMax?: string;
  /** The pods' service account; absent: the namespace's default (its token is never mounted). */
  readonly serviceAccount?: string;
  /**
   * The agent's credential: keys of a Secret the operator keeps in the namespace, each given to the agent container
   * alone as the variable of that name (the runner never reads it).
   */
  readonly agentSecret?: { readonly name: string; readonly keys: readonly string[] };
}

/** A repo's broker as the registry names it: where it listens, and per provider the origin and the key file's path. */
export interface RepoBroker {
  /** The repo's privileged broker_port on 127.0.0.1, from the same pool as the proxy ports. */
  readonly port: number;
  readonly providers: Readonly<Partial<Record<'anthropic' | 'openai', RepoBrokerProvider>>>;
  /** Larger request bodies are refused (413) before anything is forwarded. */
  readonly maxBodyBytes: number;
  /** The broker's own egress proxy (http://127.0.0.1:PORT); absent: it connects to each origin directly. */
  readonly proxy?: string;
}

export interface RepoBrokerProvider {
  /** scheme://host[:port]: the one upstream. */
  readonly origin: string;
  /** Absolute path of a file owned by the broker account, mode 0600, holding the key. */
  readonly keyFile: string;
  readonly keyKind: 'api-key' | 'subscription-token';
}

/** The registry's gate_egress: the gate reaches nothing, or the same as the agent. */
export type GateEgress = 'none' | 'agent';

export interface PromoteSettings {
  readonly mode: 'push' | 'pr';
  /** With mode pr: the watcher also merges the PR once its checks are green. */
  readonly autoMerge: boolean;
  /** GitHub Enterprise (or a test server): the API root; undefined: derived from the origin host. */
  readonly githubApiUrl: string | undefined;
}

/** A repo's budgets (unset: no cap) and how long a rate-limit wait may be. */
export interface SpendLimits {
  readonly dailyUsd: number | undefined;
  readonly dailyTokens: number | undefined;
  readonly taskUsd: number | undefined;
  readonly rateLimitWaitMinSec: number;
  readonly rateLimitWaitMaxSec: number;
}

export interface Registry {
  readonly repos: readonly RegistryRepo[];
  /**
   * Proxy ports are below this (the registry's top-level proxy_ports_below): 1024, the kernel's default
   * net.ipv4.ip_unprivileged_port_start, unless the operator raised both.
   */
  readonly proxyPortsBelow?: number;
  /** The GitHub push webhook receiver ([defaults] webhook_port and webhook_secret_file); absent: none runs. */
  readonly webhook?: RegistryWebhook;
}

/** Where `agent-runner webhook serve` listens (127.0.0.1 only) and the root-owned file holding its secret. */
export interface RegistryWebhook {
  readonly port: number;
  readonly secretFile: string;
}

// ---------------------------------------------------------------- review
// Here rather than in src/drain/review/ because the repo config and the
// agents' invocation carry them, and neither may import the drain.

export type Severity = 'blocker' | 'major' | 'minor' | 'nit';

/** Why an agent session runs: the task's work, a fix round after a review, or the review itself. */
export type ReviewRole = 'implement' | 'fix' | 'review';

/** One acceptance criterion as the reviewer judged it. */
export interface VerdictCriterion {
  /** The criterion's number in the task ("#1" -> 1). */
  readonly criterion: number;
  readonly met: boolean;
  /** "path:line" citations at the candidate. */
  readonly evidence: readonly string[];
  readonly note: string;
}

export interface Finding {
  readonly severity: Severity;
  /** "path:line", or "" for the change as a whole. */
  readonly location: string;
  readonly message: string;
}

/** A review verdict as the reviewer writes it (JSON; src/drain/review/schema.ts). */
export interface VerdictDoc {
  readonly task_id: string;
  /** 1-based review round. */
  readonly round: number;
  /** As given in the reviewer's prompt. */
  readonly nonce: string;
  /** The full commit reviewed. */
  readonly candidate: string;
  readonly verdict: 'approve' | 'changes_requested';
  readonly criteria: readonly VerdictCriterion[];
  readonly findings: readonly Finding[];
  readonly summary: string;
}

/** Lines `start` to `start + count - 1` of a file, on the new side of a diff. */
export interface LineRange {
  readonly start: number;
  readonly count: number;
}

/** The new-side line ranges a diff adds or changes, per path (a deleted file is absent). */
export type ChangedLines = ReadonlyMap<string, readonly LineRange[]>;
