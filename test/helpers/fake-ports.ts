// Builder fakes for the clock and process ports. Time only moves when a test
// calls advance(); processes only print or exit when a test tells them to.
import type {
  Clock,
  CommandResult,
  LineChannel,
  OutputHandlers,
  ProcessPort,
  StartedProcess,
  StartOptions,
} from '../../src/ports.js';
import type { Command } from '../../src/types.js';

interface PendingTimer {
  readonly id: number;
  readonly at: number;
  readonly callback: () => void;
  cancelled: boolean;
}

export interface FakeClock extends Clock {
  /** Moves time forward, firing every timer that falls due, in order. */
  advance(ms: number): void;
  /** Timers not yet fired or cancelled. */
  pendingTimers(): number;
}

export function fakeClock(start = 1_800_000_000_000): FakeClock {
  let now = start;
  let nextId = 1;
  const timers: PendingTimer[] = [];
  const schedule = (ms: number, callback: () => void): PendingTimer => {
    const timer: PendingTimer = { id: nextId++, at: now + Math.max(0, ms), callback, cancelled: false };
    timers.push(timer);
    return timer;
  };
  return {
    now: () => now,
    sleep: (ms) => new Promise<void>((resolve) => void schedule(ms, resolve)),
    setTimer(ms, callback) {
      const timer = schedule(ms, callback);
      return { cancel: () => void (timer.cancelled = true) };
    },
    advance(ms) {
      const target = now + ms;
      for (;;) {
        const due = timers
          .filter((timer) => !timer.cancelled && timer.at <= target)
          .sort((a, b) => a.at - b.at || a.id - b.id)[0];
        if (!due) break;
        due.cancelled = true;
        now = due.at;
        due.callback();
      }
      now = target;
    },
    pendingTimers: () => timers.filter((timer) => !timer.cancelled && timer.at > now).length,
  };
}

export type Signal = 'SIGTERM' | 'SIGKILL';

/** One process started through the fake port, driven by the test. */
export interface FakeRunningProcess {
  readonly command: Command;
  readonly pid: number;
  /** Signals sent to its group, in order. */
  readonly signals: Signal[];
  readonly exitedYet: boolean;
  stdout(...lines: string[]): void;
  stderr(...lines: string[]): void;
  exit(exitCode: number | null, signal?: string | null): void;
  /** The child's end of the socket it was started with ({ channel: true }). */
  readonly channel?: LineChannel;
}

/** The two ends of a fake socket: a line sent on one arrives on the other (a tick later, as on a real one). */
export function fakeChannelPair(): [LineChannel, LineChannel] {
  interface End {
    readonly lineHandlers: ((line: string) => void)[];
    readonly closeHandlers: (() => void)[];
  }
  const ends: [End, End] = [
    { lineHandlers: [], closeHandlers: [] },
    { lineHandlers: [], closeHandlers: [] },
  ];
  let closed = false;
  const closeBoth = () => {
    if (closed) return;
    closed = true;
    for (const end of ends) for (const handler of end.closeHandlers.splice(0)) handler();
  };
  const channel = (own: End, peer: End): LineChannel => ({
    send(line) {
      if (closed) return;
      setImmediate(() => {
        if (!closed) for (const handler of peer.lineHandlers) handler(line);
      });
    },
    onLine: (handler) => void own.lineHandlers.push(handler),
    onClose(handler) {
      if (closed) handler();
      else own.closeHandlers.push(handler);
    },
    close: () => setImmediate(closeBoth),
  });
  return [channel(ends[0], ends[1]), channel(ends[1], ends[0])];
}

export interface FakeProcessOptions {
  /** Answers for run(); the default exits 0 with no output. */
  run?(command: Command): CommandResult | Promise<CommandResult>;
  /** What a started process does on a signal; default: it dies of it. */
  onSignal?(process: FakeRunningProcess, signal: Signal): void;
  /** Called as each process starts, e.g. to make it print at once. */
  onStart?(process: FakeRunningProcess): void;
}

export interface FakeProcess extends ProcessPort {
  readonly ran: Command[];
  readonly started: FakeRunningProcess[];
  /** The most recently started process. */
  last(): FakeRunningProcess;
}

export function fakeProcess(options: FakeProcessOptions = {}): FakeProcess {
  const ran: Command[] = [];
  const started: FakeRunningProcess[] = [];
  let nextPid = 4000;
  const dieOfIt = (process: FakeRunningProcess, signal: Signal) => process.exit(null, signal);
  return {
    ran,
    started,
    last() {
      const process = started[started.length - 1];
      if (!process) throw new Error('fakeProcess: nothing was started');
      return process;
    },
    async run(command) {
      ran.push(command);
      return options.run ? options.run(command) : { exitCode: 0, signal: null, stdout: '', stderr: '' };
    },
    start(
      command: Command,
      handlers: OutputHandlers,
      startOptions: StartOptions = {},
    ): StartedProcess & { channel?: LineChannel } {
      const [parentEnd, childEnd] = startOptions.channel ? fakeChannelPair() : [undefined, undefined];
      let resolveExit!: (value: { exitCode: number | null; signal: string | null }) => void;
      const exited = new Promise<{ exitCode: number | null; signal: string | null }>(
        (resolve) => (resolveExit = resolve),
      );
      let done = false;
      const process: FakeRunningProcess = {
        command,
        pid: nextPid++,
        signals: [],
        get exitedYet() {
          return done;
        },
        stdout: (...lines) => lines.forEach((line) => !done && handlers.onStdoutLine(line)),
        stderr: (...lines) => lines.forEach((line) => !done && handlers.onStderrLine(line)),
        exit(exitCode, signal = null) {
          if (done) return;
          done = true;
          // The child's end of its socket goes with it.
          childEnd?.close();
          resolveExit({ exitCode, signal });
        },
        ...(childEnd ? { channel: childEnd } : {}),
      };
      started.push(process);
      options.onStart?.(process);
      return {
        pid: process.pid,
        exited,
        ...(parentEnd ? { channel: parentEnd } : {}),
        signalGroup(signal) {
          process.signals.push(signal);
          if (!done) (options.onSignal ?? dieOfIt)(process, signal);
        },
      };
    },
    async startTimeOf(pid) {
      const process = started.find((candidate) => candidate.pid === pid);
      return process && !process.exitedYet ? `${pid}00` : undefined;
    },
    async which(program) {
      return program.includes('/') ? program : `/usr/bin/${program}`;
    },
  };
}
