// A model session started with its capability: the broker grants one for the session's task and the agent's uid,
// the session starts with the broker's variables in its environment, and the capability is revoked the moment the
// session ends (a token kept by anything the session left behind is refused from then on). Used by root's launcher
// and by the demo's, which plays root without being it. A grant the broker refuses is a command that could not run.
import type { OutputHandlers, StartedProcess } from '../../ports.js';
import { brokerEnvironment } from '../../agent/broker-env.js';
import type { RunBroker } from './run-broker.js';

/** A capability lives until its session ends; this bounds one whose end root never hears of (a day, the cap). */
export const SESSION_GRANT_TTL_SEC = 24 * 3600;

/** What a refused session exits with: could not run (as a launch root refuses). */
const COULD_NOT_RUN = 126;

type Exit = { exitCode: number | null; signal: string | null };

export interface SessionGrantInput {
  readonly broker: Pick<RunBroker, 'url' | 'grant' | 'revoke'>;
  readonly task: string;
  readonly uid: number;
  readonly handlers: Pick<OutputHandlers, 'onStderrLine'>;
  /** Starts the session with the broker's variables (the caller lays them over the command's own). */
  readonly begin: (brokerEnv: Readonly<Record<string, string>>) => StartedProcess;
  /** The session started (its pid), or its grant was refused (undefined). */
  readonly onBegun?: (pid: number | undefined) => void;
}

export interface GrantedSession extends StartedProcess {
  /** The grant's id once the broker gave one (rate-limit records name it). */
  readonly grantId: number | undefined;
}

export function startWithCapability(input: SessionGrantInput): GrantedSession {
  let child: StartedProcess | undefined;
  let grantId: number | undefined;
  let signalled: 'SIGTERM' | 'SIGKILL' | undefined;
  const exited = (async (): Promise<Exit> => {
    let granted: { id: number; token: string };
    try {
      granted = await input.broker.grant(input.task, input.uid, SESSION_GRANT_TTL_SEC);
    } catch (error) {
      input.handlers.onStderrLine(
        `the broker refused a capability for ${input.task}: ${error instanceof Error ? error.message : String(error)}`,
      );
      input.onBegun?.(undefined);
      return { exitCode: COULD_NOT_RUN, signal: null };
    }
    grantId = granted.id;
    // Stopped while the grant was on its way: the session never starts.
    if (signalled) {
      input.broker.revoke(granted.id);
      input.onBegun?.(undefined);
      return { exitCode: null, signal: signalled };
    }
    try {
      child = input.begin(brokerEnvironment(input.broker.url, granted.token));
    } catch (error) {
      input.broker.revoke(granted.id);
      input.handlers.onStderrLine(`could not start: ${error instanceof Error ? error.message : String(error)}`);
      input.onBegun?.(undefined);
      return { exitCode: COULD_NOT_RUN, signal: null };
    }
    input.onBegun?.(child.pid);
    try {
      return await child.exited;
    } finally {
      input.broker.revoke(granted.id);
    }
  })();
  return {
    get pid() {
      return child?.pid ?? 0;
    },
    get grantId() {
      return grantId;
    },
    exited,
    signalGroup(signal) {
      if (child) child.signalGroup(signal);
      else signalled = signal;
    },
  };
}
