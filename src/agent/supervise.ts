// The agent watchdog: starts an agent in its own process group, ends it when
// it falls silent (idle timeout), runs too long (wall clock) or reports a
// cost past its budget, and keeps a bounded amount of its output in memory.
// Time comes from the Clock port, so tests drive it without waiting.
import type { Clock, ProcessPort } from '../ports.js';
import type { AgentOutput, Command, EndedBy } from '../types.js';

export interface SupervisorLimits {
  /** No output line on either stream for this long ends the run. */
  readonly idleTimeoutMs: number;
  /** The run never lasts longer than this. */
  readonly wallClockMs: number;
  /** Between SIGTERM and SIGKILL, to let the agent save its work. */
  readonly killGraceMs: number;
}

/** A session's budget as the runner enforces it from the stream, whatever the CLI does with its own flag. */
export interface StreamBudget {
  /** USD the session may report before it is ended. */
  readonly maxUsd: number;
  /** The cumulative cost a stdout line reports, if it reports one (the adapter's costReported). */
  readonly costOf: (line: string) => number | undefined;
}

export type SupervisedRun = AgentOutput & {
  readonly pid: number;
  readonly startedAt: number;
  readonly endedAt: number;
};

export type OutputStream = 'stdout' | 'stderr';

/** stdout lines kept (the newest); a transcript belongs in a file via onLine. */
export const MAX_STDOUT_LINES = 5000;
/** One stdout line longer than this is cut (a result line is far smaller). */
const MAX_LINE_CHARS = 1024 * 1024;
/** Characters of stderr kept (the end). */
const MAX_STDERR_TAIL_CHARS = 64 * 1024;

/** Keeps the newest lines, at most `limit` of them, in insertion order. */
class LineRing {
  private readonly lines: string[] = [];
  private start = 0;
  constructor(private readonly limit: number) {}
  push(line: string): void {
    if (this.lines.length < this.limit) this.lines.push(line);
    else {
      this.lines[this.start] = line;
      this.start = (this.start + 1) % this.limit;
    }
  }
  toArray(): string[] {
    return [...this.lines.slice(this.start), ...this.lines.slice(0, this.start)];
  }
}

/** Keeps the last `limit` characters of the joined lines. */
class TextTail {
  private chunks: string[] = [];
  private size = 0;
  constructor(private readonly limit: number) {}
  push(line: string): void {
    this.chunks.push(line);
    this.size += line.length + 1;
    while (this.size > this.limit * 2 && this.chunks.length > 1) this.size -= this.chunks.shift()!.length + 1;
  }
  toString(): string {
    const text = this.chunks.join('\n');
    return text.length > this.limit ? text.slice(text.length - this.limit) : text;
  }
}

export async function superviseAgent(
  deps: { process: ProcessPort; clock: Clock },
  command: Command,
  limits: SupervisorLimits,
  onLine: (stream: OutputStream, line: string) => void,
  budget?: StreamBudget,
): Promise<SupervisedRun> {
  const { clock } = deps;
  const stdout = new LineRing(MAX_STDOUT_LINES);
  const stderr = new TextTail(MAX_STDERR_TAIL_CHARS);
  let endedBy: EndedBy = 'exit';
  let ending = false;
  let idleTimer: { cancel(): void } | undefined;
  let wallTimer: { cancel(): void } | undefined;
  let killTimer: { cancel(): void } | undefined;

  const startedAt = clock.now();
  // Handlers may fire before start() returns (a fake, or a very fast child), so
  // the handle is looked up lazily.
  let handle: { signalGroup(signal: 'SIGTERM' | 'SIGKILL'): void } | undefined = undefined;
  const expire = (reason: EndedBy) => {
    if (ending) return;
    ending = true;
    endedBy = reason;
    idleTimer?.cancel();
    wallTimer?.cancel();
    handle?.signalGroup('SIGTERM');
    killTimer = clock.setTimer(limits.killGraceMs, () => handle?.signalGroup('SIGKILL'));
  };
  const armIdle = () => {
    if (ending) return;
    idleTimer?.cancel();
    idleTimer = clock.setTimer(limits.idleTimeoutMs, () => expire('idle-timeout'));
  };
  const deliver = (stream: OutputStream, line: string) => {
    try {
      onLine(stream, line);
    } catch {
      // A failing transcript writer must not take the watchdog down with it.
    }
  };

  const started = deps.process.start(command, {
    onStdoutLine(line) {
      const kept = line.length > MAX_LINE_CHARS ? line.slice(0, MAX_LINE_CHARS) : line;
      stdout.push(kept);
      armIdle();
      deliver('stdout', kept);
      // Ended the way a watchdog ends it: the run's own process group, TERM then KILL.
      if (budget && !ending && overBudget(budget, kept)) expire('over-budget');
    },
    onStderrLine(line) {
      stderr.push(line);
      armIdle();
      deliver('stderr', line);
    },
  });
  handle = started;
  // A line that arrived before start() returned may already have ended the run: its TERM had no handle yet.
  if (ending) started.signalGroup('SIGTERM');
  else {
    armIdle();
    wallTimer = clock.setTimer(limits.wallClockMs, () => expire('wall-clock'));
  }

  const { exitCode, signal, rateLimitResetAt } = await started.exited;
  idleTimer?.cancel();
  wallTimer?.cancel();
  killTimer?.cancel();
  // Whatever the leader left behind in its group (a dev server, a stuck test
  // runner) goes with it: no orphan survives the run.
  started.signalGroup('SIGKILL');
  return {
    pid: started.pid,
    startedAt,
    endedAt: clock.now(),
    stdoutLines: stdout.toArray(),
    stderrTail: stderr.toString(),
    exitCode,
    signal,
    endedBy,
    // The broker's record of a 429 (through root's launcher): the adapter's result takes it over the CLI's text.
    ...(rateLimitResetAt !== undefined ? { rateLimitResetAt } : {}),
  };
}

/** A line whose reported cost reaches the budget; a reader that throws reports nothing. */
function overBudget(budget: StreamBudget, line: string): boolean {
  try {
    const cost = budget.costOf(line);
    return cost !== undefined && cost >= budget.maxUsd;
  } catch {
    return false;
  }
}
