// agent-runner watch [REPO | --all]: the watch loop, as root, one event per
// line on stderr (the journal). Runs until SIGTERM; then stops at the next run
// boundary (see RepoWatcher.stop).
import type { Command } from 'commander';
import type { CliContext } from './context.js';
import type { RegistryRepo } from '../types.js';
import { EXIT, UsageError } from '../errors.js';
import { findRepo } from '../control/registry/parse.js';
import { resolveTarget } from './target.js';
import { installPaths, loadRegistry, requireRoot } from './root-support.js';
import { RepoWatcher } from '../control/watch/watcher.js';
import type { LogEvent } from '../control/watch/deps.js';
import { parsePositiveInt } from './options.js';
import { isolationWanted, requireIsolation } from './isolation-check.js';
import { runningAgentTasks } from '../control/fleet/agents.js';
import { lookupUser } from '../control/repo-user/index.js';

interface WatchOptions {
  repo?: string;
  all?: boolean;
  once?: boolean;
  stopGraceSec: string;
  isolation: boolean;
}

export function define(command: Command, context: CliContext, setExit: (code: number) => void): void {
  command
    .argument('[repo]', 'the same as --repo NAME')
    .option('--repo <name>', 'the repo to watch (systemd runs one watcher per repo)')
    .option('--all', 'watch every enabled repo in one process')
    .option('--once', 'one tick per repo, wait for what it started, exit')
    .option('--stop-grace-sec <n>', 'on SIGTERM, how long a run in progress may finish before it is interrupted', '60')
    .option(
      '--no-isolation',
      'start runs even when the egress lock is not loaded or nothing listens on the repo proxy port (on purpose: a trial host; also AGENT_RUNNER_ISOLATION=off)',
    )
    .action(async (positional: string | undefined, options: WatchOptions) => {
      const target = resolveTarget('watch', { positional, repo: options.repo }, { workspace: false, required: false });
      setExit(await watch(context, target.kind === 'repo' ? target.name : undefined, options));
    });
}

/** The agents the repo's drain says are running, as the fleet counts them; a user that does not exist is an error. */
async function runningAgents(context: CliContext, repo: RegistryRepo): Promise<number> {
  const account = await lookupUser(context.ports.process, repo.user);
  if (!account) throw new Error(`user ${repo.user} of repo ${repo.name} does not exist`);
  return (await runningAgentTasks(context.ports.fs, account.home, repo.path)).length;
}

async function watch(context: CliContext, repoName: string | undefined, options: WatchOptions): Promise<number> {
  requireRoot(context, 'watch', "it takes the repos' locks and drops to their users");
  if (Boolean(repoName) === Boolean(options.all)) throw new UsageError('watch: give --repo NAME or --all, one of them');
  const stopGraceMs = parsePositiveInt('--stop-grace-sec', options.stopGraceSec, 86_400) * 1000;
  const { registry, registryFile, state } = await loadRegistry(context);
  const repos = repoName ? [findRepo(registry, repoName, registryFile)] : registry.repos.filter((repo) => repo.enabled);
  if (!repos.length) throw new UsageError(`${registryFile}: no enabled repos to watch`);
  const { clock, control, scheduler } = context.ports;
  const log = (event: LogEvent) =>
    context.err(`${JSON.stringify({ time: new Date(clock.now()).toISOString(), ...event })}\n`);
  const self = await control.self();
  const deps = {
    ...context.ports,
    // --once ticks by hand: nothing is scheduled.
    scheduler: options.once ? { schedule: () => ({ stop: () => undefined }), isValid: scheduler.isValid } : scheduler,
    install: await installPaths(context),
    state,
    registryFile,
    log,
    stopGraceMs,
    // Above orchestrate's own --grace-sec (30 s), so it can end its agents itself first.
    killAfterMs: 45_000,
    runningAgents: (repo: RegistryRepo) => runningAgents(context, repo),
    // As dispatch checks before it starts agents, the watcher checks before each run it starts.
    ...(isolationWanted(options.isolation, context.env)
      ? { checkIsolation: (repo: RegistryRepo) => requireIsolation(context.ports, repo) }
      : {}),
  };
  // The stop is wired before any watcher starts: a SIGTERM while one starts (recovery, the first listen) must stop it
  // too, and one that came while the command loaded has already aborted the context's signal (src/main.ts).
  let stopping = false;
  let requestStop!: () => void;
  const stopRequested = new Promise<void>((resolve) => {
    requestStop = resolve;
  });
  const stopAll = () => {
    if (stopping) return;
    stopping = true;
    log({ event: 'stop-requested', repo: '*' });
    requestStop();
  };
  const unsubscribe = [control.onSignal('SIGTERM', stopAll), control.onSignal('SIGINT', stopAll)];
  if (context.terminate.aborted) stopAll();
  const watchers: RepoWatcher[] = [];
  try {
    for (const repo of repos) {
      if (stopping) break;
      const watcher = new RepoWatcher(deps, repo.name, self.pid);
      try {
        await watcher.start(repo);
        watchers.push(watcher);
      } catch (error) {
        // With one repo the operator must hear it (exit 75 when another watcher runs); with --all the others go on.
        if (repoName) throw error;
        log({ event: 'repo-not-watched', repo: repo.name, error: (error as Error).message });
      }
    }
    if (!watchers.length) return stopping ? EXIT.ok : EXIT.failed;
    // The first ticks, then (--once) until idle or (else) until told to stop; a stop cuts either short.
    await Promise.race([Promise.all(watchers.map((watcher) => watcher.tick())), stopRequested]);
    if (options.once) await Promise.race([Promise.all(watchers.map((watcher) => watcher.idle())), stopRequested]);
    else await stopRequested;
    await Promise.all(watchers.map((watcher) => watcher.stop()));
    return EXIT.ok;
  } finally {
    for (const off of unsubscribe) off();
  }
}
