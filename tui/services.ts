// What the dashboard asks of the rest of agent-runner, as an interface the
// command layer (src/cli/tui-services.ts) implements with the very functions
// and commands the CLI runs: actions are `agent-runner ARGS` children, reads
// are the functions `runs`, `logs` and `status` call. Tests give a fake.
import type { RunHistory } from '../src/control/runs/history.js';
import type { StagingFacts, TaskDetail, TranscriptTail } from './repo-view.js';

export interface ActionOutcome {
  readonly exitCode: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

export interface StartedAction {
  readonly done: Promise<ActionOutcome>;
  /** SIGTERM to the command's process group (it stops as on Ctrl-C). */
  stop(): void;
}

export interface ConsoleServices {
  /** `agent-runner ARGS` as its own process, off the render path. */
  start(args: readonly string[]): StartedAction;
  runHistory(repo: string): Promise<RunHistory>;
  /** Staging as `status --json` reports it; fetch first for a promote's confirmation. */
  staging(repo: string, fetch: boolean): Promise<StagingFacts>;
  /** Follows a task's newest transcript (the newest of any task when undefined) until the signal aborts. */
  follow(
    repo: string,
    task: string | undefined,
    onTail: (tail: TranscriptTail) => void,
    signal: AbortSignal,
  ): Promise<void>;
  taskDetail(repo: string, taskId: string): Promise<TaskDetail>;
}
