// Real checks of one repo's isolation, done the way an agent would meet it:
// network probes run as the repo user (setpriv), inside the namespace the
// wrapper names (tests), against targets the caller may aim elsewhere.
import * as path from 'node:path';
import { reposStateDir } from '../../src/paths.js';
import type { RegistryRepo, Registry } from '../../src/types.js';
import { agentEnvironment, dropPrivileges, lookupUser } from '../../src/control/repo-user/privdrop.js';
import { stateDirProblems } from '../../src/control/state-dirs.js';
import { checkRunLimits } from './doctor-limits.js';
import { checkKubernetes } from '../kubernetes/doctor.js';
import { onHost } from './exec.js';
import { listEgressTable } from './apply-nft.js';
import { parseSquidConfig, tcpPortAnswers } from './apply-squid.js';
import {
  describeIdentityEgress,
  egressRuleset,
  repoUids,
  rulesetDifferences,
  uidRulesLoaded,
  type NftRuleset,
  type RepoUids,
} from './nftables.js';
import { identityNames, type Identity } from '../../src/identities.js';
import { agentAllow, entryMatches, gitHostOf, runnerAllow } from '../../src/control/registry/egress.js';
import { allowlistFile, renderAllowlist } from './squid-config.js';
import type { Check } from './check.js';
import type { HostLayout } from './layout.js';
import type { HostDeps } from './provision-run.js';
import { proxyPortChecks } from './doctor-ports.js';
import { inClone, MAX_USER_CONFIG_BYTES, statClone, userTreePath } from './user-tree.js';
import { UntrustedPathError } from '../../src/errors.js';
import { getConfigArgs } from '../../src/git/plumbing.js';
import { proxyPortsBelowOf } from '../../src/control/registry/parse.js';

export type { Check } from './check.js';

export interface DoctorTargets {
  /** A non-loopback address the agent must not reach directly. */
  readonly directAddress: string;
  readonly directPort: number;
  /** A URL on an allowlisted domain; undefined: derived from the allowlist. */
  readonly allowedUrl?: string;
  /** A private address the proxy must refuse (cloud metadata by default). */
  readonly privateUrl: string;
}

export const DEFAULT_TARGETS: DoctorTargets = {
  directAddress: '1.1.1.1',
  directPort: 443,
  privateUrl: 'http://169.254.169.254/latest/meta-data/',
};

const check = (name: string, ok: boolean, detail: string, fix: string): Check => ({
  name,
  ok,
  detail,
  fix: ok ? '' : fix,
});

export async function doctorRepo(
  deps: HostDeps,
  layout: HostLayout,
  registry: Registry,
  repo: RegistryRepo,
  targets: DoctorTargets = DEFAULT_TARGETS,
): Promise<Check[]> {
  const { fs, process } = deps;
  const wrap = deps.wrap ?? onHost;
  const checks: Check[] = [];
  const reprovision = `agent-runner provision repo ${repo.name}`;
  const account = await lookupUser(process, repo.user);
  checks.push(
    check(
      'user exists',
      account !== undefined,
      account ? `${repo.user} is uid ${account.uid}` : `no user ${repo.user}`,
      reprovision,
    ),
  );

  // The layers root owns: the lock, the proxy config, the proxy process.
  const byUser = new Map<string, number>();
  for (const entry of registry.repos) {
    for (const name of Object.values(identityNames(entry.user))) {
      const user = name === repo.user ? account : await lookupUser(process, name);
      if (user) byUser.set(name, user.uid);
    }
  }
  const uids = repoUids(registry.repos, byUser);
  const expected = egressRuleset(registry.repos, uids);
  const live = await listEgressTable({ process, fs, wrap });
  const differences = rulesetDifferences(live, expected);
  checks.push(
    check(
      'egress lock loaded',
      differences.length === 0,
      differences.length ? differences.slice(0, 3).join('; ') : 'the live nft table equals the generated one',
      `reload it: ${reprovision} (or at boot: systemctl restart agent-runner-egress.service; note nftables.service flushes the whole ruleset)`,
    ),
  );
  checks.push(identityEgressCheck(repo, uids.get(repo.name) ?? {}, live, expected, reprovision));
  const parseError = await parseSquidConfig({ process, wrap }, layout.squid.configFile);
  checks.push(
    check(
      'proxy config parses',
      parseError === undefined,
      parseError ?? `${layout.squid.configFile} parses`,
      `regenerate it: ${reprovision}`,
    ),
  );
  const listText = await fs.readTextIfExists(allowlistFile(layout.squid, repo.name));
  checks.push(
    check(
      'allowlist matches the registry',
      listText === renderAllowlist(repo),
      listText === undefined
        ? 'the allowlist file is missing'
        : listText === renderAllowlist(repo)
          ? `${repo.allow.length} domain(s)`
          : `${allowlistFile(layout.squid, repo.name)} differs from the registry`,
      `regenerate and reload: ${reprovision}`,
    ),
  );
  const answers = await tcpPortAnswers({ process, wrap }, repo.proxyPort);
  checks.push(
    check(
      'proxy answers',
      answers,
      answers ? `127.0.0.1:${repo.proxyPort} accepts connections` : `nothing listens on 127.0.0.1:${repo.proxyPort}`,
      'start the proxy: systemctl start agent-runner-proxy.service (see its cache.log)',
    ),
  );
  checks.push(...(await proxyPortChecks(deps, layout, repo, proxyPortsBelowOf(registry))));

  // Ownership and modes.
  const clone = await statClone(fs, account?.home, repo.path).catch((error: unknown) =>
    error instanceof UntrustedPathError ? error : Promise.reject(error),
  );
  const cloneOwned =
    account !== undefined &&
    !(clone instanceof UntrustedPathError) &&
    clone?.isDirectory === true &&
    clone.uid === account.uid;
  const cloneDetail =
    clone instanceof UntrustedPathError
      ? clone.message
      : clone
        ? `${repo.path} is owned by uid ${clone.uid}`
        : `${repo.path} does not exist`;
  checks.push(
    check('repo owned by its user', cloneOwned, cloneDetail, `chown -R -h -P ${repo.user}:${repo.user} ${repo.path}`),
  );
  if (account) {
    const home = await fs.stat(account.home);
    checks.push(
      check(
        'home is private',
        home !== undefined && (home.mode & 0o077) === 0,
        home ? `${account.home} mode ${(home.mode & 0o777).toString(8)}` : `${account.home} does not exist`,
        `chmod 0700 ${account.home}`,
      ),
    );
  }
  checks.push(await stateDirsCheck(fs, layout.stateDir));
  checks.push(await checkRunLimits(deps, repo));
  checks.push(...(await checkKubernetes(fs, repo, account)));
  const gates = await gatesScript(deps, repo, account?.home);
  checks.push(
    check(
      'gates script is executable',
      gates.ok,
      gates.detail,
      `chmod +x ${gates.file} and commit it (or set "gates" in .agent/config.json)`,
    ),
  );
  const agent =
    (await process.which('claude', repo.toolchainPath)) ?? (await process.which('codex', repo.toolchainPath));
  checks.push(
    check(
      'agent CLI present',
      agent !== undefined,
      agent ?? `neither claude nor codex on ${repo.toolchainPath}`,
      `install it (npm i -g @anthropic-ai/claude-code) or set repos.${repo.name}.toolchain_path`,
    ),
  );
  if (!account) return checks;

  // As the agent, the way an agent meets the world; without an agent user the network probes cannot be tried.
  const agentName = identityNames(repo.user).agent;
  const agentAccount = await lookupUser(process, agentName);
  const asAccount = (who: NonNullable<typeof account>) => {
    const env = agentEnvironment({ user: who, path: repo.toolchainPath, proxyPort: repo.proxyPort, extra: {} });
    return (program: string, args: string[]) =>
      process.run(wrap(dropPrivileges(who, { program, args, env, cwd: '/' })));
  };
  const asUser = asAccount(account);
  if (agentAccount) checks.push(...(await agentProbes(repo, targets, asAccount(agentAccount), reprovision)));
  else
    checks.push(
      check(
        "the agent's egress is tried",
        false,
        `no user ${agentName}: the agent's network cannot be tried`,
        `create the repo's identities: ${reprovision}`,
      ),
    );
  checks.push(...(await runnerProbes(repo, asUser, reprovision)));
  for (const other of registry.repos) {
    if (other.name === repo.name) continue;
    const home = path.dirname(other.path);
    const peek = await asUser('ls', ['--', home]);
    checks.push(
      check(
        `cannot read ${other.name}`,
        peek.exitCode !== 0,
        peek.exitCode !== 0 ? `${home} is closed to ${repo.user}` : `${repo.user} can list ${home}`,
        `chmod 0700 ${home}`,
      ),
    );
  }
  const name = await asUser('git', getConfigArgs(repo.path, 'user.name'));
  const email = await asUser('git', getConfigArgs(repo.path, 'user.email'));
  const identity = name.exitCode === 0 && email.exitCode === 0;
  checks.push(
    check(
      'git identity resolves',
      identity,
      identity ? `${name.stdout.trim()} <${email.stdout.trim()}>` : 'user.name or user.email is not set in the clone',
      reprovision,
    ),
  );
  return checks;
}

type RunAs = (program: string, args: string[]) => ReturnType<HostDeps['process']['run']>;

/** Pure: a request that was refused (403) or got no answer at all ('000': no proxy there) did not get through. */
function unreached(status: string): boolean {
  return status === '403' || status === '000';
}

function described(status: string): string {
  return status === '000' ? 'no answer (nothing reached)' : `HTTP ${status}`;
}

/** The HTTP status a GET of `url` through the proxy on `port` gets, as the identity `asUser` runs as ('000': none). */
async function statusThroughProxy(asUser: RunAs, port: number, url: string): Promise<string> {
  const result = await asUser('curl', [
    '-s',
    '-o',
    '/dev/null',
    '-w',
    '%{http_code}',
    '--max-time',
    '10',
    '--noproxy',
    '',
    '-x',
    `http://127.0.0.1:${port}`,
    url,
  ]);
  return result.stdout.trim() || '000';
}

/** The network as the agent meets it: direct egress rejected, the proxy refusing what it must and passing its list. */
async function agentProbes(
  repo: RegistryRepo,
  targets: DoctorTargets,
  asUser: RunAs,
  reprovision: string,
): Promise<Check[]> {
  const checks: Check[] = [];
  const curlProxy = (url: string) => statusThroughProxy(asUser, repo.proxyPort, url);
  const direct = await asUser('curl', [
    '-s',
    '-o',
    '/dev/null',
    '--noproxy',
    '*',
    '--max-time',
    '5',
    `http://${targets.directAddress}:${targets.directPort}/`,
  ]);
  checks.push(
    check(
      'direct egress is rejected',
      direct.exitCode === 7,
      direct.exitCode === 7
        ? `TCP to ${targets.directAddress}:${targets.directPort} refused`
        : direct.exitCode === 28
          ? `TCP to ${targets.directAddress}:${targets.directPort} timed out instead of being rejected`
          : `TCP to ${targets.directAddress}:${targets.directPort} got through (curl exit ${direct.exitCode})`,
      `load the egress lock: ${reprovision}`,
    ),
  );
  const denied = await curlProxy('http://agent-runner-doctor.invalid/');
  checks.push(
    check(
      'proxy refuses unlisted domains',
      denied === '403',
      `agent-runner-doctor.invalid -> HTTP ${denied}`,
      `regenerate the proxy config: ${reprovision}`,
    ),
  );
  const privateStatus = await curlProxy(targets.privateUrl);
  checks.push(
    check(
      'proxy refuses private addresses',
      privateStatus === '403',
      `${targets.privateUrl} -> HTTP ${privateStatus}`,
      `regenerate the proxy config: ${reprovision}`,
    ),
  );
  // The git host is the runner's: a token an agent found is no use to it there.
  const gitHost = gitHostOf(repo.url);
  if (gitHost && !repo.anonymousFetch) {
    const status = await curlProxy(`http://${gitHost}/`);
    checks.push(
      check(
        'the agent cannot reach the git host',
        unreached(status),
        `${gitHost} through the agent's port ${repo.proxyPort} -> ${described(status)}`,
        `regenerate the proxy config: ${reprovision}`,
      ),
    );
  }
  const allowedUrl = targets.allowedUrl ?? firstAllowedUrl(repo);
  if (allowedUrl) {
    const status = await curlProxy(allowedUrl);
    const reachedNothing = status === '000' || status === '503' || status === '502';
    checks.push(
      check(
        'allowlisted domain goes through',
        status !== '403',
        reachedNothing
          ? `${allowedUrl} -> HTTP ${status}: the proxy allowed it, upstream not reachable from here`
          : `${allowedUrl} -> HTTP ${status}`,
        `check repos.${repo.name}.allow and reload: ${reprovision}`,
      ),
    );
  }
  return checks;
}

/** The runner's network: its own proxy port, and there nothing but the git host (an allowlisted name is refused). */
async function runnerProbes(repo: RegistryRepo, asRunner: RunAs, reprovision: string): Promise<Check[]> {
  if (repo.runnerProxyPort === undefined) return [];
  const other = agentAllow(repo).find((entry) => !runnerAllow(repo).some((own) => entryMatches(own, entry)));
  const name = other?.replace(/^\./, '') ?? 'agent-runner-doctor.invalid';
  const status = await statusThroughProxy(asRunner, repo.runnerProxyPort, `http://${name}/`);
  return [
    check(
      'the runner reaches nothing but the git host',
      unreached(status),
      `${name} through the runner's port ${repo.runnerProxyPort} -> ${described(status)}`,
      `regenerate the proxy config: ${reprovision}`,
    ),
  ];
}

/**
 * $STATE root:proxy 0750 (or stricter), $STATE/repos and every repos/NAME root-only 0700 (src/control/state-dirs.ts).
 */
async function stateDirsCheck(fs: HostDeps['fs'], stateDir: string): Promise<Check> {
  const name = 'state and lock dirs are safe';
  const state = await fs.stat(stateDir);
  if (!state) return check(name, false, `${stateDir} does not exist`, 'agent-runner provision host');
  const reposDir = reposStateDir(stateDir);
  const dirs: { path: string; mode: number; uid: number }[] = [];
  for (const dir of [reposDir, ...(await fs.list(reposDir)).map((entry) => path.join(reposDir, entry))]) {
    const stat = await fs.stat(dir);
    if (stat?.isDirectory) dirs.push({ path: dir, mode: stat.mode, uid: stat.uid });
  }
  const problems = stateDirProblems({ path: stateDir, mode: state.mode, uid: state.uid }, dirs);
  const octal = (mode: number) => (mode & 0o7777).toString(8).padStart(4, '0');
  const open = dirs.filter((dir) => dir.uid !== 0 || (dir.mode & 0o077) !== 0).map((dir) => dir.path);
  const fix = [
    ...((state.mode & 0o027) !== 0 || state.uid !== 0
      ? [`chown root:proxy ${stateDir} && chmod 0750 ${stateDir}`]
      : []),
    ...(open.length ? [`chown root:root ${open.join(' ')} && chmod 0700 ${open.join(' ')}`] : []),
  ].join(' && ');
  return check(
    name,
    problems.length === 0,
    problems.length
      ? problems.join('; ')
      : `${stateDir} mode ${octal(state.mode)}, ${dirs.length} repo state dir(s) root-only`,
    `${fix} (or: agent-runner provision host)`,
  );
}

/**
 * One line for the repo's three identities: each one's rules are in the live table as generated (the runner its git
 * proxy, the agent its proxy and loopback ports, the gate nothing unless gate_egress = "agent"). A user that does not
 * exist yet is said, not failed: nothing can run as it.
 */
function identityEgressCheck(
  repo: RegistryRepo,
  uids: RepoUids,
  live: unknown,
  expected: NftRuleset,
  reprovision: string,
): Check {
  const names = identityNames(repo.user);
  const parts: string[] = [];
  const wrong: string[] = [];
  for (const identity of ['runner', 'agent', 'gate'] as const satisfies readonly Identity[]) {
    const uid = uids[identity];
    if (uid === undefined) {
      parts.push(`${identity} ${names[identity]}: no such user yet`);
      continue;
    }
    const loaded = uidRulesLoaded(live, expected, uid);
    if (!loaded) wrong.push(identity);
    parts.push(
      `${identity} ${names[identity]} (uid ${uid}): ${describeIdentityEgress(repo, identity)}${loaded ? '' : ' NOT LOADED'}`,
    );
  }
  const noRunnerPort = repo.runnerProxyPort === undefined;
  if (noRunnerPort) parts.push(`repos.${repo.name}.runner_proxy_port is not set: the runner reaches nothing`);
  return check(
    'egress per identity',
    wrong.length === 0 && !noRunnerPort,
    parts.join('; '),
    noRunnerPort
      ? `${reprovision} (it allocates the runner proxy port and reloads the lock)`
      : `reload the lock: ${reprovision}`,
  );
}

function firstAllowedUrl(repo: RegistryRepo): string | undefined {
  const allow = agentAllow(repo);
  const domain = allow.find((entry) => !entry.startsWith('.')) ?? allow[0]?.slice(1);
  return domain ? `https://${domain}/` : undefined;
}

/**
 * The gate named by .agent/config.json (default .agent/gates.sh), read and checked without following a link in the
 * clone.
 */
async function gatesScript(
  deps: HostDeps,
  repo: RegistryRepo,
  home: string | undefined,
): Promise<{ ok: boolean; detail: string; file: string }> {
  let gates = '.agent/gates.sh';
  const clone = userTreePath(home, repo.path);
  const file = () => path.resolve(repo.path, gates);
  try {
    const configAt = inClone(clone, '.agent/config.json');
    const config = await deps.fs.readUntrusted(configAt.root, configAt.relative, MAX_USER_CONFIG_BYTES);
    if (config) {
      try {
        const parsed = JSON.parse(config) as { gates?: unknown };
        if (typeof parsed.gates === 'string') gates = parsed.gates;
      } catch {
        // A broken config is reported by the run itself; the default is checked here.
      }
    }
    if (path.isAbsolute(gates))
      return {
        ok: false,
        detail: `"gates": "${gates}" in .agent/config.json is not a path inside the clone`,
        file: file(),
      };
    const gatesAt = inClone(clone, gates);
    const stat = await deps.fs.statUntrusted(gatesAt.root, gatesAt.relative);
    if (!stat) return { ok: false, detail: `${file()} does not exist`, file: file() };
    if (stat.isSymlink)
      return {
        ok: false,
        detail: `${file()} is a symbolic link; doctor does not follow links in the clone`,
        file: file(),
      };
    return {
      ok: (stat.mode & 0o111) !== 0 && stat.isFile,
      detail: `${file()} mode ${(stat.mode & 0o777).toString(8)}`,
      file: file(),
    };
  } catch (error) {
    if (error instanceof UntrustedPathError) return { ok: false, detail: error.message, file: file() };
    throw error;
  }
}
