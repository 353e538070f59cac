// The launch protocol between the runner (orchestrate, asking) and root's dispatch (starting agent and gate commands
// as those users): JSON lines over a socket on the runner's fd 3. Pure: what a message is, how it is written, and
// the checks either side makes of what the other sends. Root treats every request as hostile input (the runner may
// be driven by what an agent wrote), so parseRequest checks each field and bound before anything is started.
import type { LaunchedIdentity } from '../identities.js';
import { isSafeTaskId } from '../board/parse.js';

export type LaunchSignal = 'SIGTERM' | 'SIGKILL';

export interface StartRequest {
  readonly op: 'start';
  readonly id: number;
  readonly as: LaunchedIdentity;
  readonly program: string;
  readonly args: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  readonly cwd: string;
  readonly stdin?: string;
  /**
   * The task an agent command works on, as the runner names it: root grants the command a broker capability for this
   * task (its budget and ledger line). Root checks it is a task id; it is the runner's word, never the agent's.
   */
  readonly task?: string;
}

export interface SignalRequest {
  readonly op: 'signal';
  readonly id: number;
  readonly signal: LaunchSignal;
}

export type LaunchRequest = StartRequest | SignalRequest;

export type LaunchEvent =
  | { readonly id: number; readonly event: 'started'; readonly pid: number }
  | { readonly id: number; readonly event: 'stdout' | 'stderr'; readonly line: string }
  | {
      readonly id: number;
      readonly event: 'exited';
      readonly exitCode: number | null;
      readonly signal: string | null;
      /** When the provider said its rate limit lifts (ISO), from the broker's record of a 429 during this command. */
      readonly rateLimitResetAt?: string;
    }
  | { readonly id: number; readonly event: 'refused'; readonly reason: string };

/** The bounds root holds a request to (and the runner checks before sending). */
export const LAUNCH_LIMITS = {
  /** Bytes of one line, either way (UTF-8, without the newline). */
  lineBytes: 1024 * 1024,
  args: 4096,
  /** Bytes of each string of a request (program, each arg, env name and value, cwd, stdin). */
  stringBytes: 128 * 1024,
  envEntries: 512,
  /** Processes one channel may have running at once. */
  live: 256,
} as const;

/** The ids a channel has seen: start ids count upward, so a fresh one is above every one before it. */
export interface LaunchIds {
  /** Ids of the processes running now. */
  readonly live: ReadonlySet<number>;
  /** The highest start id accepted so far (0 before the first). */
  readonly last: number;
}

export type ParsedRequest =
  | { readonly ok: true; readonly request: LaunchRequest }
  /** id: the request's id when it had a usable one, to answer `refused` to; undefined: the line is ignored. */
  | { readonly ok: false; readonly id: number | undefined; readonly reason: string };

export type ParsedEvent =
  { readonly ok: true; readonly event: LaunchEvent } | { readonly ok: false; readonly reason: string };

export const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const IDENTITIES: readonly LaunchedIdentity[] = ['agent', 'gate'];
const SIGNALS: readonly LaunchSignal[] = ['SIGTERM', 'SIGKILL'];
const START_FIELDS = new Set(['op', 'id', 'as', 'program', 'args', 'env', 'cwd', 'stdin', 'task']);
const SIGNAL_FIELDS = new Set(['op', 'id', 'signal']);

/** One message as a line (no newline; JSON escapes every newline inside it). */
export function encodeMessage(message: LaunchRequest | LaunchEvent): string {
  return JSON.stringify(message);
}

/** UTF-8 bytes of a string, counted without encoding it. */
export function utf8Bytes(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const isId = (value: unknown): value is number => typeof value === 'number' && Number.isSafeInteger(value) && value > 0;

/** Why a string of a request may not be used, or undefined when it may. */
function stringProblem(what: string, value: unknown): string | undefined {
  if (typeof value !== 'string') return `${what} is not a string`;
  if (value.includes('\0')) return `${what} contains a NUL character`;
  if (utf8Bytes(value) > LAUNCH_LIMITS.stringBytes) return `${what} is longer than ${LAUNCH_LIMITS.stringBytes} bytes`;
  return undefined;
}

function absolutePathProblem(what: string, value: unknown): string | undefined {
  return (
    stringProblem(what, value) ?? ((value as string).startsWith('/') ? undefined : `${what} is not an absolute path`)
  );
}

/**
 * A program is an absolute path, or a bare name that env looks up on the PATH the command carries, as the identity
 * (a setup command like ["npm", "ci"]); a path relative to some directory is never taken.
 */
function programProblem(value: unknown): string | undefined {
  const problem = stringProblem('program', value);
  if (problem) return problem;
  const program = value as string;
  if (program.startsWith('/') || /^[A-Za-z0-9_][A-Za-z0-9._+-]*$/.test(program)) return undefined;
  return 'program is neither an absolute path nor a bare name looked up on PATH';
}

function unknownField(message: Record<string, unknown>, known: ReadonlySet<string>): string | undefined {
  const extra = Object.keys(message).find((key) => !known.has(key));
  return extra === undefined ? undefined : `unknown field ${JSON.stringify(extra.slice(0, 64))}`;
}

function startProblem(
  message: Record<string, unknown>,
  offered: ReadonlySet<LaunchedIdentity>,
  ids: LaunchIds,
): string | undefined {
  const id = message.id as number;
  if (id <= ids.last) return `id ${id} is not fresh (start ids count up from ${ids.last + 1})`;
  const extra = unknownField(message, START_FIELDS);
  if (extra) return extra;
  if (!IDENTITIES.includes(message.as as LaunchedIdentity))
    return `"as" must be one of ${IDENTITIES.join(', ')}, not ${JSON.stringify(message.as)}`;
  if (!offered.has(message.as as LaunchedIdentity)) return `this run does not launch commands as the ${message.as}`;
  const problem = programProblem(message.program) ?? absolutePathProblem('cwd', message.cwd);
  if (problem) return problem;
  if (!Array.isArray(message.args)) return 'args is not a list';
  if (message.args.length > LAUNCH_LIMITS.args) return `more than ${LAUNCH_LIMITS.args} args`;
  for (const [index, arg] of message.args.entries()) {
    const argProblem = stringProblem(`args[${index}]`, arg);
    if (argProblem) return argProblem;
  }
  if (!isRecord(message.env)) return 'env is not an object';
  const entries = Object.entries(message.env);
  if (entries.length > LAUNCH_LIMITS.envEntries) return `more than ${LAUNCH_LIMITS.envEntries} env entries`;
  for (const [name, value] of entries) {
    if (!ENV_NAME.test(name)) return `env name ${JSON.stringify(name.slice(0, 64))} is not a variable name`;
    const envProblem = stringProblem(`env ${name}`, value);
    if (envProblem) return envProblem;
  }
  if (message.stdin !== undefined) {
    const stdinProblem = stringProblem('stdin', message.stdin);
    if (stdinProblem) return stdinProblem;
  }
  if (message.task !== undefined && !(typeof message.task === 'string' && isSafeTaskId(message.task)))
    return `task ${JSON.stringify(String(message.task).slice(0, 64))} is not a task id`;
  if (ids.live.size >= LAUNCH_LIMITS.live) return `${LAUNCH_LIMITS.live} processes are running already`;
  return undefined;
}

function signalProblem(message: Record<string, unknown>, ids: LaunchIds): string | undefined {
  const extra = unknownField(message, SIGNAL_FIELDS);
  if (extra) return extra;
  if (!SIGNALS.includes(message.signal as LaunchSignal))
    return `signal must be one of ${SIGNALS.join(', ')}, not ${JSON.stringify(message.signal)}`;
  // An id that ran and has exited is no error (the signal and the exit crossed); one never started is.
  if ((message.id as number) > ids.last) return `no process was started with id ${message.id as number}`;
  return undefined;
}

/** A line's message as an object with a usable id, or why not: the first checks both sides make of a line. */
function readMessage(line: string): { readonly message: Record<string, unknown> & { id: number } } | string {
  if (utf8Bytes(line) > LAUNCH_LIMITS.lineBytes) return `the line is longer than ${LAUNCH_LIMITS.lineBytes} bytes`;
  let message: unknown;
  try {
    message = JSON.parse(line);
  } catch {
    return 'the line is not JSON';
  }
  if (!isRecord(message)) return 'the message is not an object';
  if (!isId(message.id)) return 'id is not a positive integer';
  return { message: message as Record<string, unknown> & { id: number } };
}

/**
 * Root's check of one line from the runner. `offered`: the identities this run launches as; `ids`: what the channel
 * has seen. Never throws: anything unusable is a refusal with the reason.
 */
export function parseRequest(line: string, offered: ReadonlySet<LaunchedIdentity>, ids: LaunchIds): ParsedRequest {
  const refuse = (reason: string, id?: number): ParsedRequest => ({ ok: false, id, reason });
  const read = readMessage(line);
  if (typeof read === 'string') return refuse(read);
  const { message } = read;
  const id = message.id;
  if (message.op === 'start') {
    const problem = startProblem(message, offered, ids);
    if (problem) return refuse(problem, id);
    const { as, program, args, env, cwd, stdin, task } = message as unknown as StartRequest;
    return {
      ok: true,
      request: {
        op: 'start',
        id,
        as,
        program,
        args,
        env,
        cwd,
        ...(stdin === undefined ? {} : { stdin }),
        ...(task === undefined ? {} : { task }),
      },
    };
  }
  if (message.op === 'signal') {
    const problem = signalProblem(message, ids);
    if (problem) return refuse(problem, id);
    return { ok: true, request: { op: 'signal', id, signal: message.signal as LaunchSignal } };
  }
  return refuse(
    `unknown op ${JSON.stringify(typeof message.op === 'string' ? message.op.slice(0, 64) : message.op)}`,
    id,
  );
}

const EVENT_FIELDS: Readonly<Record<LaunchEvent['event'], readonly string[]>> = {
  started: ['pid'],
  stdout: ['line'],
  stderr: ['line'],
  exited: ['exitCode', 'signal', 'rateLimitResetAt'],
  refused: ['reason'],
};
const SIGNAL_NAME = /^SIG[A-Z0-9]{1,12}$/;

function eventProblem(message: Record<string, unknown>): string | undefined {
  const kind = message.event as LaunchEvent['event'];
  const extra = unknownField(message, new Set(['id', 'event', ...EVENT_FIELDS[kind]]));
  if (extra) return extra;
  switch (kind) {
    case 'started':
      return Number.isSafeInteger(message.pid) && (message.pid as number) > 0
        ? undefined
        : 'pid is not a positive integer';
    case 'stdout':
    case 'stderr':
      return typeof message.line === 'string' ? undefined : 'line is not a string';
    case 'exited':
      if (message.exitCode !== null && !Number.isSafeInteger(message.exitCode))
        return 'exitCode is not an integer or null';
      if (message.signal !== null && !(typeof message.signal === 'string' && SIGNAL_NAME.test(message.signal)))
        return 'signal is not a signal name or null';
      if (
        message.rateLimitResetAt !== undefined &&
        !(typeof message.rateLimitResetAt === 'string' && !Number.isNaN(Date.parse(message.rateLimitResetAt)))
      )
        return 'rateLimitResetAt is not a time';
      return message.exitCode === null && message.signal === null
        ? 'exited with neither exitCode nor signal'
        : undefined;
    case 'refused':
      return typeof message.reason === 'string' ? undefined : 'reason is not a string';
  }
}

/** The runner's check of one line from root. */
export function parseEvent(line: string): ParsedEvent {
  const refuse = (reason: string): ParsedEvent => ({ ok: false, reason });
  const read = readMessage(line);
  if (typeof read === 'string') return refuse(read);
  const { message } = read;
  if (typeof message.event !== 'string' || !Object.hasOwn(EVENT_FIELDS, message.event))
    return refuse(`unknown event ${JSON.stringify(message.event)}`);
  const problem = eventProblem(message);
  return problem ? refuse(problem) : { ok: true, event: message as unknown as LaunchEvent };
}

/**
 * An output line as an event that fits in one protocol line: a longer line is cut (the cut says so), never split,
 * so a reader of the stream sees one line for each the process printed.
 */
export function outputEvent(id: number, stream: 'stdout' | 'stderr', line: string): LaunchEvent {
  const event: LaunchEvent = { id, event: stream, line };
  const bytes = utf8Bytes(encodeMessage(event));
  if (bytes <= LAUNCH_LIMITS.lineBytes) return event;
  const marker = ' [cut: the line was longer than the launch protocol carries]';
  // JSON may escape one character into six bytes: cut by the worst case, then by what is left over.
  let keep = Math.floor(line.length * (LAUNCH_LIMITS.lineBytes / bytes)) - marker.length - 64;
  for (;;) {
    const cut: LaunchEvent = { id, event: stream, line: `${line.slice(0, Math.max(0, keep))}${marker}` };
    if (utf8Bytes(encodeMessage(cut)) <= LAUNCH_LIMITS.lineBytes) return cut;
    keep = Math.floor(keep * 0.9);
  }
}
