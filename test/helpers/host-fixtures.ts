// Builders for the isolation backend's tests: a registry repo with every
// field set, and the file layout of one proxy instance under a temp root.
import * as path from 'node:path';
import type { RegistryRepo } from '../../src/types.js';
import { RUN_LIMIT_DEFAULTS } from '../../src/control/registry/limits.js';
import type { SquidLayout } from '../../backends/host/squid-config.js';
import { cronScheduler } from '../../src/io/cron.js';
import type { RepoState } from '../../backends/host/provision-plan.js';
import type { IdentityState } from '../../backends/host/provision-identities.js';
import type { UserAccount } from '../../src/control/repo-user/privdrop.js';
import type { DirFacts } from '../../src/control/repo-user/handoff-folders.js';

export function aRepo(name: string, overrides: Partial<RegistryRepo> = {}): RegistryRepo {
  return {
    name,
    path: `/home/agent-${name}/${name}`,
    user: `agent-${name}`,
    baseBranch: 'main',
    proxyPort: 700,
    schedule: '* * * * *',
    remotePollSec: 15,
    maxParallel: 2,
    allow: [],
    loopbackPorts: [],
    toolchainPath: '/usr/local/bin:/usr/bin:/bin',
    env: {},
    enabled: true,
    url: undefined,
    authorName: undefined,
    authorEmail: undefined,
    limits: RUN_LIMIT_DEFAULTS,
    ...overrides,
  };
}

export function squidLayoutUnder(root: string): SquidLayout {
  return {
    configFile: path.join(root, 'etc', 'squid.conf'),
    allowlistDir: path.join(root, 'etc', 'allow'),
    stateDir: path.join(root, 'state', 'squid'),
  };
}

/** What provision reads on a host where nothing of the repo exists yet. */
export function emptyRepoState(): RepoState {
  return {
    registryText: '',
    schedules: cronScheduler,
    uids: new Map(),
    account: undefined,
    identities: { agent: undefined, gate: undefined, handoff: new Map() },
    clone: { exists: false, ownerUid: undefined, isGit: false },
    gitIdentity: { name: undefined, email: undefined },
    backlogConfig: undefined,
    liveTable: undefined,
    egressFileText: undefined,
    squidFiles: new Map(),
    squidRunning: false,
    systemd: false,
    watchEnabled: false,
    ports: { unprivilegedStart: 1024, listeners: [], squidPids: [] },
    registryMode: undefined,
    uidMin: 1000,
  };
}

/** An account of repo `repo` as provisioning makes it (part: the comment's suffix). */
export function anAccount(name: string, uid: number, repo: string, part?: 'agent' | 'gate'): UserAccount {
  return {
    name,
    uid,
    gid: uid,
    home: `/home/${name}`,
    shell: '/bin/bash',
    comment: `agent-runner repo ${repo}${part ? ` ${part}` : ''}`,
  };
}

const dir = (uid: number, gid: number, mode: number): DirFacts => ({
  uid,
  gid,
  mode: 0o40000 | mode,
  isDirectory: true,
  isSymlink: false,
});

/**
 * The agent (uid 1501) and gate (1502) of repo web, runner agent-web (1500), with their hand-off folders as provision
 * leaves them; `handoff` overrides single folders.
 */
export function provisionedIdentities(handoff: Readonly<Record<string, DirFacts | undefined>> = {}): IdentityState {
  const root = '/home/agent-web.handoff';
  const facts = new Map<string, DirFacts | undefined>([
    [root, dir(0, 0, 0o755)],
    [`${root}/to-agent`, dir(1500, 1501, 0o2750)],
    [`${root}/from-agent`, dir(1501, 1500, 0o2750)],
    [`${root}/to-gate`, dir(1500, 1502, 0o2750)],
  ]);
  for (const [path, value] of Object.entries(handoff)) facts.set(path, value);
  return {
    agent: anAccount('agent-web-agent', 1501, 'web', 'agent'),
    gate: anAccount('agent-web-gate', 1502, 'web', 'gate'),
    handoff: facts,
  };
}
