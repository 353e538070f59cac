// Root's side of the launch protocol: for the run's whole life, dispatch starts agent and gate commands on the
// runner's request. Every line is hostile input (src/launch/protocol.ts checks it); a command runs only through
// dropPrivileges as the identity asked for, with the identity's own HOME/USER/LOGNAME (and, for the agent, the repo's
// proxy; for the gate, no proxy at all) over whatever the runner asked, entering its cwd as that user. Root signals
// only a child it started and has not reaped (its pid cannot be recycled before), and when the channel closes or the
// run ends it SIGKILLs every group it started and waits for each to exit. Each command runs under the run's
// confinement (limits.ts confineLaunched): root's launcher is outside orchestrate's scope and rlimits.
// Where the run has a broker, an agent command that names its task is a model session: it starts only once the broker
// has granted it a capability for that task and the agent's uid, with the broker's variables over everything else
// (no provider login passes), and the capability is revoked when it exits; its exit carries the broker's word on
// when a rate limit it hit lifts. The capability never passes through the runner.
import type { LaunchedIdentity } from '../../identities.js';
import type { LineChannel, Ports, StartedProcess } from '../../ports.js';
import { encodeMessage, outputEvent, parseRequest, type LaunchEvent, type StartRequest } from '../../launch/index.js';
import { dropPrivileges, isProxyVariable, type UserAccount } from '../repo-user/index.js';
import { confineLaunched, type Confinement } from './limits.js';
import { startWithCapability, type RunBrokerHandle } from '../broker/index.js';
import { withCapability } from '../../agent/broker-env.js';

/** Who a launched identity is on this host, and the variables root sets for it whatever the runner asks. */
export interface LaunchAccount {
  readonly account: UserAccount;
  readonly env: Readonly<Record<string, string>>;
}

export interface LaunchService {
  /** SIGKILLs every group still running and resolves once each has exited; later requests are refused. */
  stop(): Promise<void>;
  /** How many commands were started. */
  started(): number;
}

/** Pure: what a launched command starts with: the runner's variables less any proxy setting, then root's own. */
export function launchEnvironment(
  requested: Readonly<Record<string, string>>,
  forced: Readonly<Record<string, string>>,
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(requested)) if (!isProxyVariable(name)) env[name] = value;
  return { ...env, ...forced };
}

/** What the launcher needs of the run's broker: grants and revokes, and the reset time of a grant's 429. */
export interface LaunchBroker extends Pick<RunBrokerHandle, 'rateLimitResetOf'> {
  readonly broker: Pick<RunBrokerHandle['broker'], 'url' | 'grant' | 'revoke'>;
}

/** Pure: a model session's environment: the runner's variables less proxies and logins, root's own, the broker's. */
export function sessionEnvironment(
  requested: Readonly<Record<string, string>>,
  forced: Readonly<Record<string, string>>,
  broker: Readonly<Record<string, string>>,
): Record<string, string> {
  return withCapability(launchEnvironment(requested, forced), broker);
}

export function serveLaunches(
  deps: Pick<Ports, 'process'>,
  channel: LineChannel,
  identities: ReadonlyMap<LaunchedIdentity, LaunchAccount>,
  /** The run's limits; without one (tests of the protocol) commands run unconfined. */
  confinement?: Confinement,
  /** The run's broker; without one, agents use their own logins and no command gets a capability. */
  broker?: LaunchBroker,
): LaunchService {
  const offered = new Set(identities.keys());
  const live = new Map<number, StartedProcess>();
  const exits = new Set<Promise<void>>();
  let last = 0;
  let count = 0;
  let stopping = false;
  const send = (event: LaunchEvent) => channel.send(encodeMessage(event));

  const start = (request: StartRequest) => {
    const identity = identities.get(request.as)!;
    const { id } = request;
    const handlers = {
      onStdoutLine: (line: string) => send(outputEvent(id, 'stdout', line)),
      onStderrLine: (line: string) => send(outputEvent(id, 'stderr', line)),
    };
    const begin = (env: Record<string, string>) => {
      const dropped = dropPrivileges(
        identity.account,
        {
          program: request.program,
          args: request.args,
          env,
          cwd: request.cwd,
          ...(request.stdin === undefined ? {} : { stdin: request.stdin }),
        },
        { enterCwdAsUser: true },
      );
      return deps.process.start(confinement ? confineLaunched(dropped, confinement) : dropped, handlers);
    };
    const session = broker && request.as === 'agent' && request.task !== undefined;
    const granted = session
      ? startWithCapability({
          broker: broker.broker,
          task: request.task!,
          uid: identity.account.uid,
          handlers,
          begin: (brokerEnv) => begin(sessionEnvironment(request.env, identity.env, brokerEnv)),
          onBegun: (pid) => {
            if (pid !== undefined && pid > 0) send({ id, event: 'started', pid });
          },
        })
      : undefined;
    const child = granted ?? begin(launchEnvironment(request.env, identity.env));
    count++;
    live.set(id, child);
    if (!session && child.pid > 0) send({ id, event: 'started', pid: child.pid });
    const exit = child.exited.then(({ exitCode, signal }) => {
      live.delete(id);
      exits.delete(exit);
      const grantId = granted?.grantId;
      const resetAt = grantId === undefined ? undefined : broker?.rateLimitResetOf(grantId);
      send({
        id,
        event: 'exited',
        exitCode,
        signal: exitCode === null && signal === null ? 'SIGKILL' : signal,
        ...(resetAt === undefined ? {} : { rateLimitResetAt: resetAt }),
      });
    });
    exits.add(exit);
  };

  channel.onLine((line) => {
    const parsed = parseRequest(line, offered, { live: new Set(live.keys()), last });
    if (!parsed.ok) {
      if (parsed.id !== undefined) send({ id: parsed.id, event: 'refused', reason: parsed.reason });
      return;
    }
    const { request } = parsed;
    if (request.op === 'signal') {
      live.get(request.id)?.signalGroup(request.signal);
      return;
    }
    last = request.id;
    if (stopping) {
      send({ id: request.id, event: 'refused', reason: 'the run is ending' });
      return;
    }
    try {
      start(request);
    } catch (error) {
      live.delete(request.id);
      send({ id: request.id, event: 'refused', reason: `could not start: ${(error as Error).message}` });
    }
  });

  let stopped: Promise<void> | undefined;
  // Once: the channel closing and the run's end both stop it, and each group is killed once.
  const stop = () =>
    (stopped ??= (async () => {
      stopping = true;
      for (const child of live.values()) child.signalGroup('SIGKILL');
      while (exits.size) await Promise.all([...exits]);
    })());
  channel.onClose(() => void stop());
  return { stop, started: () => count };
}
