// Host provisioning as a plan: packages, the config and state directories
// with their modes, and the systemd units. Pure planner; the reader and the
// applier are in provision-run.ts and below.
import * as path from 'node:path';
import { reposStateDir } from '../../src/paths.js';
import type { FsPort, ProcessPort } from '../../src/ports.js';
import { lookupUser } from '../../src/control/repo-user/privdrop.js';
import { systemCommand } from './exec.js';
import { createBrokerAccountCommand, NO_LOGIN_SHELL } from './users.js';
import { BROKER_ACCOUNT } from '../../src/control/broker/index.js';
import { ROOT_TOOLS_PATH } from '../../src/system-path.js';
import type { HostLayout } from './layout.js';
import type { ProvisionStep } from './provision-step.js';
import { ROOT_ONLY_DIR_MODE } from '../../src/control/state-dirs.js';

export const HOST_UNITS = ['agent-runner-egress.service', 'agent-runner-proxy.service'] as const;
/** Tools whose absence means install-packages.sh has work to do. */
export const REQUIRED_TOOLS = ['git', 'nft', 'squid', 'ip', 'setpriv', 'curl', 'useradd'] as const;

export interface DirState {
  readonly mode: number | undefined;
  readonly uid: number | undefined;
  readonly gid?: number | undefined;
}

export interface HostState {
  readonly missingTools: readonly string[];
  readonly configDir: DirState;
  readonly stateDir: DirState;
  readonly squidStateDir: DirState;
  /** $STATE/repos and each $STATE/repos/NAME: path -> state. */
  readonly repoStateDirs: ReadonlyMap<string, DirState>;
  readonly systemd: boolean;
  /** Unit name -> [text shipped in systemd/, text installed (undefined when not)]. */
  readonly units: ReadonlyMap<string, readonly [string, string | undefined]>;
  readonly enabledUnits: readonly string[];
  /** uid of the user Squid runs as. */
  readonly proxyUid: number | undefined;
  /** Its group: $STATE is root:proxy so Squid reaches its own subdir. */
  readonly proxyGid?: number | undefined;
  /** The broker's account (BROKER_ACCOUNT): undefined when it does not exist yet. */
  readonly brokerAccount: BrokerAccountState | undefined;
}

export interface BrokerAccountState {
  readonly shell: string;
  /** Names of its groups other than its own primary group. */
  readonly supplementaryGroups: readonly string[];
}

/** A shell no one logs in with. */
function isNoLoginShell(shell: string): boolean {
  return /\/(nologin|false)$/.test(shell);
}

/** The broker's account as it must be: created, or put back to no login shell and no supplementary groups. */
export function planBrokerAccount(account: BrokerAccountState | undefined): ProvisionStep[] {
  if (account === undefined)
    return [
      {
        description: `create the system account ${BROKER_ACCOUNT} (no login shell, no home, no supplementary groups): the provider key files belong to it and the broker runs as it`,
        command: createBrokerAccountCommand(BROKER_ACCOUNT),
      },
    ];
  const steps: ProvisionStep[] = [];
  if (!isNoLoginShell(account.shell))
    steps.push({
      description: `${BROKER_ACCOUNT} has the login shell ${account.shell}: set ${NO_LOGIN_SHELL}`,
      command: systemCommand('usermod', ['--shell', NO_LOGIN_SHELL, BROKER_ACCOUNT]),
    });
  if (account.supplementaryGroups.length)
    steps.push({
      description: `${BROKER_ACCOUNT} is in the groups ${account.supplementaryGroups.join(', ')}: remove it from every supplementary group`,
      command: systemCommand('usermod', ['--groups', '', BROKER_ACCOUNT]),
    });
  return steps;
}

export function planHost(state: HostState, layout: HostLayout, installScript: string): ProvisionStep[] {
  const steps: ProvisionStep[] = [];
  if (state.missingTools.length)
    steps.push({
      description: `install packages (missing: ${state.missingTools.join(', ')})`,
      command: systemCommand('bash', [installScript]),
    });
  const dir = (
    target: string,
    current: DirState,
    mode: number,
    owner: string,
    ownerUid: number | undefined,
    why: string,
    ownerGid?: number,
  ) => {
    const octal = mode.toString(8).padStart(4, '0');
    if (current.mode === undefined) {
      steps.push({
        description: `create ${target} (${octal}, ${owner}): ${why}`,
        command: systemCommand('mkdir', ['-p', '-m', octal, target]),
      });
      steps.push({ description: `owner of ${target}: ${owner}`, command: systemCommand('chown', [owner, target]) });
      return;
    }
    const wrongGroup = ownerGid !== undefined && current.gid !== undefined && current.gid !== ownerGid;
    if (current.uid !== ownerUid || wrongGroup)
      steps.push({ description: `owner of ${target}: ${owner}`, command: systemCommand('chown', [owner, target]) });
    if ((current.mode & 0o7777) !== mode)
      steps.push({ description: `mode of ${target}: ${octal}`, command: systemCommand('chmod', [octal, target]) });
  };
  dir(
    layout.configDir,
    state.configDir,
    0o755,
    'root:root',
    0,
    'registry, ruleset and proxy config, readable, writable by root only',
  );
  // root:proxy 0750: Squid (group proxy) reaches its own subdirectory; agents reach nothing.
  dir(
    layout.stateDir,
    state.stateDir,
    0o750,
    'root:proxy',
    0,
    'control-plane state; agents cannot enter',
    state.proxyGid,
  );
  dir(
    layout.squid.stateDir,
    state.squidStateDir,
    0o750,
    'proxy:proxy',
    state.proxyUid,
    "the proxy's pid file and logs",
  );
  steps.push(...planBrokerAccount(state.brokerAccount));
  // Locks, spool, run records, watcher status: root's alone (src/control/state-dirs.ts).
  for (const [target, current] of state.repoStateDirs)
    dir(target, current, ROOT_ONLY_DIR_MODE, 'root:root', 0, "per-repo control-plane state; root's alone");
  const skip = state.systemd ? {} : { skip: 'systemd is not PID 1 here' };
  let unitsChanged = false;
  for (const [name, [shipped, installed]] of state.units) {
    if (shipped !== installed) {
      unitsChanged = true;
      steps.push({
        description: `install ${path.join(layout.unitDir, name)}`,
        write: { path: path.join(layout.unitDir, name), text: shipped, mode: 0o644 },
        ...skip,
      });
    }
  }
  if (unitsChanged)
    steps.push({
      description: 'systemctl daemon-reload',
      command: systemCommand('systemctl', ['daemon-reload']),
      ...skip,
    });
  const toEnable = HOST_UNITS.filter((unit) => !state.enabledUnits.includes(unit));
  if (toEnable.length)
    steps.push({
      description: `enable ${toEnable.join(', ')} (egress lock at boot, the proxy)`,
      command: systemCommand('systemctl', ['enable', ...toEnable]),
      ...skip,
    });
  return steps;
}

export async function readHostState(
  process: ProcessPort,
  fs: FsPort,
  layout: HostLayout,
  unitSourceDir: string,
  systemd: boolean,
): Promise<HostState> {
  const missingTools: string[] = [];
  for (const tool of REQUIRED_TOOLS) if (!(await process.which(tool, ROOT_TOOLS_PATH))) missingTools.push(tool);
  const dirState = async (target: string): Promise<DirState> => {
    const stat = await fs.stat(target);
    return { mode: stat?.mode, uid: stat?.uid, gid: stat?.gid };
  };
  const units = new Map<string, readonly [string, string | undefined]>();
  for (const name of (await fs.list(unitSourceDir)).filter((file) => /\.(service|timer|target)$/.test(file)).sort()) {
    units.set(name, [
      await fs.readText(path.join(unitSourceDir, name)),
      await fs.readTextIfExists(path.join(layout.unitDir, name)),
    ]);
  }
  const enabledUnits: string[] = [];
  if (systemd) {
    for (const unit of HOST_UNITS)
      if ((await process.run(systemCommand('systemctl', ['is-enabled', '--quiet', unit]))).exitCode === 0)
        enabledUnits.push(unit);
  }
  const proxy = await lookupUser(process, 'proxy');
  const proxyUid = proxy?.uid;
  const reposDir = reposStateDir(layout.stateDir);
  const repoStateDirs = new Map<string, DirState>([[reposDir, await dirState(reposDir)]]);
  for (const entry of (await fs.list(reposDir)).sort()) {
    const stat = await fs.stat(path.join(reposDir, entry));
    if (stat?.isDirectory) repoStateDirs.set(path.join(reposDir, entry), { mode: stat.mode, uid: stat.uid });
  }
  return {
    proxyUid,
    proxyGid: proxy?.gid,
    brokerAccount: await readBrokerAccount(process),
    missingTools,
    repoStateDirs,
    configDir: await dirState(layout.configDir),
    stateDir: await dirState(layout.stateDir),
    squidStateDir: await dirState(layout.squid.stateDir),
    systemd,
    units,
    enabledUnits,
  };
}

/** The broker's account as getent and id see it; undefined when there is none. */
export async function readBrokerAccount(process: ProcessPort): Promise<BrokerAccountState | undefined> {
  const account = await lookupUser(process, BROKER_ACCOUNT);
  if (account === undefined) return undefined;
  const ids = async (flag: string) =>
    (await process.run(systemCommand('id', [flag, '--name', BROKER_ACCOUNT]))).stdout.trim().split(/\s+/);
  const [primary] = await ids('--group');
  const supplementaryGroups = (await ids('--groups')).filter((group) => group !== '' && group !== primary);
  return { shell: account.shell, supplementaryGroups };
}
