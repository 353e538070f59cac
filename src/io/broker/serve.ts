// The broker process of one run. Root starts it with a control socket on fd 3 and sends the run's config; it binds
// the repo's broker port while still root, then becomes the broker identity (no groups, its own uid and gid), so
// what parses agents' HTTP holds no privilege, and the kernel marks it undumpable: its /proc files belong to root and
// no agent can ptrace it. Only then does it check the key files (as the identity that owns them) and say it is
// ready. It answers root's grants and revokes, and tells root of every metered response and provider 429. When root
// closes the channel (the run ended, or root died) it closes its port and exits: every token of the run dies with it.
import type { LineChannel } from '../../ports.js';
import { createBroker } from '../../broker/broker.js';
import { createCapabilityStore } from '../../broker/capabilities.js';
import { meteredSpend, spendBudget } from '../../broker/budget.js';
import { priceOf } from '../../broker/prices.js';
import { readServeConfig, type BrokerServeConfig } from '../../broker/serve/config.js';
import { encodeControl, parseRootMessage, type BrokerMessage } from '../../broker/serve/control.js';
import type { BrokerEvent } from '../../broker/types.js';
import { listenBroker, type BrokerListener } from './server.js';
import { undiciUpstream } from './upstream.js';
import { realKeySource } from './key-file.js';
import { procPeerUid } from './peer-uid.js';
import { randomTokenBytes } from './token-source.js';

export interface ServeOptions {
  readonly channel: LineChannel;
  /** The operator's log: one JSON line per event, never a token or a key. */
  readonly log: (line: string) => void;
  /** Aborted on SIGTERM: the broker stops as if root had closed the channel. */
  readonly stop: AbortSignal;
}

/** Becomes `to` for good: no supplementary groups, then the gid, then the uid; refuses to go on otherwise. */
function dropPrivileges(to: NonNullable<BrokerServeConfig['dropTo']>): string | undefined {
  try {
    process.setgroups!([]);
    process.setgid!(to.gid);
    process.setuid!(to.uid);
  } catch (error) {
    return `could not become uid ${to.uid} gid ${to.gid}: ${(error as Error).message}`;
  }
  const now = [process.getuid!(), process.geteuid!(), process.getgid!(), process.getegid!()];
  if (now.join() !== [to.uid, to.uid, to.gid, to.gid].join() || process.getgroups!().some((gid) => gid !== to.gid))
    return `still uid ${now[0]}/${now[1]} gid ${now[2]}/${now[3]} after the drop`;
  return undefined;
}

/** The first line from root: the config, checked whole. */
function firstConfig(channel: LineChannel): Promise<{ config: BrokerServeConfig } | { problems: string[] }> {
  return new Promise((resolve) => {
    let done = false;
    channel.onLine((line) => {
      if (done) return;
      done = true;
      const parsed = parseRootMessage(line);
      if (!parsed.ok) resolve({ problems: [parsed.reason] });
      else if (parsed.message.op !== 'config') resolve({ problems: ['the first line is not the config'] });
      else resolve(readServeConfig(parsed.message.config));
    });
    channel.onClose(() => !done && resolve({ problems: ['the channel closed before the config came'] }));
  });
}

/** Serves until root closes the channel; resolves to the exit code. */
export async function serveBroker(options: ServeOptions): Promise<number> {
  const { channel } = options;
  const send = (message: BrokerMessage) => channel.send(encodeControl(message));
  const fail = (reason: string) => {
    send({ event: 'failed', reason });
    channel.close();
    return 1;
  };
  const read = await firstConfig(channel);
  if ('problems' in read) return fail(read.problems.join('; '));
  const { config } = read;
  const tokens = createCapabilityStore(randomTokenBytes);
  const metered = meteredSpend(priceOf);
  const upstream = undiciUpstream({ proxy: config.proxy });
  const broker = createBroker(config.repo, {
    tokens,
    clock: Date,
    budget: spendBudget(config.spend, metered),
    usage: {
      seal(record) {
        metered.seal(record);
        send({ event: 'usage', record });
      },
    },
    rateLimits: { rateLimited: (record) => send({ event: 'rate-limited', record }) },
    upstream,
    keys: realKeySource,
    log: (event: BrokerEvent) => options.log(JSON.stringify(event)),
  });
  let listener: BrokerListener;
  try {
    listener = await listenBroker(broker, {
      host: config.host,
      port: config.port,
      ...(config.peerCheck ? { peerUid: procPeerUid() } : {}),
    });
  } catch (error) {
    await upstream.close();
    return fail(`cannot listen on ${config.host}:${config.port}: ${(error as Error).message}`);
  }
  const closeAll = async () => {
    await listener.close();
    await upstream.close();
  };
  const dropped = config.dropTo ? dropPrivileges(config.dropTo) : undefined;
  const keyProblems = dropped ? [] : await broker.keyProblems();
  if (dropped || keyProblems.length) {
    await closeAll();
    return fail(dropped ?? keyProblems.join('; '));
  }
  // A token is kept only until its command's revoke; grant ids count up, so an id is never granted twice.
  const granted = new Map<number, string>();
  let lastId = 0;
  let ending: () => void = () => undefined;
  const ended = new Promise<void>((resolve) => (ending = resolve));
  channel.onLine((line) => {
    const parsed = parseRootMessage(line);
    if (!parsed.ok) return options.log(JSON.stringify({ event: 'control-refused', reason: parsed.reason }));
    const { message } = parsed;
    if (message.op === 'grant') {
      if (message.id <= lastId)
        return send({ event: 'refused', id: message.id, reason: `id ${message.id} is not fresh (ids count up)` });
      lastId = message.id;
      const token = tokens.issue({
        repo: config.repo.repo,
        run: config.run,
        task: message.task,
        uid: message.uid,
        expiresAt: Date.now() + message.ttlSec * 1000,
        id: message.id,
      });
      granted.set(message.id, token);
      send({ event: 'granted', id: message.id, token });
    } else if (message.op === 'revoke') {
      const token = granted.get(message.id);
      if (token !== undefined) tokens.revoke(token, Date.now());
      granted.delete(message.id);
    } else if (message.op === 'end') ending();
  });
  const sweep = setInterval(() => tokens.sweep(Date.now()), 60_000);
  sweep.unref();
  send({ event: 'ready', port: listener.port });
  await Promise.race([
    ended,
    new Promise<void>((resolve) => {
      channel.onClose(resolve);
      options.stop.addEventListener('abort', () => resolve(), { once: true });
    }),
  ]);
  clearInterval(sweep);
  // Closing the listener ends the last connections, which seals (and reports) their responses; then the channel.
  await closeAll();
  channel.close();
  return 0;
}
