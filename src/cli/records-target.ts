// What `logs` and `runs` read: a registered repo (root: its records in the
// repo user's home, and root's own run records) or a workspace given with
// --workspace (the caller's own state dir). Says which when neither is given.
import * as path from 'node:path';
import type { CliContext } from './context.js';
import type { RegistryRepo } from '../types.js';
import { FailedError, UsageError } from '../errors.js';
import { BoardSnapshot } from '../control/repo-view/board.js';
import { readRepoConfig } from '../repo/read-config.js';
import { sameTaskId } from '../board/task-id.js';
import { findRepo } from '../control/registry/parse.js';
import { loadRegistry, requireRoot } from './root-support.js';
import {
  recordsAtHome,
  recordsOfRepo,
  recordsOfWorkspace,
  type WorkspaceFiles,
} from '../control/repo-view/workspace-files.js';
import type { WatchStatus } from '../control/watch/index.js';
import { stateDir } from '../paths.js';
import { lookupUser } from '../control/repo-user/index.js';

export interface RecordsTarget {
  /** The checkout whose board names the tasks. */
  readonly workspace: string;
  /** Its base branch (the registry's, or the checkout's .agent/config.json; main without one). */
  readonly baseBranch: string | undefined;
  /** The repo's name or the workspace's path, for messages. */
  readonly label: string;
  /** Root's view of a registered repo: its state dir and registry entry. */
  readonly registered: { readonly repo: RegistryRepo; readonly state: string } | undefined;
  /** The workspace's own records; undefined (with why) when they could not be located. */
  readonly records: WorkspaceFiles | undefined;
  readonly recordsError: string | undefined;
}

export async function recordsTarget(
  context: CliContext,
  command: string,
  repoName: string | undefined,
  workspace: string | undefined,
): Promise<RecordsTarget> {
  if (repoName !== undefined && workspace !== undefined)
    throw new UsageError(`${command}: give a repo name or --workspace DIR, not both`);
  if (workspace !== undefined) {
    const dir = path.resolve(context.cwd, workspace);
    if (!(await context.ports.fs.stat(dir))?.isDirectory)
      throw new UsageError(`workspace ${dir} is not a directory; pass the path of the git checkout`);
    return {
      label: dir,
      workspace: dir,
      baseBranch: undefined,
      registered: undefined,
      records: recordsOfWorkspace(stateDir(context.env), dir),
      recordsError: undefined,
    };
  }
  if (repoName === undefined)
    throw new UsageError(`${command}: give a repo name from the registry (as root) or --workspace DIR`);
  if (ownStateDir(context) === undefined)
    requireRoot(
      context,
      `${command} REPO`,
      "the repo's records are in root's state dir and its user's home; use --workspace DIR for your own checkout, or set AGENT_RUNNER_STATE to the state dir you keep both sides in",
    );
  const { registry, registryFile, state } = await loadRegistry(context);
  const repo = findRepo(registry, repoName, registryFile);
  try {
    return {
      label: repo.name,
      workspace: repo.path,
      baseBranch: repo.baseBranch,
      registered: { repo, state },
      records: await registeredRecords(context, repo, undefined),
      recordsError: undefined,
    };
  } catch (error) {
    return {
      label: repo.name,
      workspace: repo.path,
      baseBranch: repo.baseBranch,
      registered: { repo, state },
      records: undefined,
      recordsError: (error as Error).message,
    };
  }
}

/**
 * Why a task has no transcript, as exit 1: "no such task" when the board (auto/work and the base, read from git
 * objects as `next` reads them) does not have it; else the reader's own reason.
 */
export async function missingTranscriptError(
  context: CliContext,
  target: RecordsTarget,
  task: string | undefined,
  error: Error,
): Promise<FailedError> {
  if (task === undefined) return new FailedError(error.message);
  const baseBranch =
    target.baseBranch ??
    (await readRepoConfig(context.ports.fs, target.workspace).then(
      (validation) => validation.config.baseBranch,
      () => 'main',
    ));
  const view = await new BoardSnapshot(context.ports.process, target.workspace, baseBranch)
    .view()
    .catch(() => undefined);
  const onBoard =
    view === undefined
      ? undefined
      : view.board.tasks.some((candidate) => sameTaskId(candidate.id, task)) ||
        (view.board.completed ?? []).some((id) => sameTaskId(id, task));
  if (onBoard === false)
    return new FailedError(
      `no such task ${task} in ${target.label}: the board (${view!.refs.join(' + ') || 'no branch yet'}) has no task with that id; \`agent-runner next\` lists them`,
    );
  return new FailedError(error.message);
}

/**
 * A caller that names its own state dir (AGENT_RUNNER_STATE) and drains a repo itself keeps both sides there, as the
 * demo does: its drains' records and root's (run records, ledger). That is every repo of a caller other than root,
 * and, for root, a repo whose user does not exist on this host (the demo's, drained by root itself). Undefined
 * without AGENT_RUNNER_STATE: root's state dir, which a user cannot read.
 */
function ownStateDir(context: CliContext): string | undefined {
  return context.env.AGENT_RUNNER_STATE ? stateDir(context.env) : undefined;
}

/**
 * Where a registered repo's own records are (transcripts, drains run by hand): in the repo user's home, found in the
 * watcher's status while it names the same user (no account lookup per repo), else looked up; or the caller's own
 * state dir (ownStateDir).
 */
async function registeredRecords(
  context: CliContext,
  repo: RegistryRepo,
  status: WatchStatus | undefined,
): Promise<WorkspaceFiles> {
  const own = ownStateDir(context);
  if (context.uid !== 0) {
    if (own !== undefined) return recordsOfWorkspace(own, repo.path);
    throw new UsageError(`the records of repo "${repo.name}" are in its user's home: read them as root`);
  }
  if (status?.runner?.user === repo.user) return recordsAtHome(status.runner.home, repo);
  if (own !== undefined && !(await lookupUser(context.ports.process, repo.user)))
    return recordsOfWorkspace(own, repo.path);
  return recordsOfRepo(context.ports, repo);
}

/** Where fleet reads each repo's own records, as `runs` and `logs` do; undefined when the caller cannot read them. */
export function fleetRecords(
  context: CliContext,
): ((repo: RegistryRepo, status: WatchStatus | undefined) => Promise<WorkspaceFiles>) | undefined {
  if (context.uid !== 0 && ownStateDir(context) === undefined) return undefined;
  return (repo, status) => registeredRecords(context, repo, status);
}
