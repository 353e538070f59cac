// Who of a repo may reach what, from its registry entry: the one rule the
// nftables lock, the proxy config and doctor all read. Pure.
//
// - agent: its proxy port (proxy_port) and its loopback_ports; through the
//   proxy the repo's `allow` list without the git host, so an agent cannot
//   push with a token it found, unless anonymous_fetch = true. With a
//   broker, its broker_port too (and no provider host in `allow`).
// - runner: its own proxy port (runner_proxy_port) only; through it the git
//   host alone (and api.github.com for a github.com origin: promote --pr).
// - gate: nothing at all, unless gate_egress = "agent".
import type { GateEgress, RegistryRepo } from '../../types.js';

// At least two labels and a letter in the last: an IP address or "localhost" is no proxy name.
const NAME =
  /^(?=.{1,253}$)[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*\.[a-z0-9-]*[a-z][a-z0-9-]*$/;

/**
 * The host of a clone URL (https://HOST/..., ssh://git@HOST/..., git@HOST:owner/repo), lowercased; undefined for a
 * local origin (a path, file://).
 */
export function gitHostOf(url: string | undefined): string | undefined {
  const trimmed = url?.trim();
  if (!trimmed) return undefined;
  const scp = /^(?:[A-Za-z0-9_.-]+@)?([A-Za-z0-9.-]+):(?!\/\/)/.exec(trimmed);
  if (scp && !/^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(trimmed)) return scp[1]!.toLowerCase();
  let parsed: URL;
  try {
    parsed = new URL(trimmed);
  } catch {
    return undefined;
  }
  if (!['https:', 'http:', 'ssh:', 'git:', 'git+ssh:', 'ssh+git:'].includes(parsed.protocol)) return undefined;
  return parsed.hostname.toLowerCase().replace(/^\[|\]$/g, '') || undefined;
}

/** The names the runner's proxy lets through: the git host, and for github.com its API; empty for a local origin. */
export function runnerAllow(repo: Pick<RegistryRepo, 'url' | 'promote'>): string[] {
  const host = gitHostOf(repo.url);
  if (host === undefined || !NAME.test(host)) return [];
  const api = repo.promote?.githubApiUrl ? gitHostOf(repo.promote.githubApiUrl) : undefined;
  const names = [host, ...(host === 'github.com' ? ['api.github.com'] : []), ...(api && NAME.test(api) ? [api] : [])];
  return [...new Set(names)];
}

/** Whether a dstdomain entry ("x.org" or ".x.org") matches `host`. */
export function entryMatches(entry: string, host: string): boolean {
  return entry.startsWith('.') ? host === entry.slice(1) || host.endsWith(entry) : host === entry;
}

/** The names the agent's proxy lets through: `allow` without the git host, unless anonymous_fetch. */
export function agentAllow(repo: Pick<RegistryRepo, 'allow' | 'url' | 'anonymousFetch'>): string[] {
  const host = gitHostOf(repo.url);
  if (host === undefined || repo.anonymousFetch) return [...repo.allow];
  return repo.allow.filter((entry) => entry.trim().toLowerCase() !== host);
}

/**
 * The git host when the agent must be refused it although an entry of its list still covers it (".github.com"
 * matches github.com): the proxy then denies that name on the agent's port before its list applies.
 */
export function agentDeniedGitHost(repo: Pick<RegistryRepo, 'allow' | 'url' | 'anonymousFetch'>): string | undefined {
  const host = gitHostOf(repo.url);
  if (host === undefined || repo.anonymousFetch || !NAME.test(host)) return undefined;
  return agentAllow(repo).some((entry) => entryMatches(entry, host)) ? host : undefined;
}

export function gateEgressOf(repo: Pick<RegistryRepo, 'gateEgress'>): GateEgress {
  return repo.gateEgress ?? 'none';
}

/** Every port of the proxy pool a repo holds: its proxy ports and, with a broker, its broker port. */
export function poolPortsOf(repo: Pick<RegistryRepo, 'proxyPort' | 'runnerProxyPort' | 'broker'>): number[] {
  return repo.broker === undefined ? proxyPortsOf(repo) : [...proxyPortsOf(repo), repo.broker.port];
}

/** Every proxy port a repo holds: the agent's, and the runner's once allocated. */
export function proxyPortsOf(repo: Pick<RegistryRepo, 'proxyPort' | 'runnerProxyPort'>): number[] {
  return repo.runnerProxyPort === undefined ? [repo.proxyPort] : [repo.proxyPort, repo.runnerProxyPort];
}
