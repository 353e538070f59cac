// One step of a provisioning plan: a command, a file to write, or a layer to
// regenerate and reload. `skip` says why a step is listed but not run;
// `done` is what is said once it ran, where that says more than the step.
import type { Command } from '../../src/types.js';

export type ProvisionStep =
  | { readonly description: string; readonly command: Command; readonly skip?: string; readonly done?: string }
  | {
      readonly description: string;
      readonly write: { readonly path: string; readonly text: string; readonly mode: number };
      readonly skip?: string;
    }
  /** Regenerate from the registry as written by then, and load (needs uids that may not exist at plan time). */
  | { readonly description: string; readonly reload: 'egress' | 'proxy'; readonly skip?: string };
