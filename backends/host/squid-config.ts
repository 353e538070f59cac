// The allowlist proxy as data: one Squid instance of ours, two listening
// ports per repo on 127.0.0.1 (the agent's and the runner's), and the port a
// request arrives on decides which list applies. Pure: repos and a file
// layout in, file texts out.
//
// Squid facts this lives with (5.7): without `-n`, `dstdomain` reverse-
// resolves a bare IP and may let it through, so lists use `dstdomain -n`;
// a list holding both ".example.com" and "api.example.com" is FATAL at
// parse time; a missing list file only warns. `dst` on a named request
// resolves the name, so an allowlisted name that points into a private
// range is still refused (it is evaluated last, so names not on the list
// never cost a DNS lookup).
import type { ConfigProblem, RegistryRepo } from '../../src/types.js';
import { FIRST_PROXY_PORT } from '../../src/control/registry/proxy-ports.js';
import * as path from 'node:path';
import { agentAllow, agentDeniedGitHost, runnerAllow } from '../../src/control/registry/egress.js';
import { squidAccessLog, squidAllowlistFile, squidCacheLog, squidPidFile } from '../../src/paths.js';

/** Squid's `-n` service name: alphanumeric only (Squid refuses "agent-runner"). */
export const SQUID_INSTANCE = 'agentrunner';

/**
 * The service name of the Squid provision runs inside a network namespace: its own shared-memory segments, apart from
 * the host's.
 */
export function squidInstanceInNetns(netns: string): string {
  return `${SQUID_INSTANCE}${netns.replace(/[^A-Za-z0-9]/g, '')}`;
}

export interface SquidLayout {
  /** The live config, e.g. /etc/agent-runner/squid.conf. */
  readonly configFile: string;
  /** One `<repo>.txt` allowlist per repo, e.g. /etc/agent-runner/allow. */
  readonly allowlistDir: string;
  /** pid file and logs, writable by the effective user, e.g. /var/lib/agent-runner/squid. */
  readonly stateDir: string;
}

export interface SquidOptions {
  /** Name lookups from this file instead of /etc/hosts (tests map fake names). */
  readonly hostsFile?: string;
  /** The unprivileged user Squid drops to. */
  readonly effectiveUser?: string;
  readonly listenAddress?: string;
}

export interface RenderedFile {
  readonly path: string;
  readonly text: string;
}

export interface RenderedSquid {
  readonly configFile: string;
  readonly config: string;
  readonly allowlists: readonly RenderedFile[];
}

/** Destinations no agent may reach through the proxy, whatever its allowlist says. */
const DENIED_DESTINATIONS: readonly string[] = [
  '0.0.0.0/8', // "this host": connects to 0.0.0.0 land on loopback
  '10.0.0.0/8',
  '100.64.0.0/10', // carrier-grade NAT
  '127.0.0.0/8',
  '169.254.0.0/16', // link-local, cloud metadata
  '172.16.0.0/12',
  '192.168.0.0/16',
  '::1',
  'fc00::/7', // unique local
  'fe80::/10', // link-local
];

/** The agent's list of a repo (its proxy_port). */
export function allowlistFile(layout: SquidLayout, repo: string): string {
  return squidAllowlistFile(layout.allowlistDir, repo);
}

/** The runner's list of a repo (its runner_proxy_port); a repo name has no dot, so no repo's list is named so. */
export function runnerAllowlistFile(layout: SquidLayout, repo: string): string {
  return path.join(layout.allowlistDir, `${repo}.runner.txt`);
}

const LABEL = '[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?';
// At least two labels, and a top-level label with a letter: "10.0.0.1" is an address, not a name.
const DOMAIN = new RegExp(`^\\.?${LABEL}(?:\\.${LABEL})*\\.[a-z0-9-]*[a-z][a-z0-9-]*$`);

/** Whether `outer` (".example.com" or "example.com") already matches every name `inner` matches. */
function covers(outer: string, inner: string): boolean {
  if (!outer.startsWith('.')) return false;
  const bare = outer.slice(1);
  const innerBare = inner.startsWith('.') ? inner.slice(1) : inner;
  return innerBare === bare || innerBare.endsWith(outer);
}

/**
 * Problems with repos' allowlists and ports, all at once: entries that are
 * not domain names (IPs are refused: the proxy only allows names), entries
 * one another already covers (Squid refuses those at parse time), two
 * repos on one port.
 */
export function squidProblems(repos: readonly RegistryRepo[], file: string): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  const ports = new Map<number, string>();
  for (const repo of repos) {
    const key = `repos.${repo.name}`;
    const own = [
      { port: repo.proxyPort, key: 'proxy_port', label: `the proxy port of "${repo.name}"` },
      ...(repo.runnerProxyPort === undefined
        ? []
        : [{ port: repo.runnerProxyPort, key: 'runner_proxy_port', label: `the runner proxy port of "${repo.name}"` }]),
    ];
    for (const { port, key: portKey, label } of own) {
      const other = ports.get(port);
      if (other)
        problems.push({
          file,
          key: `${key}.${portKey}`,
          problem: `port ${port} is also ${other}`,
          fix: `give every repo its own proxy port and runner proxy port (provision allocates free privileged ones from ${FIRST_PROXY_PORT})`,
        });
      ports.set(port, label);
    }
    const entries = repo.allow.map((entry) => entry.trim().toLowerCase());
    entries.forEach((entry, index) => {
      if (!DOMAIN.test(entry)) {
        problems.push({
          file,
          key: `${key}.allow[${index}]`,
          problem: `"${repo.allow[index]}" is not a domain name`,
          fix: 'list domains like "github.com" or ".npmjs.org" (leading dot: the domain and its subdomains); IP addresses are not allowed',
        });
        return;
      }
      entries.forEach((outer, outerIndex) => {
        if (outerIndex === index || !DOMAIN.test(outer)) return;
        const duplicate = outer === entry && outerIndex < index;
        if (duplicate || (outer !== entry && covers(outer, entry))) {
          problems.push({
            file,
            key: `${key}.allow[${index}]`,
            problem: `"${entry}" is already covered by "${outer}"`,
            fix: `remove "${entry}"`,
          });
        }
      });
    });
  }
  return problems;
}

/** The agent's allowlist file of one repo: one domain a line, the registry's allow without the git host. */
export function renderAllowlist(repo: RegistryRepo): string {
  const lines = agentAllow(repo).map((entry) => entry.trim().toLowerCase());
  return `# repo ${repo.name}: domains its agents may reach (from the registry)\n${lines.map((line) => `${line}\n`).join('')}`;
}

/** The runner's allowlist file of one repo: the git host (and for github.com its API), or nothing. */
export function renderRunnerAllowlist(repo: RegistryRepo): string {
  const lines = runnerAllow(repo);
  return `# repo ${repo.name}: the git host its runner may reach (from the registry's url)\n${lines.map((line) => `${line}\n`).join('')}`;
}

export function squidConfig(
  repos: readonly RegistryRepo[],
  layout: SquidLayout,
  options: SquidOptions = {},
): RenderedSquid {
  const sorted = [...repos].sort((a, b) => a.name.localeCompare(b.name));
  const listen = options.listenAddress ?? '127.0.0.1';
  const state = layout.stateDir;
  const lines: string[] = [
    '# agent-runner allowlist proxy. Generated from the registry by',
    '# `agent-runner provision`; edits here are overwritten.',
    '# Two ports per repo: the port a request arrives on names the repo and the',
    "# identity, and only that list applies: the agent's (the repo's allow, not",
    "# the git host) or the runner's (the git host alone). nftables lets each",
    '# identity reach only its own port.',
    '',
    `pid_filename ${squidPidFile(state)}`,
    `cache_log ${squidCacheLog(state)}`,
    'logformat agent_runner %ts.%03tu repo=%{repo}note client=%>a:%>p status=%Ss/%03>Hs bytes=%<st method=%rm url=%ru upstream=%<a identity=%{identity}note',
    `access_log stdio:${squidAccessLog(state)} agent_runner`,
    `coredump_dir ${state}`,
    `cache_effective_user ${options.effectiveUser ?? 'proxy'}`,
    'visible_hostname agent-runner',
    ...(options.hostsFile ? [`hosts_file ${options.hostsFile}`] : []),
    '',
    '# No cache and no side channels: a pure filtering forwarder.',
    'cache deny all',
    'cache_mem 0 MB',
    'pinger_enable off',
    'icp_port 0',
    'htcp_port 0',
    'snmp_port 0',
    'forwarded_for delete',
    'httpd_suppress_version_string on',
    '',
    'acl Safe_ports port 80 443',
    'acl SSL_ports port 443',
    'acl CONNECT method CONNECT',
    `acl to_private dst ${DENIED_DESTINATIONS.join(' ')}`,
    '',
  ];
  const access: string[] = [];
  const denials: string[] = [];
  for (const repo of sorted) {
    const gitHost = agentDeniedGitHost(repo);
    lines.push(
      `# repo ${repo.name} (user ${repo.user}): the agent's port`,
      `http_port ${listen}:${repo.proxyPort} name=${repo.name}`,
      `acl repo_${repo.name} myportname ${repo.name}`,
      `acl allow_${repo.name} dstdomain -n "${allowlistFile(layout, repo.name)}"`,
      ...(gitHost ? [`acl githost_${repo.name} dstdomain -n ${gitHost}`] : []),
      `note repo ${repo.name} repo_${repo.name}`,
      `note identity agent repo_${repo.name}`,
      '',
    );
    if (gitHost) denials.push(`http_access deny repo_${repo.name} githost_${repo.name}`);
    access.push(`http_access allow repo_${repo.name} allow_${repo.name} !to_private`);
    if (repo.runnerProxyPort === undefined) continue;
    lines.push(
      `# repo ${repo.name}: the runner's port, the git host alone`,
      `http_port ${listen}:${repo.runnerProxyPort} name=${repo.name}.runner`,
      `acl runner_${repo.name} myportname ${repo.name}.runner`,
      `acl runnerallow_${repo.name} dstdomain -n "${runnerAllowlistFile(layout, repo.name)}"`,
      `note repo ${repo.name} runner_${repo.name}`,
      `note identity runner runner_${repo.name}`,
      '',
    );
    access.push(`http_access allow runner_${repo.name} runnerallow_${repo.name} !to_private`);
  }
  lines.push(
    '# Order matters: refusals first, then one allow per repo (its port, its',
    '# list, and never a private destination), then deny.',
    'http_access deny manager',
    'http_access deny !Safe_ports',
    'http_access deny CONNECT !SSL_ports',
    // An agent's list may cover the git host (".github.com"): refused on its port all the same.
    ...denials,
    ...access,
    'http_access deny all',
    '',
  );
  return {
    configFile: layout.configFile,
    config: lines.join('\n'),
    allowlists: sorted.flatMap((repo) => [
      { path: allowlistFile(layout, repo.name), text: renderAllowlist(repo) },
      ...(repo.runnerProxyPort === undefined
        ? []
        : [{ path: runnerAllowlistFile(layout, repo.name), text: renderRunnerAllowlist(repo) }]),
    ]),
  };
}
