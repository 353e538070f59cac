// Before dispatch starts agents: the isolation it promises must be there.
// Without the egress lock an agent's traffic goes anywhere; without the
// proxy, nothing it needs answers. Either way the run must not start by
// accident: the operator says --no-isolation to run without it on purpose.
import type { FsPort, ProcessPort } from '../ports.js';
import type { RegistryRepo } from '../types.js';
import { UsageError } from '../errors.js';
import { listEgressTable } from '../../backends/host/apply-nft.js';
import { tcpPortAnswers } from '../../backends/host/apply-squid.js';
import { EGRESS_FAMILY, EGRESS_TABLE } from '../../backends/host/nftables.js';

/** Pure: what is missing, in words; empty when isolation is in place. */
export function isolationGaps(
  repo: Pick<RegistryRepo, 'proxyPort' | 'runnerProxyPort'>,
  facts: { readonly egressLoaded: boolean; readonly proxyAnswers: boolean; readonly runnerProxyAnswers: boolean },
): string[] {
  return [
    ...(facts.egressLoaded ? [] : [`no egress lock is loaded (nft table ${EGRESS_FAMILY} ${EGRESS_TABLE} is missing)`]),
    ...(facts.proxyAnswers ? [] : [`nothing listens on the repo's proxy port 127.0.0.1:${repo.proxyPort}`]),
    ...(facts.runnerProxyAnswers || repo.runnerProxyPort === undefined
      ? []
      : [`nothing listens on the runner's proxy port 127.0.0.1:${repo.runnerProxyPort}`]),
  ];
}

/**
 * Whether to check: not with --no-isolation, nor with AGENT_RUNNER_ISOLATION=off (for commands that start dispatch
 * themselves, the dashboard's d).
 */
export function isolationWanted(flag: boolean, env: Readonly<Record<string, string | undefined>>): boolean {
  return flag && env.AGENT_RUNNER_ISOLATION !== 'off';
}

/** Throws a UsageError naming what is missing and the fix, unless the egress lock is loaded and the proxy answers. */
export async function requireIsolation(
  ports: { readonly process: ProcessPort; readonly fs: FsPort },
  repo: RegistryRepo,
): Promise<void> {
  const { process } = ports;
  const gaps = isolationGaps(repo, {
    egressLoaded: (await listEgressTable(ports)) !== undefined,
    proxyAnswers: await tcpPortAnswers({ process }, repo.proxyPort),
    runnerProxyAnswers:
      repo.runnerProxyPort === undefined ? true : await tcpPortAnswers({ process }, repo.runnerProxyPort),
  });
  if (!gaps.length) return;
  throw new UsageError(
    `repo "${repo.name}": ${gaps.join(', and ')}; its agents would run without the isolation agent-runner promises. ` +
      `Run agent-runner provision host (or systemctl start agent-runner-egress.service agent-runner-proxy.service) and check with agent-runner doctor ${repo.name}; ` +
      'or pass --no-isolation to run without it on purpose',
  );
}
