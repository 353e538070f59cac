// Builders for the isolation backend's tests: a registry repo with every
// field set, and the file layout of one proxy instance under a temp root.
import * as path from 'node:path';
import type { RegistryRepo } from '../../src/types.js';
import { RUN_LIMIT_DEFAULTS } from '../../src/control/registry/limits.js';
import type { SquidLayout } from '../../backends/host/squid-config.js';

export function aRepo(name: string, overrides: Partial<RegistryRepo> = {}): RegistryRepo {
  return {
    name,
    path: `/home/agent-${name}/${name}`,
    user: `agent-${name}`,
    baseBranch: 'main',
    proxyPort: 700,
    schedule: '* * * * *',
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
  return { configFile: path.join(root, 'etc', 'squid.conf'), allowlistDir: path.join(root, 'etc', 'allow'), stateDir: path.join(root, 'state', 'squid') };
}
