// What the root commands (dispatch, enqueue, watch, fleet) share: the root
// check, the registry, the install paths and progress relaying.
import type { CliContext } from './context.js';
import type { Registry } from '../types.js';
import { UsageError } from '../errors.js';
import { installMainFile, registryFile, stateDir } from '../paths.js';
import { readRegistry } from '../control/registry/parse.js';
import type { Install } from '../control/repo-user/run-as.js';
import { USER_PATH } from '../system-path.js';

export function requireRoot(context: CliContext, command: string, why: string): void {
  if (context.uid !== 0) throw new UsageError(`${command} must run as root: ${why}`);
}

export interface RootSetup {
  readonly registry: Registry;
  readonly registryFile: string;
  readonly state: string;
}

export async function loadRegistry(context: CliContext): Promise<RootSetup> {
  const file = registryFile(context.env);
  return { registry: await readRegistry(context.ports, file), registryFile: file, state: stateDir(context.env) };
}

/** node and dist/src/main.js of this install, as absolute paths. */
export async function installPaths(context: CliContext): Promise<Install> {
  const main = installMainFile(context.selfBin);
  const node = (await context.ports.process.which('node', context.env.PATH ?? USER_PATH)) ?? '/usr/bin/node';
  return { node, main };
}

/**
 * One orchestrate progress line as the control plane logs it: JSON lines get
 * the repo added; anything else is wrapped so the journal stays one JSON
 * object per line.
 */
export function progressLine(repo: string, line: string, time: string): string {
  if (line.startsWith('{')) {
    try {
      const event = JSON.parse(line) as Record<string, unknown>;
      return JSON.stringify({ ...event, repo });
    } catch {
      // not JSON after all
    }
  }
  return JSON.stringify({ event: 'log', time, repo, line });
}
