// The host backend's files, all built in src/paths.ts from the registry's
// directory and the state dir, so a test points both at temp dirs.
import t from 'tap';
import { hostLayout } from '../../backends/host/layout.js';
import {
  removedHomeDir,
  repoStateDir,
  reposStateDir,
  squidAccessLog,
  squidAllowlistFile,
  squidCacheLog,
  squidPidFile,
} from '../../src/paths.js';

t.test('every file hangs off the config dir or the state dir', async (t) => {
  const cases: readonly [Record<string, string>, string, string][] = [
    [{}, '/etc/agent-runner', '/var/lib/agent-runner'],
    [{ AGENT_RUNNER_CONFIG: '/cfg/registry.toml', AGENT_RUNNER_STATE: '/state' }, '/cfg', '/state'],
  ];
  for (const [env, config, state] of cases) {
    t.same(
      hostLayout(env),
      {
        registryFile: `${config}/registry.toml`,
        configDir: config,
        stateDir: state,
        egressFile: `${config}/egress.json`,
        squid: { configFile: `${config}/squid.conf`, allowlistDir: `${config}/allow`, stateDir: `${state}/squid` },
        removedDir: `${state}/removed`,
        unitDir: '/etc/systemd/system',
      },
      JSON.stringify(env),
    );
  }
});

t.test('the files inside those dirs', async (t) => {
  t.equal(squidAllowlistFile('/cfg/allow', 'web'), '/cfg/allow/web.txt');
  t.equal(squidPidFile('/state/squid'), '/state/squid/squid.pid');
  t.equal(squidCacheLog('/state/squid'), '/state/squid/cache.log');
  t.equal(squidAccessLog('/state/squid'), '/state/squid/access.log');
  t.equal(removedHomeDir('/state/removed', 'web', '20260101T000000'), '/state/removed/web-20260101T000000');
  t.equal(reposStateDir('/state'), '/state/repos');
  t.equal(repoStateDir('/state', 'web'), '/state/repos/web');
});
