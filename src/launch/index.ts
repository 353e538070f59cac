// Commands of the other identities: the runner asks, something that may
// start them as those users does it (root's launcher), or, where one user
// plays every part, the runner's own process port.
import type { ProcessPort } from '../ports.js';
import type { LaunchedIdentity } from '../identities.js';

export interface Launcher {
  processFor(identity: LaunchedIdentity): ProcessPort;
}

/** One user plays every part: commands of every identity run as the runner. */
export function localLauncher(process: ProcessPort): Launcher {
  return { processFor: () => process };
}
