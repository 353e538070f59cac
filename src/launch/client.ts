// The runner's side of the launch protocol: a ProcessPort per identity whose run and start go to root over the
// channel, and whose which and startTimeOf are the runner's own (they read nothing of another user's). A launched
// process's pid is 0 until root says it started, and is only ever shown: the runner cannot signal another uid, and
// must not record it for crash reaping (root ends what it started when the channel closes).
import type { LaunchedIdentity } from '../identities.js';
import type { CommandResult, LineChannel, OutputHandlers, ProcessExit, ProcessPort, StartedProcess } from '../ports.js';
import type { Command } from '../types.js';
import type { Launcher } from './launcher.js';
import { encodeMessage, parseEvent, parseRequest, type StartRequest } from './protocol.js';

export interface RemoteLauncherOptions {
  /** A line from root that is not a valid event (it is dropped). */
  onBadEvent?(reason: string): void;
}

type Exit = ProcessExit;

interface Pending {
  readonly handlers: OutputHandlers;
  readonly describe: string;
  pid: number;
  resolve(exit: Exit): void;
}

/** Output run() keeps of a launched command, each stream (the tail, as the real edge keeps it). */
const MAX_CAPTURE_CHARS = 16 * 1024 * 1024;

/** What a command refused by root (or by the runner's own check of the request) exits with: could not run. */
export const REFUSED_EXIT = 126;

export function remoteLauncher(
  channel: LineChannel,
  local: Pick<ProcessPort, 'which' | 'startTimeOf'>,
  options: RemoteLauncherOptions = {},
): Launcher {
  const pending = new Map<number, Pending>();
  let last = 0;
  let gone = false;
  const settle = (id: number, exit: Exit) => {
    const entry = pending.get(id);
    if (!entry) return;
    pending.delete(id);
    entry.resolve(exit);
  };
  channel.onLine((line) => {
    const parsed = parseEvent(line);
    if (!parsed.ok) {
      options.onBadEvent?.(parsed.reason);
      return;
    }
    const event = parsed.event;
    const entry = pending.get(event.id);
    if (!entry) return;
    switch (event.event) {
      case 'started':
        entry.pid = event.pid;
        return;
      case 'stdout':
        entry.handlers.onStdoutLine(event.line);
        return;
      case 'stderr':
        entry.handlers.onStderrLine(event.line);
        return;
      case 'exited':
        settle(event.id, {
          exitCode: event.exitCode,
          signal: event.signal,
          ...(event.rateLimitResetAt !== undefined ? { rateLimitResetAt: event.rateLimitResetAt } : {}),
        });
        return;
      case 'refused':
        entry.handlers.onStderrLine(`the launcher refused to start ${entry.describe}: ${event.reason}`);
        settle(event.id, { exitCode: REFUSED_EXIT, signal: null });
        return;
    }
  });
  channel.onClose(() => {
    gone = true;
    for (const [id, entry] of [...pending]) {
      entry.handlers.onStderrLine(`the launcher went away: ${entry.describe} was ended with it`);
      settle(id, { exitCode: null, signal: 'SIGKILL' });
    }
  });

  const start = (identity: LaunchedIdentity, command: Command, handlers: OutputHandlers): StartedProcess => {
    const id = ++last;
    const describe = `${command.program} as the ${identity}`;
    let resolve!: (exit: Exit) => void;
    const exited = new Promise<Exit>((done) => (resolve = done));
    const entry: Pending = { handlers, describe, pid: 0, resolve };
    const request: StartRequest = {
      op: 'start',
      id,
      as: identity,
      program: command.program,
      args: command.args,
      env: command.env,
      cwd: command.cwd,
      ...(command.stdin === undefined ? {} : { stdin: command.stdin }),
      // A model session names its task: root grants it the broker capability for it.
      ...(command.modelSessionOf === undefined ? {} : { task: command.modelSessionOf }),
    };
    const line = encodeMessage(request);
    // The runner holds its own requests to root's rules: a refusal it can see coming is said here, with the reason.
    const check = parseRequest(line, new Set([identity]), { live: new Set(pending.keys()), last: id - 1 });
    const refuseNow = (line: string, exit: Exit) =>
      queueMicrotask(() => {
        handlers.onStderrLine(line);
        resolve(exit);
      });
    if (gone) refuseNow(`the launcher went away: ${describe} was not started`, { exitCode: null, signal: 'SIGKILL' });
    else if (!check.ok)
      refuseNow(`the launcher refused to start ${describe}: ${check.reason}`, { exitCode: REFUSED_EXIT, signal: null });
    else {
      pending.set(id, entry);
      channel.send(line);
    }
    return {
      get pid() {
        return entry.pid;
      },
      exited,
      signalGroup(signal) {
        if (pending.has(id)) channel.send(encodeMessage({ op: 'signal', id, signal }));
      },
    };
  };

  const run = async (identity: LaunchedIdentity, command: Command): Promise<CommandResult> => {
    const out = capture();
    const err = capture();
    const child = start(identity, command, { onStdoutLine: out.add, onStderrLine: err.add });
    const { exitCode, signal } = await child.exited;
    return { exitCode, signal, stdout: out.text(), stderr: err.text() };
  };

  return {
    processFor(identity) {
      return {
        run: (command) => run(identity, command),
        start: (command, handlers) => start(identity, command, handlers),
        which: (program, pathVariable) => local.which(program, pathVariable),
        startTimeOf: (pid) => local.startTimeOf(pid),
      };
    },
  };
}

/** Lines as run() gives them back: each with its newline (the protocol carries lines, not bytes), the tail kept. */
function capture(): { add(line: string): void; text(): string } {
  const lines: string[] = [];
  let size = 0;
  return {
    add(line) {
      lines.push(line);
      size += line.length + 1;
      while (size > MAX_CAPTURE_CHARS && lines.length > 1) size -= lines.shift()!.length + 1;
    },
    text: () => lines.map((line) => `${line}\n`).join(''),
  };
}
