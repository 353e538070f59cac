// Rules across repos of the registry that say who may reach what. Pure.
import type { RegistryRepo } from '../../types.js';

/**
 * A loopback port the agent may reach must not be a proxy port: another
 * repo's (it would use that repo's allowlist), its own (it is already
 * allowed; listing it hides a typo or an intent to reach something else), or
 * any runner's; nor a broker port (its own agent reaches it anyway, and
 * another repo's agent never may); nor a watcher's metrics port.
 */
export function loopbackPortClashes(repos: readonly RegistryRepo[]): { repo: string; problem: string; fix: string }[] {
  const proxyOf = new Map(repos.map((repo) => [repo.proxyPort, repo.name]));
  const runnerOf = new Map(
    repos.flatMap((repo) => (repo.runnerProxyPort === undefined ? [] : [[repo.runnerProxyPort, repo.name] as const])),
  );
  const brokerOf = new Map(
    repos.flatMap((repo) => (repo.broker === undefined ? [] : [[repo.broker.port, repo.name] as const])),
  );
  // The first repo to name a port owns it, as the clash on the port itself says.
  const metricsOf = new Map(
    repos.flatMap((repo) => (repo.metricsPort === undefined ? [] : [[repo.metricsPort, repo.name] as const])).reverse(),
  );
  const found: { repo: string; problem: string; fix: string }[] = [];
  for (const repo of repos) {
    for (const port of repo.loopbackPorts) {
      // The watcher's metrics are root's view of the repo's runs and spend: no agent reads them.
      const metrics = metricsOf.get(port);
      if (metrics !== undefined) {
        found.push({
          repo: repo.name,
          problem: `port ${port} is the metrics port of repo "${metrics}": repo "${repo.name}"'s agent would read root's metrics`,
          fix: `remove ${port} from loopback_ports of repo "${repo.name}" (or from [defaults])`,
        });
        continue;
      }
      // A broker port is reached by its own repo's agent through the egress rule of its broker, by no other.
      const broker = brokerOf.get(port);
      if (broker !== undefined) {
        found.push({
          repo: repo.name,
          problem:
            broker === repo.name
              ? `port ${port} is repo "${repo.name}"'s own broker port`
              : `port ${port} is the broker port of repo "${broker}": repo "${repo.name}"'s agent would reach another repo's broker`,
          fix:
            broker === repo.name
              ? `remove ${port} from repos.${repo.name}.loopback_ports (its agent reaches its broker anyway)`
              : `remove ${port} from loopback_ports of repo "${repo.name}" (or from [defaults])`,
        });
        continue;
      }
      // The runner's port serves the git host: an agent that reached it could push with a token it found.
      const runner = runnerOf.get(port);
      if (runner !== undefined) {
        found.push({
          repo: repo.name,
          problem: `port ${port} is the runner proxy port of repo "${runner}": the agent would reach the git host through it`,
          fix: `remove ${port} from loopback_ports of repo "${repo.name}" (or from [defaults])`,
        });
        continue;
      }
      const owner = proxyOf.get(port);
      if (owner === undefined) continue;
      found.push(
        owner === repo.name
          ? {
              repo: repo.name,
              problem: `port ${port} is repo "${repo.name}"'s own proxy port`,
              fix: `remove ${port} from repos.${repo.name}.loopback_ports (the proxy is always reachable)`,
            }
          : {
              repo: repo.name,
              problem: `port ${port} is the proxy port of repo "${owner}": repo "${repo.name}" would use "${owner}"'s allowlist`,
              fix: `remove ${port} from loopback_ports of repo "${repo.name}" (or from [defaults])`,
            },
      );
    }
  }
  return found;
}
