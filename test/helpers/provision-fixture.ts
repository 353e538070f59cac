// A repo to provision for real: a bare origin served by a git daemon, a
// network namespace for nft and Squid, temp config and state dirs, and the
// repo user's name and paths as provisioning will make them. The runner,
// agent and gate accounts, the hand-off folders and the Squid it starts are
// removed in teardown.
import { chmodSync, rmSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import type { Test } from 'tap';
import { gitDaemon } from './git-daemon.js';
import { originAndClone, tempDir } from './temp.js';
import { killSquidByPidFile, netns, uniqueName } from './netns.js';
import { squidInstanceInNetns } from '../../backends/host/squid-config.js';
import { defaultUserFor } from '../../src/control/registry/parse.js';
import { handoffRoot, identityNames } from '../../src/identities.js';

export interface ProvisionFixture {
  readonly ns: string;
  readonly env: Record<string, string>;
  readonly name: string;
  readonly user: string;
  readonly home: string;
  readonly clone: string;
  /** `provision repo NAME --url ... --netns NS`. */
  readonly provisionArgs: string[];
}

/** Deletes the runner, agent and gate accounts of `user` with their homes, and its hand-off folders. */
export function removeRepoAccounts(user: string): void {
  const names = identityNames(user);
  for (const name of [names.agent, names.gate, names.runner]) spawnSync('userdel', ['--force', '--remove', name]);
  rmSync(handoffRoot(`/home/${user}`), { recursive: true, force: true });
}

export async function provisionFixture(
  t: Test,
  files: Readonly<Record<string, string>>,
  prefix: string,
): Promise<ProvisionFixture> {
  const ns = netns(t);
  const root = tempDir(t, `agent-runner-${prefix}-`);
  chmodSync(root, 0o755);
  const env = {
    AGENT_RUNNER_CONFIG: path.join(root, 'etc', 'registry.toml'),
    AGENT_RUNNER_STATE: path.join(root, 'state'),
    PATH: '/usr/local/bin:/usr/bin:/bin',
    HOME: '/root',
    LANG: 'C.UTF-8',
  };
  const { origin } = originAndClone(t, files);
  const daemon = gitDaemon(t, path.dirname(origin));
  await daemon.ready();
  const name = uniqueName(prefix.slice(0, 1));
  const user = defaultUserFor(name);
  const home = `/home/${user}`;
  t.teardown(() => {
    killSquidByPidFile(path.join(root, 'state', 'squid', 'squid.pid'), squidInstanceInNetns(ns.name));
    removeRepoAccounts(user);
  });
  return {
    ns: ns.name,
    env,
    name,
    user,
    home,
    clone: path.join(home, name),
    provisionArgs: ['provision', 'repo', name, '--url', daemon.url('origin.git'), '--netns', ns.name],
  };
}
