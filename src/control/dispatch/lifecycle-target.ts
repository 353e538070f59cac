// Who runs status, promote, discard or gc. Run by root on a repo user's
// checkout, git would read that user's config, hooks, fsmonitor and `ext::`
// remotes as uid 0; so root never runs them there. A registered repo (by
// --repo NAME, or a --workspace whose path is the registry's path for it,
// compared as written, no link resolved) runs as the repo's user, exactly
// as dispatch runs orchestrate. A workspace root owns, whole path and .git,
// runs in place (no untrusted user is involved). Anything else is refused
// with its owner named. Pure: the caller gathers the facts (path walk by
// lstat, never following a link; the registry) and applies the result.
import * as path from 'node:path';
import type { Registry, RegistryRepo } from '../../types.js';
import { UsageError } from '../../errors.js';
import { findRepo } from '../registry/index.js';

/** One component of the workspace path, from / down, as lstat saw it. */
export interface PathStep {
  readonly path: string;
  readonly uid: number;
  readonly mode: number;
  readonly isSymlink: boolean;
  readonly isDirectory: boolean;
}

export interface WorkspaceFacts {
  /** Every component from the first below / to the workspace; stops early at a link or a missing one. */
  readonly steps: readonly PathStep[];
  /** lstat of <workspace>/.git; undefined when absent. */
  readonly dotGit: PathStep | undefined;
  /** Names of the uids that appear above (for the messages). */
  readonly names: Readonly<Record<number, string>>;
}

export type LifecycleRunner =
  /** Run in this process, as whoever invoked it, on this workspace (undefined: the usual --workspace error). */
  | { readonly kind: 'in-place'; readonly workspace: string | undefined }
  /** Start the same command as the repo's user, on its registered path. */
  | { readonly kind: 'as-repo-user'; readonly repo: RegistryRepo };

export interface LifecycleRequest {
  readonly command: string;
  readonly uid: number;
  readonly cwd: string;
  readonly repoOption: string | undefined;
  readonly workspaceOption: string | undefined;
}

/** Pure: the registered repo whose path is exactly `dir` (both resolved lexically), if any. */
export function registeredRepoAt(registry: Registry, dir: string): RegistryRepo | undefined {
  return registry.repos.find((repo) => path.resolve(repo.path) === dir);
}

const STICKY = 0o1000;

function who(facts: WorkspaceFacts, uid: number): string {
  return facts.names[uid] ? `${facts.names[uid]} (uid ${uid})` : `uid ${uid}`;
}

/**
 * Pure: why root may not run git in `dir` itself, or undefined when root
 * owns it: every component is a real directory root owns and no one else
 * can rename (not group/other-writable unless sticky), and so is .git.
 */
export function rootMayRunIn(dir: string, facts: WorkspaceFacts): string | undefined {
  const last = facts.steps.at(-1);
  if (!last || last.path !== dir) {
    const link = facts.steps.find((step) => step.isSymlink);
    if (link)
      return `${link.path} is a symbolic link (owned by ${who(facts, link.uid)}); root does not follow links to decide where it runs`;
    return `${dir} does not exist`;
  }
  for (const step of facts.steps) {
    if (step.isSymlink)
      return `${step.path} is a symbolic link (owned by ${who(facts, step.uid)}); root does not follow links to decide where it runs`;
    if (!step.isDirectory) return `${step.path} is not a directory`;
    if (step.uid !== 0) return `${step.path} belongs to ${who(facts, step.uid)}`;
    if (step !== last && (step.mode & 0o022) !== 0 && (step.mode & STICKY) === 0)
      return `${step.path} can be written by users other than root`;
  }
  if (facts.dotGit && (facts.dotGit.isSymlink || facts.dotGit.uid !== 0)) {
    return `${facts.dotGit.path} ${facts.dotGit.isSymlink ? 'is a symbolic link' : `belongs to ${who(facts, facts.dotGit.uid)}`}`;
  }
  return undefined;
}

/**
 * Pure: where and as whom the command runs. `registry` is undefined when
 * none was needed or none exists; `facts` is only consulted for root on an
 * unregistered workspace.
 */
export function chooseLifecycleRunner(
  request: LifecycleRequest,
  registry: { readonly registry: Registry; readonly file: string } | undefined,
  facts: WorkspaceFacts | undefined,
): LifecycleRunner {
  if (request.repoOption !== undefined && request.workspaceOption !== undefined) {
    throw new UsageError(`${request.command}: give --repo NAME or --workspace DIR, not both`);
  }
  if (request.repoOption !== undefined) {
    if (!registry)
      throw new UsageError(
        `${request.command} --repo needs the registry; set AGENT_RUNNER_CONFIG or use --workspace DIR`,
      );
    const repo = findRepo(registry.registry, request.repoOption, registry.file);
    return request.uid === 0 ? { kind: 'as-repo-user', repo } : { kind: 'in-place', workspace: repo.path };
  }
  if (request.workspaceOption === undefined || request.uid !== 0)
    return { kind: 'in-place', workspace: request.workspaceOption };
  const dir = path.resolve(request.cwd, request.workspaceOption);
  const repo = registry ? registeredRepoAt(registry.registry, dir) : undefined;
  if (repo) return { kind: 'as-repo-user', repo };
  if (!facts)
    throw new Error('chooseLifecycleRunner: the workspace facts are needed for root on an unregistered workspace');
  const why = rootMayRunIn(dir, facts);
  if (why === undefined) return { kind: 'in-place', workspace: dir };
  const owner = facts.steps.find((step) => step.uid !== 0) ?? facts.dotGit;
  const asOwner =
    owner && owner.uid !== 0 && facts.names[owner.uid]
      ? `run it as ${facts.names[owner.uid]} (runuser -u ${facts.names[owner.uid]} -- agent-runner ${request.command} --workspace ${dir})`
      : 'run it as the user who owns it';
  throw new UsageError(
    `${request.command}: refusing to run as root in ${dir}: ${why}, and it is not a registered repo's path. Root never runs git in a checkout a user controls (its config, hooks and remotes would run as root). Use --repo NAME for a registered repo (it runs as the repo's user), or ${asOwner}`,
  );
}
