// Where the isolation backend keeps its files. Everything hangs off the
// registry's directory (AGENT_RUNNER_CONFIG) and the state dir
// (AGENT_RUNNER_STATE), so a test points both at temp dirs.
import * as path from 'node:path';
import {
  configDir as configDirOf,
  egressFile,
  registryFile,
  removedDir,
  squidAllowlistDir,
  squidConfigFile,
  squidStateDir,
  stateDir,
} from '../../src/paths.js';
import type { SquidLayout } from './squid-config.js';

export interface HostLayout {
  readonly registryFile: string;
  readonly configDir: string;
  readonly stateDir: string;
  /** The applied ruleset, restored at boot by agent-runner-egress.service. */
  readonly egressFile: string;
  readonly squid: SquidLayout;
  /** Where repo clones go when a repo is removed: moved aside, never deleted. */
  readonly removedDir: string;
  readonly unitDir: string;
}

export function hostLayout(env: Readonly<Record<string, string | undefined>>): HostLayout {
  const registry = registryFile(env);
  const configDir = configDirOf(env);
  const state = stateDir(env);
  return {
    registryFile: registry,
    configDir,
    stateDir: state,
    egressFile: egressFile(configDir),
    squid: {
      configFile: squidConfigFile(configDir),
      allowlistDir: squidAllowlistDir(configDir),
      stateDir: squidStateDir(state),
    },
    removedDir: removedDir(state),
    unitDir: '/etc/systemd/system',
  };
}

/** Home of a repo user; the clone lives inside it, so the home's 0700 guards both. */
export function homeOf(user: string): string {
  return path.join('/home', user);
}

/** Default checkout of a repo: inside its user's home. */
export function defaultClonePath(user: string, repo: string): string {
  return path.join(homeOf(user), repo);
}
