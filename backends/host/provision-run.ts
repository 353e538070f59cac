// Reading the current state for the planner, and applying a plan's steps.
// The planner (provision-plan.ts) is pure; this is where the effects live,
// all through the ports. nft and Squid run through the wrapper (a network
// namespace in tests); users, clones and files are the host's.
import * as path from 'node:path';
import type { Clock, FsPort, ProcessPort, ScheduleCheck } from '../../src/ports.js';
import { FailedError } from '../../src/errors.js';
import { lookupUser } from '../../src/control/repo-user/privdrop.js';
import { defaultUserFor, parseRegistry, readRegistry } from '../../src/control/registry/parse.js';
import { describeFailure, onHost, systemCommand, type CommandWrapper } from './exec.js';
import { applyRuleset, listEgressTable } from './apply-nft.js';
import { applySquid, PROXY_UNIT, squidServing, type SquidApplyOutcome } from './apply-squid.js';
import { egressRuleset, leftOutIdentities, repoUids } from './nftables.js';
import { identityNames } from '../../src/identities.js';
import { proxyPortsOf } from '../../src/control/registry/egress.js';
import type { SquidOptions } from './squid-config.js';
import { homeOf, type HostLayout } from './layout.js';
import { readPortsState } from './ports.js';
import { readUidMin } from '../../src/control/repo-user/account.js';
import { systemdIsRunning } from '../../src/control/dispatch/limits.js';
import { readCloneFacts } from './user-tree.js';
import { WATCH_UNIT, type ProvisionStep, type RemoveState, type RepoState } from './provision-plan.js';
import { readHandoffFacts } from '../../src/control/repo-user/handoff-folders.js';
import { identityRemovePaths } from './provision-identities.js';

export interface HostDeps {
  readonly process: ProcessPort;
  readonly fs: FsPort;
  readonly clock: Clock;
  /** The scheduler's check of a cron expression, for validating the registry. */
  readonly scheduler: ScheduleCheck;
  /** Where nft and Squid commands run (the host, or a namespace). */
  readonly wrap?: CommandWrapper;
  readonly squidInstance?: string;
  readonly squidOptions?: SquidOptions;
}

async function unitEnabled(process: ProcessPort, unit: string): Promise<boolean> {
  return (await process.run(systemCommand('systemctl', ['is-enabled', '--quiet', unit]))).exitCode === 0;
}

/** uids of the users that exist among these registry users and their agents and gates, by name. */
async function uidsOf(process: ProcessPort, users: readonly string[]): Promise<Map<string, number>> {
  const uids = new Map<string, number>();
  for (const user of new Set(users.flatMap((name) => Object.values(identityNames(name))))) {
    const account = await lookupUser(process, user);
    if (account) uids.set(user, account.uid);
  }
  return uids;
}

async function layerState(deps: HostDeps, layout: HostLayout, users: readonly string[], probePorts: readonly number[]) {
  const squidFiles = new Map<string, string | undefined>();
  squidFiles.set(layout.squid.configFile, await deps.fs.readTextIfExists(layout.squid.configFile));
  for (const name of await deps.fs.list(layout.squid.allowlistDir)) {
    const file = path.join(layout.squid.allowlistDir, name);
    squidFiles.set(file, await deps.fs.readTextIfExists(file));
  }
  const squidConfigExists = squidFiles.get(layout.squid.configFile) !== undefined;
  return {
    uids: await uidsOf(deps.process, users),
    liveTable: await listEgressTable({ ...deps }),
    egressFileText: await deps.fs.readTextIfExists(layout.egressFile),
    squidFiles,
    squidRunning:
      squidConfigExists &&
      (await squidServing(
        { process: deps.process, wrap: deps.wrap ?? onHost, instance: deps.squidInstance },
        layout.squid.configFile,
        probePorts,
      )),
  };
}

/** Reads what the planner needs about repo `name`. */
export async function readRepoState(deps: HostDeps, layout: HostLayout, name: string): Promise<RepoState> {
  const registryText = (await deps.fs.readTextIfExists(layout.registryFile)) ?? '';
  const repos = parseRegistry(registryText, layout.registryFile, deps.scheduler).registry.repos;
  const known = repos.find((repo) => repo.name === name);
  const user = known?.user ?? defaultUserFor(name);
  const account = await lookupUser(deps.process, user);
  const names = identityNames(user);
  const identities = {
    agent: await lookupUser(deps.process, names.agent),
    gate: await lookupUser(deps.process, names.gate),
    handoff: await readHandoffFacts(deps.fs, account?.home ?? homeOf(user)),
  };
  const clonePath = known?.path ?? path.join(account?.home ?? homeOf(user), name);
  // The clone is the user's: read without following links (a config.yml
  // linked to another repo's credentials must not be read by root).
  const clone = await readCloneFacts(deps.fs, account?.home, clonePath);
  const gitConfig = clone.gitConfig;
  const systemd = await systemdIsRunning(deps.fs);
  return {
    registryText,
    schedules: deps.scheduler,
    account,
    identities,
    clone: { exists: clone.stat !== undefined, ownerUid: clone.stat?.uid, isGit: clone.isGit },
    gitIdentity: { name: gitConfigValue(gitConfig, 'user', 'name'), email: gitConfigValue(gitConfig, 'user', 'email') },
    backlogConfig: clone.backlogConfig,
    ...(clone.backlogConfigFile ? { backlogConfigFile: clone.backlogConfigFile } : {}),
    systemd,
    watchEnabled: systemd ? await unitEnabled(deps.process, WATCH_UNIT(name)) : false,
    ...(await layerState(deps, layout, [...repos.map((repo) => repo.user), user], repos.flatMap(proxyPortsOf))),
    ports: await readPortsState(deps, layout.squid.stateDir),
    registryMode: (await deps.fs.stat(layout.registryFile))?.mode,
    uidMin: await readUidMin(deps.fs),
  };
}

export async function readRemoveState(deps: HostDeps, layout: HostLayout, name: string): Promise<RemoveState> {
  const registryText = (await deps.fs.readTextIfExists(layout.registryFile)) ?? '';
  const repos = parseRegistry(registryText, layout.registryFile, deps.scheduler).registry.repos;
  const user = repos.find((repo) => repo.name === name)?.user ?? defaultUserFor(name);
  const account = await lookupUser(deps.process, user);
  const systemd = await systemdIsRunning(deps.fs);
  const names = identityNames(user);
  const accounts = {
    agent: await lookupUser(deps.process, names.agent),
    gate: await lookupUser(deps.process, names.gate),
  };
  const existing = new Set<string>();
  for (const dir of identityRemovePaths(user, account?.home ?? homeOf(user), accounts))
    if ((await deps.fs.statUntrusted(path.dirname(dir), path.basename(dir))) !== undefined) existing.add(dir);
  return {
    registryText,
    schedules: deps.scheduler,
    account,
    identities: { ...accounts, existing },
    homeExists: (await deps.fs.stat(account?.home ?? homeOf(user))) !== undefined,
    systemd,
    watchEnabled: systemd ? await unitEnabled(deps.process, WATCH_UNIT(name)) : false,
    ...(await layerState(
      deps,
      layout,
      repos.map((repo) => repo.user),
      repos.filter((repo) => repo.name !== name).flatMap(proxyPortsOf),
    )),
  };
}

/** The value of `key` in `[section]` of a git config file (plain, no includes). */
function gitConfigValue(text: string, section: string, key: string): string | undefined {
  let current = '';
  let value: string | undefined;
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    const header = /^\[([^\]\s"]+)(?:\s+"[^"]*")?\]$/.exec(line);
    if (header) {
      current = header[1]!.toLowerCase();
      continue;
    }
    const pair = /^([A-Za-z][\w-]*)\s*=\s*(.*)$/.exec(line);
    if (current === section && pair && pair[1]!.toLowerCase() === key) value = pair[2]!.replace(/^"(.*)"$/, '$1');
  }
  return value;
}

export interface StepReport {
  readonly description: string;
  readonly outcome: 'done' | 'skipped';
  readonly detail?: string;
  /** What the step says once done ("created agent identity X"), when it says more than its description. */
  readonly summary?: string;
}

/** Runs the steps in order; stops at the first failure with the step named. */
export async function applySteps(
  deps: HostDeps,
  layout: HostLayout,
  steps: readonly ProvisionStep[],
  onStep: (report: StepReport) => void,
): Promise<StepReport[]> {
  const reports: StepReport[] = [];
  const done = (report: StepReport) => {
    reports.push(report);
    onStep(report);
  };
  for (const step of steps) {
    if (step.skip) {
      done({ description: step.description, outcome: 'skipped', detail: step.skip });
      continue;
    }
    if ('command' in step) {
      const result = await deps.process.run(step.command);
      if (result.exitCode !== 0)
        throw new FailedError(
          `provision step "${step.description}" failed (${describeFailure(result)}); fix that and run provision again: finished steps are not repeated`,
        );
      done({ description: step.description, outcome: 'done', ...(step.done ? { summary: step.done } : {}) });
    } else if ('write' in step) {
      // Root writes only root's own files here; a file in a user's tree is a command run as that user.
      await deps.fs.mkdirp(path.dirname(step.write.path), 0o755);
      await deps.fs.writeAtomic(step.write.path, step.write.text, step.write.mode);
      done({ description: step.description, outcome: 'done' });
    } else if (step.reload === 'egress') {
      const leftOut = await reloadEgress(deps, layout);
      done({
        description: step.description,
        outcome: 'done',
        ...(leftOut.length ? { detail: `left out until the user exists: ${leftOut.join('; ')}` } : {}),
      });
    } else {
      const outcome = await reloadProxy(deps, layout);
      done({ description: step.description, outcome: 'done', detail: outcome });
    }
  }
  return reports;
}

/**
 * Regenerates the ruleset from the registry on disk and the users that exist now, and loads it; says which identities
 * it left out.
 */
async function reloadEgress(deps: HostDeps, layout: HostLayout): Promise<string[]> {
  const registry = await readRegistry(deps, layout.registryFile);
  const byUser = await uidsOf(
    deps.process,
    registry.repos.map((repo) => repo.user),
  );
  const uids = repoUids(registry.repos, byUser);
  await deps.fs.mkdirp(layout.configDir, 0o755);
  await applyRuleset(
    { process: deps.process, fs: deps.fs, wrap: deps.wrap ?? onHost },
    egressRuleset(registry.repos, uids),
    { saveTo: layout.egressFile },
  );
  return leftOutIdentities(registry.repos, uids);
}

async function reloadProxy(deps: HostDeps, layout: HostLayout): Promise<SquidApplyOutcome> {
  const registry = await readRegistry(deps, layout.registryFile);
  const systemd = deps.wrap === undefined && (await systemdIsRunning(deps.fs));
  const squid = {
    process: deps.process,
    fs: deps.fs,
    clock: deps.clock,
    wrap: deps.wrap ?? onHost,
    ...(deps.squidInstance ? { instance: deps.squidInstance } : {}),
    serviceManager: systemd ? ('systemd' as const) : ('direct' as const),
  };
  const outcome = await applySquid(squid, {
    repos: registry.repos,
    layout: layout.squid,
    ...(deps.squidOptions ? { options: deps.squidOptions } : {}),
  });
  const ports = registry.repos.flatMap(proxyPortsOf);
  if (systemd && ports.length) await untilProxyServes(squid, layout.squid.configFile, ports);
  return outcome;
}

/**
 * systemctl returns as soon as the unit's Squid runs (Type=simple), before
 * it listens, and a restart or reload reopens the port a moment later too.
 * Wait for the port, so the step only counts as done when the proxy serves
 * and the next read of the state (provision's next pass) sees it serving.
 */
async function untilProxyServes(
  deps: Pick<HostDeps, 'process' | 'clock'> & { wrap: CommandWrapper },
  configFile: string,
  ports: readonly number[],
): Promise<void> {
  for (let attempt = 0; attempt < 50; attempt += 1) {
    if (await squidServing(deps, configFile, ports)) return;
    await deps.clock.sleep(100);
  }
  throw new FailedError(
    `${PROXY_UNIT} is active but Squid does not answer on every repo port (127.0.0.1:${ports.join(', ')}) after 5 s; see journalctl -u ${PROXY_UNIT}`,
  );
}
