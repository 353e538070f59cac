// Root's side of a run's broker: starts broker-serve with a control socket as its fd 3, sends the config, waits for
// ready, and then asks for one capability per agent command and revokes it when the command ends. Every line the
// broker sends is checked (src/broker/control.ts) before anything of it is used: the broker parses agents' HTTP, so
// a line that is not exactly one of its messages is dropped and logged, never believed. stop() closes the channel,
// which ends the broker and with it every token of the run, and waits for the process, killing its group after a
// grace.
import type { Command } from '../../types.js';
import type { LineChannel, Ports } from '../../ports.js';
import type { Install } from '../repo-user/index.js';
import { encodeControl, parseBrokerMessage, type RootMessage } from '../../broker/serve/control.js';
import type { BrokerServeConfig } from '../../broker/serve/config.js';
import type { RateLimitRecord, UsageRecord } from '../../broker/types.js';
import { SYSTEM_PATH } from '../../system-path.js';

export interface RunBroker {
  /** http://127.0.0.1:PORT: what the agents' CLIs are pointed at. */
  readonly url: string;
  readonly port: number;
  readonly pid: number;
  /** A capability for one command of `task` by `uid`; rejects with the broker's reason when it refuses. */
  grant(task: string, uid: number, ttlSec: number): Promise<{ readonly id: number; readonly token: string }>;
  revoke(id: number): void;
  onUsage(handler: (record: UsageRecord) => void): void;
  onRateLimit(handler: (record: RateLimitRecord) => void): void;
  /** The broker ended before root asked it to (it crashed, or was killed): told once, with why. */
  onLost(handler: (why: string) => void): void;
  /** Ends the broker (every token with it) and resolves once it has exited. */
  stop(): Promise<void>;
}

export interface StartRunBrokerInput {
  readonly command: Command;
  readonly config: BrokerServeConfig;
  readonly readyTimeoutMs?: number;
  /** The broker's operator log and the lines root dropped. */
  readonly log: (line: string) => void;
}

const READY_TIMEOUT_MS = 15_000;
const STOP_GRACE_MS = 5_000;

/** Pure: the URL of a broker listening on `port`, as the agents reach it (loopback only). */
export function brokerUrl(port: number): string {
  return `http://127.0.0.1:${port}`;
}

/** Pure: broker-serve from the install, as root starts it (it drops to the broker identity itself). */
export function brokerServeCommand(install: Install): Command {
  return {
    program: install.node,
    args: [install.main, 'broker-serve'],
    env: { PATH: SYSTEM_PATH, LANG: 'C.UTF-8' },
    cwd: '/',
  };
}

export async function startRunBroker(
  deps: Pick<Ports, 'process' | 'clock'>,
  input: StartRunBrokerInput,
): Promise<RunBroker> {
  const child = deps.process.start(
    input.command,
    { onStdoutLine: input.log, onStderrLine: input.log },
    { channel: true },
  );
  const channel: LineChannel | undefined = child.channel;
  if (!channel) throw new Error('broker-serve was started without its control socket');
  const usage: ((record: UsageRecord) => void)[] = [];
  const rateLimits: ((record: RateLimitRecord) => void)[] = [];
  const pending = new Map<number, { resolve(token: string): void; reject(error: Error): void }>();
  let lastId = 0;
  let ready: (port: number) => void = () => undefined;
  let failed: (reason: string) => void = () => undefined;
  const readyPort = new Promise<number>((resolve, reject) => {
    ready = resolve;
    failed = (reason) => reject(new Error(reason));
  });
  const send = (message: RootMessage) => channel.send(encodeControl(message));
  channel.onLine((line) => {
    const parsed = parseBrokerMessage(line);
    if (!parsed.ok) return input.log(`broker: dropped a line: ${parsed.reason}`);
    const message = parsed.message;
    switch (message.event) {
      case 'ready':
        return ready(message.port);
      case 'failed':
        return failed(message.reason);
      case 'granted':
      case 'refused': {
        const waiting = pending.get(message.id);
        pending.delete(message.id);
        if (message.event === 'granted') waiting?.resolve(message.token);
        else waiting?.reject(new Error(message.reason));
        return;
      }
      case 'usage':
        for (const handler of usage) handler(message.record);
        return;
      case 'rate-limited':
        for (const handler of rateLimits) handler(message.record);
    }
  });
  let ended = false;
  let stopping = false;
  const lost: ((why: string) => void)[] = [];
  channel.onClose(() => {
    ended = true;
    if (!stopping) for (const handler of lost) handler('the broker ended before the run did');
    failed('the broker ended before it was ready');
    for (const waiting of pending.values()) waiting.reject(new Error('the broker has ended'));
    pending.clear();
  });
  let stopped: Promise<void> | undefined;
  // The broker is asked to end first, so the responses it was still metering are reported before it closes the
  // channel; one that does not answer within the grace is cut off and killed.
  const stop = () =>
    (stopped ??= (async () => {
      stopping = true;
      send({ op: 'end' });
      const closed = new Promise<void>((resolve) => channel.onClose(resolve));
      const cut = deps.clock.setTimer(STOP_GRACE_MS, () => channel.close());
      await closed;
      cut.cancel();
      channel.close();
      const kill = deps.clock.setTimer(STOP_GRACE_MS, () => child.signalGroup('SIGKILL'));
      await child.exited;
      kill.cancel();
    })());
  send({ op: 'config', config: input.config });
  const readyTimeoutMs = input.readyTimeoutMs ?? READY_TIMEOUT_MS;
  const timer = deps.clock.setTimer(readyTimeoutMs, () =>
    failed(`the broker was not ready within ${readyTimeoutMs / 1000} s`),
  );
  let port: number;
  try {
    port = await readyPort;
  } catch (error) {
    await stop();
    throw new Error(`the broker for repo ${input.config.repo.repo} did not start: ${(error as Error).message}`, {
      cause: error,
    });
  } finally {
    timer.cancel();
  }
  return {
    url: brokerUrl(port),
    port,
    pid: child.pid,
    grant(task, uid, ttlSec) {
      const id = ++lastId;
      return new Promise((resolve, reject) => {
        if (ended) return reject(new Error('the broker has ended'));
        pending.set(id, { resolve: (token) => resolve({ id, token }), reject });
        send({ op: 'grant', id, task, uid, ttlSec });
      });
    },
    revoke: (id) => send({ op: 'revoke', id }),
    onUsage: (handler) => void usage.push(handler),
    onRateLimit: (handler) => void rateLimits.push(handler),
    onLost: (handler) => void lost.push(handler),
    stop,
  };
}
