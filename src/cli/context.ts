// What every command receives from the entry point. Commands never read
// process.env, process.argv or the real ports themselves: every port, the
// control plane's too, comes in here (src/main.ts wires the real ones).
import type { ControlPorts, LineChannel } from '../ports.js';
import type { GitHubConnector } from '../github/api.js';
import type { StartDemoGitHub } from '../demo/github-server.js';
import type { KeySource } from '../broker/types.js';
import type { StartDemoProvider } from '../demo/model-broker.js';
import type { WebhookListen } from '../control/pickup/index.js';
import type { KubeConnector } from '../../backends/kubernetes/port.js';
import type { ResultsListen } from '../../backends/kubernetes/results/index.js';

export interface CliContext {
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly cwd: string;
  readonly ports: ControlPorts;
  readonly stdoutIsTTY: boolean;
  /**
   * Asks one question on the terminal (written to stderr, answered on stdin) and resolves to the line typed, or
   * undefined at end of input. Absent when stdin is not a terminal: a command that must ask then refuses (discard, gc).
   */
  readonly ask?: (question: string) => Promise<string | undefined>;
  /** Results: data or the human rendering of it. */
  out(text: string): void;
  /** Diagnostics and progress. */
  err(text: string): void;
  /** Aborted on SIGTERM or SIGINT: long commands stop at the next boundary. */
  readonly terminate: AbortSignal;
  /** The process's own uid (0 means root). */
  readonly uid: number;
  /** Path of bin/agent-runner, for commands that start a child agent-runner. */
  readonly selfBin: string;
  /** Opens a GitHub API client (src/main.ts wires Octokit); absent where no command needs GitHub. */
  readonly github?: GitHubConnector;
  /** Starts the local GitHub of `demo --github` (src/io/demo-github.ts, wired by src/main.ts). */
  readonly demoGitHub?: StartDemoGitHub;
  /** Starts the demo's local fake of both providers' APIs (src/io/broker/fake-provider.ts, wired by src/main.ts). */
  readonly demoProvider?: StartDemoProvider;
  /** The runner's end of root's launch socket on an inherited fd (src/io/line-channel.ts, wired by src/main.ts). */
  readonly openLauncherChannel?: (fd: number) => LineChannel;
  /** The broker process of a run (src/io/broker/serve.ts): serves until the channel closes; the exit code. */
  readonly serveBroker?: (options: {
    readonly channel: LineChannel;
    readonly log: (line: string) => void;
    readonly stop: AbortSignal;
  }) => Promise<number>;
  /** Root's reader of provider key files (src/io/broker/key-file.ts): doctor judges each with the broker's rule. */
  readonly brokerKeys?: KeySource;
  /** The push webhook receiver's socket on 127.0.0.1 (src/io/webhook/server.ts, wired by src/main.ts). */
  readonly listenWebhook?: WebhookListen;
  /** Opens a repo's cluster namespace (backends/kubernetes/client/real-jobs.ts, wired by src/main.ts). */
  readonly kubernetes?: KubeConnector;
  /** The results endpoint's socket and CGI (src/io/results/server.ts, wired by src/main.ts). */
  readonly listenResults?: ResultsListen;
}
