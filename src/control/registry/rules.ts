// Rules across repos of the registry that say who may reach what. Pure.
import type { RegistryRepo } from '../../types.js';

/**
 * A loopback port the agent may reach must not be a proxy port: another
 * repo's (it would use that repo's allowlist) or its own (it is already
 * allowed; listing it hides a typo or an intent to reach something else).
 */
export function loopbackPortClashes(repos: readonly RegistryRepo[]): { repo: string; problem: string; fix: string }[] {
  const proxyOf = new Map(repos.map((repo) => [repo.proxyPort, repo.name]));
  const found: { repo: string; problem: string; fix: string }[] = [];
  for (const repo of repos) {
    for (const port of repo.loopbackPorts) {
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
