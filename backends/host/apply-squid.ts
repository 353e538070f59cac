// Loading a new proxy config without ever running a bad one. The new files
// are staged in a temp dir and parsed there (`squid -k parse`); only a
// config Squid accepts is moved into place and reloaded. A refused config
// changes nothing: the running Squid keeps serving the previous one. If
// Squid is down, agents have no way out at all (nftables only lets them
// reach their proxy port), so a dead proxy fails closed.
import * as path from 'node:path';
import { squidCacheLog, squidPidFile } from '../../src/paths.js';
import type { Clock, FsPort, ProcessPort } from '../../src/ports.js';
import type { RegistryRepo } from '../../src/types.js';
import { FailedError } from '../../src/errors.js';
import { proxyPortsOf } from '../../src/control/registry/egress.js';
import { describeFailure, onHost, systemCommand, type CommandWrapper } from './exec.js';
import {
  SQUID_INSTANCE,
  squidConfig,
  type RenderedSquid,
  type SquidLayout,
  type SquidOptions,
} from './squid-config.js';

export interface SquidDeps {
  readonly process: ProcessPort;
  readonly fs: FsPort;
  readonly clock: Clock;
  readonly wrap?: CommandWrapper;
  /** `-n` instance name: distinct instances never share shared-memory segments. */
  readonly instance?: string;
  /**
   * How to (re)start Squid when it is not running. Under systemd the unit
   * owns the process; elsewhere Squid daemonizes itself.
   */
  readonly serviceManager?: 'systemd' | 'direct';
}

export interface SquidInput {
  readonly repos: readonly RegistryRepo[];
  readonly layout: SquidLayout;
  readonly options?: SquidOptions;
}

export type SquidApplyOutcome = 'unchanged' | 'reconfigured' | 'started' | 'stopped';

export const PROXY_UNIT = 'agent-runner-proxy.service';

/** `squid -k parse` on a rendered config; the error text, or undefined when it parses. */
export async function parseSquidConfig(
  deps: Pick<SquidDeps, 'process' | 'wrap'>,
  configFile: string,
): Promise<string | undefined> {
  const result = await deps.process.run(
    (deps.wrap ?? onHost)(systemCommand('squid', ['-k', 'parse', '-f', configFile])),
  );
  if (result.exitCode === 0) return undefined;
  const fatal = `${result.stderr}\n${result.stdout}`.split('\n').filter((line) => /ERROR|FATAL|Bungled/.test(line));
  return fatal.length ? fatal.map((line) => line.replace(/^\S+ \S+\| /, '')).join('; ') : describeFailure(result);
}

/** Whether our instance is running (its pid file names a live Squid). */
export async function squidRunning(
  deps: Pick<SquidDeps, 'process' | 'wrap' | 'instance'>,
  configFile: string,
): Promise<boolean> {
  const result = await deps.process.run(
    (deps.wrap ?? onHost)(
      systemCommand('squid', ['-k', 'check', '-n', deps.instance ?? SQUID_INSTANCE, '-f', configFile]),
    ),
  );
  return result.exitCode === 0;
}

/** Renders, stages, parses, and only then installs and reloads. */
export async function applySquid(deps: SquidDeps, input: SquidInput): Promise<SquidApplyOutcome> {
  const { fs } = deps;
  const wrap = deps.wrap ?? onHost;
  const rendered = squidConfig(input.repos, input.layout, input.options);

  const staging = await fs.makeTempDir('agent-runner-squid-');
  try {
    const staged = squidConfig(input.repos, { ...input.layout, allowlistDir: staging }, input.options);
    for (const file of staged.allowlists) await fs.writeAtomic(file.path, file.text, 0o644);
    const stagedConfig = path.join(staging, 'squid.conf');
    await fs.writeAtomic(stagedConfig, staged.config, 0o644);
    const error = await parseSquidConfig(deps, stagedConfig);
    if (error !== undefined) {
      throw new FailedError(
        `squid refused the new proxy config (${error}); nothing was changed and the running proxy keeps its previous config. Fix the allowlist it names in the registry and provision again`,
      );
    }
  } finally {
    await fs.remove(staging);
  }

  const changed = await installFiles(fs, input.layout, rendered);
  await fs.mkdirp(input.layout.stateDir, 0o750);
  const owner = input.options?.effectiveUser ?? 'proxy';
  const chown = await deps.process.run(systemCommand('chown', [`${owner}:${owner}`, input.layout.stateDir]));
  if (chown.exitCode !== 0)
    throw new FailedError(
      `cannot give ${input.layout.stateDir} to ${owner} (${describeFailure(chown)}); create the user or fix the directory`,
    );

  const instance = deps.instance ?? SQUID_INSTANCE;
  if (input.repos.length === 0) {
    // Squid exits when it has no port to listen on; with no repo there is
    // nobody to serve, so it is shut down instead of reloaded.
    if (deps.serviceManager === 'systemd') {
      await deps.process.run(systemCommand('systemctl', ['stop', PROXY_UNIT]));
      return 'stopped';
    }
    if (await squidRunning(deps, rendered.configFile)) {
      await deps.process.run(
        wrap(systemCommand('squid', ['-k', 'shutdown', '-n', instance, '-f', rendered.configFile])),
      );
      return 'stopped';
    }
    return changed ? 'stopped' : 'unchanged';
  }
  if (deps.serviceManager === 'systemd') {
    const result = await deps.process.run(
      systemCommand('systemctl', [changed ? 'reload-or-restart' : 'start', PROXY_UNIT]),
    );
    if (result.exitCode !== 0)
      throw new FailedError(
        `systemctl could not (re)load ${PROXY_UNIT} (${describeFailure(result)}); see journalctl -u ${PROXY_UNIT}`,
      );
    return changed ? 'reconfigured' : 'unchanged';
  }
  // Every repo's port, not just one: a port another process holds would leave that repo without a proxy.
  const probePorts = input.repos.flatMap(proxyPortsOf);
  // A killed Squid nobody reaped yet still "runs" for -k check: its pid file goes first.
  await clearStalePidFile(deps, input.layout.stateDir);
  if (await squidRunning(deps, rendered.configFile)) {
    if (!changed && (await squidServing(deps, rendered.configFile, probePorts))) return 'unchanged';
    // A running Squid opens a new repo's port on reconfigure (starting a second one would fail: "already running").
    const result = await deps.process.run(
      wrap(systemCommand('squid', ['-k', 'reconfigure', '-n', instance, '-f', rendered.configFile])),
    );
    if (result.exitCode !== 0)
      throw new FailedError(
        `squid -k reconfigure failed (${describeFailure(result)}); see ${squidCacheLog(input.layout.stateDir)}`,
      );
    await waitUntilServing(deps, rendered.configFile, input.layout.stateDir, probePorts, 'reconfigured');
    return 'reconfigured';
  }
  await startSquid(deps, rendered.configFile, input.layout.stateDir, probePorts);
  return 'started';
}

/** Running and listening on every port given: a pid alone can be a zombie nobody reaped. */
export async function squidServing(
  deps: Pick<SquidDeps, 'process' | 'wrap' | 'instance'>,
  configFile: string,
  probePorts: readonly number[],
): Promise<boolean> {
  if (!(await squidRunning(deps, configFile))) return false;
  for (const port of probePorts) if (!(await tcpPortAnswers(deps, port))) return false;
  return true;
}

/**
 * Squid refuses to start while its pid file names a live process, and a
 * killed master that nobody reaped still "lives" as a zombie. A pid file
 * whose process is gone or a zombie is removed before a start.
 */
async function clearStalePidFile(deps: SquidDeps, stateDir: string): Promise<void> {
  const pidFile = squidPidFile(stateDir);
  const pid = (await deps.fs.readTextIfExists(pidFile))?.trim();
  if (!pid || !/^\d+$/.test(pid)) return;
  const stat = await deps.fs.readTextIfExists(`/proc/${pid}/stat`);
  const state = stat?.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
  if (stat === undefined || state === 'Z') await deps.fs.remove(pidFile);
}

/** Whether something accepts TCP on 127.0.0.1:port (where the command runs). */
export async function tcpPortAnswers(
  deps: Pick<SquidDeps, 'process' | 'wrap'>,
  port: number,
  host = '127.0.0.1',
): Promise<boolean> {
  // bash's /dev/tcp: no extra tool, and the script is constant; host and port are arguments.
  const probe = systemCommand('timeout', ['3', 'bash', '-c', 'exec 3<>"/dev/tcp/$1/$2"', 'probe', host, String(port)]);
  return (await deps.process.run((deps.wrap ?? onHost)(probe))).exitCode === 0;
}

/**
 * Starts our instance (daemonized) and waits until it answers `-k check`
 * and accepts connections on every port given (the pid file is
 * written before the listening sockets open).
 */
async function startSquid(
  deps: SquidDeps,
  configFile: string,
  stateDir: string,
  probePorts: readonly number[] = [],
): Promise<void> {
  const wrap = deps.wrap ?? onHost;
  const instance = deps.instance ?? SQUID_INSTANCE;
  const result = await deps.process.run(wrap(systemCommand('squid', ['-n', instance, '-f', configFile])));
  if (result.exitCode !== 0)
    throw new FailedError(`squid did not start (${describeFailure(result)}); see ${squidCacheLog(stateDir)}`);
  await waitUntilServing(deps, configFile, stateDir, probePorts, 'started');
}

/** Up to 5 s for Squid to run and answer on every port given. */
async function waitUntilServing(
  deps: SquidDeps,
  configFile: string,
  stateDir: string,
  probePorts: readonly number[],
  what: 'started' | 'reconfigured',
): Promise<void> {
  for (let attempt = 0; attempt < 50; attempt += 1) {
    if (await squidServing(deps, configFile, probePorts)) return;
    await deps.clock.sleep(100);
  }
  throw new FailedError(
    `squid ${what} but does not run and answer on every repo port (${probePorts.join(', ')}) after 5 s; see ${squidCacheLog(stateDir)} (a port another process holds stays closed to it)`,
  );
}

/** Writes what differs, removes lists of repos that are gone; true when anything changed. */
async function installFiles(fs: FsPort, layout: SquidLayout, rendered: RenderedSquid): Promise<boolean> {
  let changed = false;
  await fs.mkdirp(layout.allowlistDir, 0o755);
  for (const file of rendered.allowlists) {
    if ((await fs.readTextIfExists(file.path)) !== file.text) {
      await fs.writeAtomic(file.path, file.text, 0o644);
      changed = true;
    }
  }
  const wanted = new Set(rendered.allowlists.map((file) => path.basename(file.path)));
  for (const name of await fs.list(layout.allowlistDir)) {
    if (name.endsWith('.txt') && !wanted.has(name)) {
      await fs.remove(path.join(layout.allowlistDir, name));
      changed = true;
    }
  }
  if ((await fs.readTextIfExists(rendered.configFile)) !== rendered.config) {
    await fs.writeAtomic(rendered.configFile, rendered.config, 0o644);
    changed = true;
  }
  return changed;
}
