// What the runner starts agent and gate commands through: a process port per identity.
import type { LaunchedIdentity } from '../identities.js';
import type { ProcessPort } from '../ports.js';

export interface Launcher {
  /** The process port that starts commands as `identity`. */
  processFor(identity: LaunchedIdentity): ProcessPort;
}

/** Every identity is this user (the demo, a trial checkout): commands start on the given port. */
export function localLauncher(process: ProcessPort): Launcher {
  return { processFor: () => process };
}
