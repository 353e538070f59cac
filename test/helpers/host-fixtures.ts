// Builders for the isolation backend's tests: a registry repo with every
// field set, and the file layout of one proxy instance under a temp root.
import * as path from 'node:path';
import type { RegistryRepo } from '../../src/types.js';
import { RUN_LIMIT_DEFAULTS } from '../../src/control/registry/limits.js';
import type { SquidLayout } from '../../backends/host/squid-config.js';
import { cronScheduler } from '../../src/io/cron.js';
import type { RepoState } from '../../backends/host/provision-plan.js';

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
