// Before status, promote, discard or gc touch a workspace: decide who runs
// them (control/dispatch/lifecycle-target.ts) and, for root on a registered repo,
// start the same command as the repo's user through the privilege drop
// dispatch uses, relaying its stdout, stderr and exit code. The lifecycle
// code itself then only ever runs as the checkout's owner (or as root in a
// checkout root owns).
import * as path from 'node:path';
import type { CliContext } from './context.js';
import type { Registry, RegistryRepo } from '../types.js';
import { EXIT } from '../errors.js';
import { registryFile } from '../paths.js';
import { readRegistry } from '../control/registry/parse.js';
import { installPaths } from './root-support.js';
import { repoUser, runnerCommandAsUser } from '../control/repo-user/run-as.js';
import {
  chooseLifecycleRunner,
  registeredRepoAt,
  type PathStep,
  type WorkspaceFacts,
} from '../control/dispatch/lifecycle-target.js';
import { dropPrivileges, lookupUser } from '../control/repo-user/privdrop.js';

export interface WorkspaceChoice {
  readonly workspace?: string;
  readonly repo?: string;
}

export type LifecycleRoute =
  /** Go on in this process with this --workspace value. */
  | { readonly kind: 'in-place'; readonly workspace: string | undefined }
  /** The command ran as the repo's user; this is its exit code. */
  | { readonly kind: 'ran-as-user'; readonly exitCode: number };

/** The registry when one is needed: always for --repo, for root when it exists. */
async function registryFor(
  context: CliContext,
  options: WorkspaceChoice,
): Promise<{ registry: Registry; file: string } | undefined> {
  const file = registryFile(context.env);
  if (options.repo === undefined && (context.uid !== 0 || options.workspace === undefined)) return undefined;
  // Root without --repo can work on a root-owned checkout on a host with no registry.
  if (options.repo === undefined && !(await context.ports.fs.stat(file))) return undefined;
  return { registry: await readRegistry(context.ports, file), file };
}

/** lstat of every component of dir from / down, never following a link; stops at a link or a missing component. */
async function workspaceFacts(context: CliContext, dir: string): Promise<WorkspaceFacts> {
  const { fs, process } = context.ports;
  const steps: PathStep[] = [];
  const parts = dir.split('/').filter(Boolean);
  for (let i = 1; i <= parts.length; i++) {
    const relative = parts.slice(0, i).join('/');
    const stat = await fs.statUntrusted('/', relative);
    if (!stat) break;
    steps.push({
      path: `/${relative}`,
      uid: stat.uid,
      mode: stat.mode,
      isSymlink: stat.isSymlink,
      isDirectory: stat.isDirectory,
    });
    if (stat.isSymlink || !stat.isDirectory) break;
  }
  const complete = steps.length === parts.length && steps.every((step) => step.isDirectory && !step.isSymlink);
  const gitStat = complete ? await fs.statUntrusted('/', [...parts, '.git'].join('/')) : undefined;
  const dotGit = gitStat
    ? {
        path: path.join(dir, '.git'),
        uid: gitStat.uid,
        mode: gitStat.mode,
        isSymlink: gitStat.isSymlink,
        isDirectory: gitStat.isDirectory,
      }
    : undefined;
  const names: Record<number, string> = {};
  for (const uid of new Set(
    [...steps, ...(dotGit ? [dotGit] : [])].map((step) => step.uid).filter((uid) => uid !== 0),
  )) {
    const account = await lookupUser(process, uid);
    if (account) names[uid] = account.name;
  }
  return { steps, dotGit, names };
}

/**
 * Routes a lifecycle command. `forward` is the command and its own flags
 * (everything but --workspace/--repo), to start as the repo's user.
 */
export async function routeLifecycle(
  context: CliContext,
  given: WorkspaceChoice,
  forward: readonly [string, ...string[]],
  /**
   * Flags the registry adds for this repo (promote's mode, the GitHub API root): the user's process cannot read the
   * registry.
   */
  registryFlags?: (repo: RegistryRepo) => readonly string[],
): Promise<LifecycleRoute> {
  // No --workspace and no --repo: the current directory, with the same checks as a --workspace root names.
  const options = given.repo === undefined && given.workspace === undefined ? { ...given, workspace: '.' } : given;
  const registry = await registryFor(context, options);
  const request = {
    command: forward[0],
    uid: context.uid,
    cwd: context.cwd,
    repoOption: options.repo,
    workspaceOption: options.workspace,
  };
  const dir = options.workspace === undefined ? undefined : path.resolve(context.cwd, options.workspace);
  const needsFacts =
    context.uid === 0 &&
    options.repo === undefined &&
    dir !== undefined &&
    !(registry && registeredRepoAt(registry.registry, dir));
  const runner = chooseLifecycleRunner(request, registry, needsFacts ? await workspaceFacts(context, dir) : undefined);
  if (runner.kind === 'in-place') return runner;
  const [command, ...flags] = forward;
  return {
    kind: 'ran-as-user',
    exitCode: await runAsRepoUser(context, runner.repo, [
      command,
      '--workspace',
      runner.repo.path,
      ...flags,
      ...(registryFlags?.(runner.repo) ?? []),
    ]),
  };
}

/** `agent-runner <args>` as the repo's user, output relayed line by line; resolves to its exit code. */
async function runAsRepoUser(context: CliContext, repo: RegistryRepo, args: readonly string[]): Promise<number> {
  const user = await repoUser(context.ports, repo);
  const command = dropPrivileges(user, runnerCommandAsUser(await installPaths(context), repo, user, args), {
    parentDeathSignal: 'SIGTERM',
  });
  const child = context.ports.process.start(command, {
    onStdoutLine: (line) => context.out(`${line}\n`),
    onStderrLine: (line) => context.err(`${line}\n`),
  });
  const stop = () => child.signalGroup('SIGTERM');
  context.terminate.addEventListener('abort', stop, { once: true });
  try {
    const ended = await child.exited;
    return ended.exitCode ?? EXIT.failed;
  } finally {
    context.terminate.removeEventListener('abort', stop);
  }
}
