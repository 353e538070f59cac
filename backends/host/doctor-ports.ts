// doctor: the repo's proxy port is one no agent can bind, and our Squid is
// what listens there (not a squatter, not another local service that
// happens to answer). Read through the wrapper, where the proxy runs.
import type { RegistryRepo } from '../../src/types.js';
import { PRIVILEGED_PORT_LIMIT, proxyPortProblem } from '../../src/control/registry/proxy-ports.js';
import { describeHolders, foreignHolder, readPortsState, squidOwns, sysctlBackFix, type PortsState } from './ports.js';
import type { HostLayout } from './layout.js';
import type { HostDeps } from './provision-run.js';
import type { Check } from './check.js';

export async function proxyPortChecks(
  deps: HostDeps,
  layout: HostLayout,
  repo: RegistryRepo,
  declared: number = PRIVILEGED_PORT_LIMIT,
): Promise<Check[]> {
  const state = await readPortsState(deps, layout.squid.stateDir);
  const agent = portChecks(state, repo, repo.proxyPort, 'proxy port', declared);
  const runner =
    repo.runnerProxyPort === undefined
      ? []
      : portChecks(state, repo, repo.runnerProxyPort, 'runner proxy port', declared);
  return [...agent, ...runner];
}

function portChecks(
  state: PortsState,
  repo: RegistryRepo,
  port: number,
  label: 'proxy port' | 'runner proxy port',
  declared: number,
): Check[] {
  const unprivileged = proxyPortProblem(port, state.unprivilegedStart);
  const privileged: Check = {
    name: `${label} is privileged`,
    ok: unprivileged === undefined,
    detail:
      unprivileged ??
      `${port} is below net.ipv4.ip_unprivileged_port_start (${state.unprivilegedStart}): no agent can bind it`,
    fix:
      unprivileged === undefined
        ? ''
        : port >= declared
          ? `agent-runner provision repo ${repo.name} (moves the repo to a privileged port)`
          : sysctlBackFix(declared),
  };
  const holder = foreignHolder(port, state);
  const owned = squidOwns(port, state);
  const listening = state.listeners.filter((listener) => listener.port === port);
  const owns: Check = {
    name: `squid owns the ${label}`,
    ok: owned,
    detail: owned
      ? `127.0.0.1:${port} is held by agent-runner's Squid (${describeHolders(listening)})`
      : holder
        ? `port ${port} is held by ${holder}, not by agent-runner's Squid${state.squidPids.length ? ` (pids ${state.squidPids.join(', ')})` : ' (not running)'}`
        : `nothing listens on 127.0.0.1:${port}`,
    fix: owned
      ? ''
      : holder
        ? `stop what holds it (ss -ltnp 'sport = :${port}'), then reload the proxy: agent-runner provision repo ${repo.name}`
        : 'start the proxy: systemctl start agent-runner-proxy.service (see its cache.log)',
  };
  return [privileged, owns];
}
