// Provisioning as a plan: the current state in, the steps that would bring
// it to the wanted state out. Pure, so a dry run prints exactly what a real
// run does, and a second run over a provisioned host plans nothing.
import { parse } from 'smol-toml';
import * as path from 'node:path';
import { removedHomeDir } from '../../src/paths.js';
import type { RegistryRepo } from '../../src/types.js';
import type { UserAccount } from '../../src/control/repo-user/privdrop.js';
import { formatProblems, UsageError } from '../../src/errors.js';
import { USER_PATH } from '../../src/system-path.js';
import type { ScheduleCheck } from '../../src/ports.js';
import { defaultUserFor, parseRegistry, proxyPortsBelowOf } from '../../src/control/registry/parse.js';
import { removeRepo, upsertRepo, type RegistryRepoInput } from '../../src/control/registry/edit.js';
import { rawRunLimits } from '../../src/control/registry/limits.js';
import { rawSpend } from '../../src/control/registry/spend.js';
import { rawBroker } from '../../src/control/registry/broker.js';
import { BROKER_ACCOUNT } from '../../src/control/broker/index.js';
import type { ProvisionStep } from './provision-step.js';
import { egressRuleset, renderRuleset, repoUids, rulesetDifferences } from './nftables.js';
import { squidConfig, squidProblems, type SquidOptions } from './squid-config.js';
import {
  cloneCommand,
  createUserCommands,
  gitCommitCommand,
  gitConfigCommand,
  removeUserCommand,
  writeFileAsUserCommand,
} from './users.js';
import { defaultClonePath, homeOf, type HostLayout } from './layout.js';
import { systemCommand } from './exec.js';
import { proxyPortBudget, proxyPortProblems, type PortsState, type ProxyPortBudget } from './ports.js';
import { movedProxyPorts, newRepoPorts, registryModeStep, REGISTRY_MODE } from './provision-ports.js';
import { accountProblem, runnerNameProblem } from '../../src/control/repo-user/account.js';
import {
  planIdentities,
  planIdentitiesRemove,
  type IdentityRemoveState,
  type IdentityState,
} from './provision-identities.js';
import { ensureBlockedStatus } from '../../src/board/edit.js';
import { identityNames } from '../../src/identities.js';
import { poolPortsOf } from '../../src/control/registry/egress.js';

export type { ProvisionStep } from './provision-step.js';

export const WATCH_UNIT = (repo: string) => `agent-runner-watch@${repo}.service`;

export interface RepoRequest {
  readonly name: string;
  readonly url: string | undefined;
  readonly base: string | undefined;
  /** undefined: keep what the registry says. */
  readonly allow: readonly string[] | undefined;
}

/** What is there now, as read by provision-read.ts. */
export interface RepoState {
  readonly registryText: string;
  /** The scheduler's check of a cron expression, for validating the registry (src/ports.ts Scheduler). */
  readonly schedules: ScheduleCheck;
  /** uids of the users that exist, by name (every registry user and its agent and gate, plus the requested ones). */
  readonly uids: ReadonlyMap<string, number>;
  readonly account: UserAccount | undefined;
  /** The agent and gate accounts and the hand-off folders. */
  readonly identities: IdentityState;
  readonly clone: { readonly exists: boolean; readonly ownerUid: number | undefined; readonly isGit: boolean };
  readonly gitIdentity: { readonly name: string | undefined; readonly email: string | undefined };
  readonly backlogConfig: string | undefined;
  /** Where backlogConfig was found, relative to the clone; backlog/config.yml when not said. */
  readonly backlogConfigFile?: string;
  readonly liveTable: unknown;
  readonly egressFileText: string | undefined;
  readonly squidFiles: ReadonlyMap<string, string | undefined>;
  readonly squidRunning: boolean;
  readonly systemd: boolean;
  readonly watchEnabled: boolean;
  /** Listening sockets, the live port sysctl and our Squid's pids, where the proxy runs. */
  readonly ports: PortsState;
  /** Mode of registry.toml, undefined when it does not exist yet. */
  readonly registryMode: number | undefined;
  /** UID_MIN of /etc/login.defs: accounts below it are the system's. */
  readonly uidMin: number;
}

export interface RepoPlan {
  readonly steps: readonly ProvisionStep[];
  readonly repo: RegistryRepo | undefined;
  /** What the operator still does by hand. */
  readonly checklist: readonly string[];
  /** The proxy port pool once this plan is applied (planRepo only). */
  readonly proxyPorts?: ProxyPortBudget;
}

type RawTable = Record<string, unknown>;

/** The section of the registry as written (not merged with defaults), as upsert input. */
function rawInput(text: string, name: string): RegistryRepoInput | undefined {
  let raw: RawTable | undefined;
  try {
    raw = ((parse(text) as RawTable).repos as Record<string, RawTable> | undefined)?.[name];
  } catch {
    return undefined;
  }
  if (!raw) return undefined;
  const str = (key: string) => (typeof raw![key] === 'string' ? (raw![key] as string) : undefined);
  const num = (key: string) => (typeof raw![key] === 'number' ? (raw![key] as number) : undefined);
  const input: Record<string, unknown> = {
    name,
    path: str('path') ?? '',
    user: str('user'),
    baseBranch: str('base'),
    proxyPort: num('proxy_port'),
    runnerProxyPort: num('runner_proxy_port'),
    brokerPort: num('broker_port'),
    metricsPort: num('metrics_port'),
    anonymousFetch: typeof raw.anonymous_fetch === 'boolean' ? raw.anonymous_fetch : undefined,
    gateEgress: raw.gate_egress === 'none' || raw.gate_egress === 'agent' ? raw.gate_egress : undefined,
    schedule: str('schedule'),
    maxParallel: num('max_parallel'),
    allow: Array.isArray(raw.allow) ? (raw.allow as string[]) : undefined,
    loopbackPorts: Array.isArray(raw.loopback_ports) ? (raw.loopback_ports as number[]) : undefined,
    toolchainPath: str('toolchain_path'),
    env: raw.env && typeof raw.env === 'object' ? (raw.env as Record<string, string>) : undefined,
    enabled: typeof raw.enabled === 'boolean' ? raw.enabled : undefined,
    url: str('url'),
    authorName: str('author_name'),
    authorEmail: str('author_email'),
    limits: rawRunLimits(raw),
    spend: rawSpend(raw),
    broker: rawBroker(raw),
  };
  for (const key of Object.keys(input)) if (input[key] === undefined) delete input[key];
  return input as unknown as RegistryRepoInput;
}

function validRegistry(text: string, file: string, schedules: ScheduleCheck): readonly RegistryRepo[] {
  const { registry, problems } = parseRegistry(text, file, schedules);
  const squid = squidProblems(registry.repos, file);
  if (problems.length || squid.length)
    throw new UsageError(`the registry would have problems:\n${formatProblems([...problems, ...squid])}`);
  return registry.repos;
}

/** Whether the live table, egress.json, Squid's files and process already match these repos. */
type LayerState = Pick<RepoState, 'uids' | 'liveTable' | 'egressFileText' | 'squidFiles' | 'squidRunning'>;

function layersCurrent(
  repos: readonly RegistryRepo[],
  state: LayerState,
  layout: HostLayout,
  squidOptions: SquidOptions,
) {
  const ruleset = egressRuleset(repos, repoUids(repos, state.uids));
  const egress =
    rulesetDifferences(state.liveTable, ruleset).length === 0 && state.egressFileText === renderRuleset(ruleset);
  const rendered = squidConfig(repos, layout.squid, squidOptions);
  const files = [{ path: rendered.configFile, text: rendered.config }, ...rendered.allowlists];
  const stale = [...state.squidFiles.entries()].some(
    ([file, text]) =>
      text !== undefined && file.startsWith(layout.squid.allowlistDir) && !files.some((wanted) => wanted.path === file),
  );
  // With no repo Squid has no port and is shut down: running is not required then.
  const proxy =
    (state.squidRunning || repos.length === 0) &&
    !stale &&
    files.every((file) => state.squidFiles.get(file.path) === file.text);
  return { egress, proxy };
}

export function planRepo(
  request: RepoRequest,
  state: RepoState,
  layout: HostLayout,
  squidOptions: SquidOptions = {},
): RepoPlan {
  const file = layout.registryFile;
  const parsedBefore = parseRegistry(state.registryText, file, state.schedules).registry;
  const before = parsedBefore.repos;
  const declared = proxyPortsBelowOf(parsedBefore);
  const existing = rawInput(state.registryText, request.name);
  const user = existing?.user ?? defaultUserFor(request.name);
  const tooLong = runnerNameProblem(request.name, user, file);
  if (tooLong) throw new UsageError(tooLong);
  if (state.account) {
    const refused = accountProblem(request.name, state.account, state.uidMin);
    if (refused) throw new UsageError(refused);
  }
  const home = state.account?.home ?? homeOf(user);
  const url = request.url ?? existing?.url;
  if (!url)
    throw new UsageError(`provision repo ${request.name}: --url is required for a repo the registry does not know yet`);
  const input: RegistryRepoInput = {
    ...(existing ?? {
      name: request.name,
      path: defaultClonePath(user, request.name),
      ...newRepoPorts(request.name, state.registryText, state.ports, file, declared),
    }),
    url,
    ...(request.base !== undefined ? { baseBranch: request.base } : {}),
    ...(request.allow !== undefined ? { allow: [...request.allow] } : {}),
  };
  // Repos still on an unprivileged port (older registries) move to a free privileged one.
  const moved = movedProxyPorts(
    upsertRepo(state.registryText, input),
    state.ports,
    (text, name, ports) => upsertRepo(text, { ...rawInput(text, name)!, ...ports }),
    { declared, file },
  );
  const candidate = moved.text;
  const after = validRegistry(candidate, file, state.schedules);
  const portProblems = proxyPortProblems(after, state.ports, declared);
  if (portProblems.length)
    throw new UsageError(
      `the proxy ports cannot be used:\n${portProblems.map((problem) => `  ${problem}`).join('\n')}`,
    );
  const repo = after.find((entry) => entry.name === request.name)!;
  const steps: ProvisionStep[] = [];

  const userCreated = !state.account;
  if (userCreated) {
    for (const command of createUserCommands(repo.user, home, repo.name))
      steps.push({
        description: `create user ${repo.user} (own group, home ${home} 0700, shell /bin/bash, no sudo)`,
        command,
      });
  }
  steps.push(...planIdentities(repo, state.account, home, state.identities, state.uidMin));
  if (!state.clone.exists) {
    steps.push({
      description: `clone ${url} (${repo.baseBranch}) into ${repo.path} as ${repo.user}`,
      command: cloneCommand(repo.user, home, url, repo.path, repo.baseBranch),
    });
  } else if (!state.clone.isGit) {
    throw new UsageError(
      `${repo.path} exists and is not a git checkout; move it away or set repos.${repo.name}.path in ${file}`,
    );
  } else if (state.account && state.clone.ownerUid !== state.account.uid) {
    // -h -P: links inside are changed themselves, never followed (the clone itself was checked not to be one).
    steps.push({
      description: `give ${repo.path} to ${repo.user}`,
      command: systemCommand('chown', ['-R', '-h', '-P', `${repo.user}:${repo.user}`, '--', repo.path]),
    });
  }
  const author = { name: repo.authorName ?? repo.user, email: repo.authorEmail ?? `${repo.user}@localhost` };
  if (state.gitIdentity.name !== author.name)
    steps.push({
      description: `author of agent commits: user.name "${author.name}"`,
      command: gitConfigCommand(repo.user, home, repo.path, 'user.name', author.name),
    });
  if (state.gitIdentity.email !== author.email)
    steps.push({
      description: `author of agent commits: user.email "${author.email}"`,
      command: gitConfigCommand(repo.user, home, repo.path, 'user.email', author.email),
    });

  const checklist: string[] = [];
  const boardConfigFile = state.backlogConfigFile ?? 'backlog/config.yml';
  const board = path.join(repo.path, boardConfigFile);
  const withBlocked = state.backlogConfig === undefined ? undefined : blockedStatusEdit(state.backlogConfig);
  if (state.backlogConfig !== undefined && withBlocked !== undefined && withBlocked !== state.backlogConfig) {
    const text = withBlocked;
    // Written as the user (temp file beside it, then rename), never by root: the board is the user's tree.
    steps.push({
      description: `add the Blocked status to ${board}`,
      command: writeFileAsUserCommand(repo.user, home, board, text, 0o644),
    });
    steps.push({
      description: 'commit the board change in the clone',
      command: gitCommitCommand(repo.user, home, repo.path, boardConfigFile, 'Board: add the Blocked status'),
    });
    checklist.push(
      `push the Blocked-status commit once the token is in place: setpriv --reuid=${repo.user} --regid=${repo.user} --init-groups git -C ${repo.path} push origin ${repo.baseBranch}`,
    );
  } else if (state.backlogConfig === undefined && state.clone.exists) {
    checklist.push(
      `${repo.path} has no Backlog.md board config (backlog/, .backlog/ or backlog.config.yml): run "backlog init" there as ${repo.user}; the runner adds the Blocked status`,
    );
  }

  const registryChanged = JSON.stringify(before) !== JSON.stringify(after);
  const moves = moved.moves.map((move) => `; ${move}`).join('');
  if (registryChanged)
    steps.push({
      description: `register repo ${repo.name} in ${file} (proxy port ${repo.proxyPort}, runner proxy port ${repo.runnerProxyPort ?? 'none'}${repo.broker ? `, broker port ${repo.broker.port}` : ''}, allow: ${repo.allow.join(', ') || 'nothing'}), mode 0600${moves}`,
      write: { path: file, text: candidate, mode: REGISTRY_MODE },
    });
  else steps.push(...registryModeStep(file, state.registryMode));
  const current = layersCurrent(after, state, layout, squidOptions);
  if (userCreated || !current.egress)
    steps.push({
      description: `regenerate and load the egress ruleset (${after.length} repo${after.length === 1 ? '' : 's'}), saved to ${layout.egressFile}`,
      reload: 'egress',
    });
  if (!current.proxy)
    steps.push({
      description: `regenerate the proxy config and reload it (port ${repo.proxyPort} for ${repo.name}'s agent, ${repo.runnerProxyPort ?? 'none'} for its runner)`,
      reload: 'proxy',
    });
  if (state.systemd && !state.watchEnabled) {
    steps.push({
      description: `enable and start ${WATCH_UNIT(repo.name)}`,
      command: systemCommand('systemctl', ['enable', '--now', WATCH_UNIT(repo.name)]),
    });
  } else if (!state.systemd) {
    checklist.push(`systemd is not PID 1 here: run the watch loop another way (agent-runner watch ${repo.name})`);
  }

  // The agent CLI runs as the agent identity, with its home: its login is there, never in the runner's.
  const agent = identityNames(repo.user).agent;
  checklist.push(
    ...(repo.broker
      ? Object.values(repo.broker.providers).map(
          (provider) =>
            `put the provider key in ${provider.keyFile}: one line, owned by ${BROKER_ACCOUNT}, mode 0600 (docs/operations.md, "Provider keys and the broker"); the agent needs no login`,
        )
      : [
          `log the agent CLI in as ${agent}: setpriv --reuid=${agent} --regid=${agent} --init-groups env -i HOME=${homeOf(agent)} PATH=${USER_PATH} claude /login (or codex login)`,
        ]),
    `put the git token in ${home}/.git-credentials (one line https://USER:TOKEN@HOST), owned by ${repo.user}, mode 0600, and run: git -C ${repo.path} config credential.helper store`,
    `check the result: agent-runner doctor ${repo.name}`,
  );
  const proxyPorts = proxyPortBudget(new Set(after.flatMap(poolPortsOf)), state.ports, declared);
  return { steps, repo, checklist, proxyPorts };
}

/**
 * Adds Blocked to a backlog config.yml before its finished (last) status, by
 * the board's one rule (src/board/edit.ts): after Done, Blocked would itself
 * be the finished status and a blocked dependency would count as completed.
 */
export function withBlockedStatus(config: string): string {
  return ensureBlockedStatus(config);
}

export interface RemoveState {
  readonly registryText: string;
  readonly schedules: ScheduleCheck;
  readonly uids: ReadonlyMap<string, number>;
  readonly account: UserAccount | undefined;
  readonly homeExists: boolean;
  readonly identities: IdentityRemoveState;
  readonly liveTable: unknown;
  readonly egressFileText: string | undefined;
  readonly squidFiles: ReadonlyMap<string, string | undefined>;
  readonly squidRunning: boolean;
  readonly systemd: boolean;
  readonly watchEnabled: boolean;
}

/**
 * Undoing a repo: nothing is deleted; the user's home (clone, worktrees, secrets) moves under the state dir, root-only.
 */
export function planRemove(
  name: string,
  state: RemoveState,
  layout: HostLayout,
  stamp: string,
  squidOptions: SquidOptions = {},
): RepoPlan {
  const file = layout.registryFile;
  const before = parseRegistry(state.registryText, file, state.schedules).registry.repos;
  const repo = before.find((entry) => entry.name === name);
  const user = repo?.user ?? defaultUserFor(name);
  const candidate = removeRepo(state.registryText, name);
  const after = validRegistry(candidate, file, state.schedules);
  const steps: ProvisionStep[] = [];
  if (state.systemd && state.watchEnabled)
    steps.push({
      description: `stop and disable ${WATCH_UNIT(name)}`,
      command: systemCommand('systemctl', ['disable', '--now', WATCH_UNIT(name)]),
    });
  if (candidate !== state.registryText)
    steps.push({
      description: `remove repo ${name} from ${file}`,
      write: { path: file, text: candidate, mode: REGISTRY_MODE },
    });
  const current = layersCurrent(
    after,
    { ...state, uids: new Map([...state.uids].filter(([key]) => !Object.values(identityNames(user)).includes(key))) },
    layout,
    squidOptions,
  );
  if (!current.egress || repo)
    steps.push({
      description: `regenerate and load the egress ruleset (${after.length} repo${after.length === 1 ? '' : 's'})`,
      reload: 'egress',
    });
  if (!current.proxy || repo) steps.push({ description: 'regenerate the proxy config and reload it', reload: 'proxy' });
  const home = state.account?.home ?? homeOf(user);
  const aside = removedHomeDir(layout.removedDir, name, stamp);
  const identities = planIdentitiesRemove(name, user, home, state.identities, aside);
  if (state.account) {
    steps.push({ description: `delete user ${user} (its home is kept)`, command: removeUserCommand(user) });
  }
  steps.push(...identities.users);
  if (state.homeExists || identities.moves.length)
    steps.push({
      description: `make ${layout.removedDir}, root only, for what the repo's accounts leave`,
      command: systemCommand('mkdir', ['-p', '-m', '0700', layout.removedDir]),
    });
  if (state.homeExists) {
    steps.push({
      description: `move ${home} aside to ${aside}`,
      command: systemCommand('mv', ['--no-target-directory', home, aside]),
    });
    steps.push({
      description: `give ${aside} to root (its uid may be reused)`,
      command: systemCommand('chown', ['-R', '-h', '-P', 'root:root', '--', aside]),
    });
  }
  steps.push(...identities.moves);
  return {
    steps,
    repo,
    checklist: repo
      ? [`the repo's files are under ${layout.removedDir}; delete them when you no longer need them`]
      : [],
  };
}

/**
 * The config with Blocked in place, or undefined when it cannot be edited (a broken file: doctor and the drain report
 * it).
 */
function blockedStatusEdit(config: string): string | undefined {
  try {
    return ensureBlockedStatus(config);
  } catch {
    return undefined;
  }
}
