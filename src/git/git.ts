// Git as commands-as-data over the process port. Every call runs with a
// sanitized environment: no system or global config, no hooks, no pager, no
// prompts, so the operator's own git setup never leaks into agent worktrees.
import type { CommandResult, FsPort, ProcessPort } from '../ports.js';
import type { Command } from '../types.js';
import { FailedError } from '../errors.js';
import { USER_PATH } from '../system-path.js';
import { headFromFiles } from './head-files.js';
import { STARTED_BY_VARIABLE, startedByValue, type ProcessIdentity } from '../process-identity.js';

export interface GitIdentity {
  readonly name: string;
  readonly email: string;
}

export interface GitOptions {
  /** The environment git runs with (HOME, PATH, proxy variables). */
  readonly env: Readonly<Record<string, string>>;
  /** Author of commits the runner itself makes; the committer is always agent-runner. */
  readonly identity?: GitIdentity;
  /**
   * With these, HEAD is read from the worktree's files when they say it plainly (head-files.ts), not by starting git.
   */
  readonly files?: Pick<FsPort, 'readUntrusted' | 'readUntrustedFiles' | 'statUntrusted'>;
  /**
   * The agent-runner process these gits belong to (ProcessControl.self()): each carries it in its environment, so a
   * git left running after that process died can be told from a live run's (src/drain/recovery/git-locks.ts).
   */
  readonly startedBy?: ProcessIdentity;
}

/**
 * Pure: what of git's output the operator needs: every fatal:/error: line
 * (they name the path: "Unable to create '/repo/.git/index.lock'") and the
 * last lines, without repeats, bounded.
 */
export function gitsLastWords(output: string): string {
  const lines = output
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean);
  const kept = new Set([...lines.filter((line) => /^(fatal|error):/.test(line)).slice(0, 3), ...lines.slice(-3)]);
  return [...kept].join(' | ');
}

/** A git command that failed: the operator sees the command, where and git's last words (exit 1), not a stack. */
export class GitError extends FailedError {
  constructor(
    readonly args: readonly string[],
    readonly cwd: string,
    readonly result: CommandResult,
  ) {
    super(
      `git ${args.join(' ')} (in ${cwd}) failed with exit ${result.exitCode}: ${gitsLastWords(result.stderr || result.stdout)}`,
    );
    this.name = 'GitError';
  }
}

export const RUNNER_IDENTITY: GitIdentity = { name: 'agent-runner', email: 'agent-runner@localhost' };

/** Makes git record agent-runner as the committer; the author stays whoever the repo's config says. */
export function committerEnvironment(): Record<string, string> {
  return { GIT_COMMITTER_NAME: RUNNER_IDENTITY.name, GIT_COMMITTER_EMAIL: RUNNER_IDENTITY.email };
}

/** The environment every git invocation gets, derived from the caller's base env. */
function sanitizedGitEnv(
  base: Readonly<Record<string, string>>,
  identity?: GitIdentity,
  startedBy?: ProcessIdentity,
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const key of [
    'HOME',
    'PATH',
    'LANG',
    'TZ',
    'http_proxy',
    'https_proxy',
    'HTTP_PROXY',
    'HTTPS_PROXY',
    'no_proxy',
    'NO_PROXY',
    'USER',
    'LOGNAME',
  ]) {
    const value = base[key];
    if (value !== undefined) env[key] = value;
  }
  env.PATH ??= USER_PATH;
  env.GIT_CONFIG_NOSYSTEM = '1';
  env.GIT_TERMINAL_PROMPT = '0';
  env.GIT_PAGER = 'cat';
  env.GIT_OPTIONAL_LOCKS = '0';
  const author = identity ?? RUNNER_IDENTITY;
  env.GIT_AUTHOR_NAME = author.name;
  env.GIT_AUTHOR_EMAIL = author.email;
  env.GIT_COMMITTER_NAME = RUNNER_IDENTITY.name;
  env.GIT_COMMITTER_EMAIL = RUNNER_IDENTITY.email;
  const starter = startedBy && startedByValue(startedBy);
  if (starter) env[STARTED_BY_VARIABLE] = starter;
  return env;
}

/**
 * Flags placed before every subcommand: hooks and fsmonitor off (both run
 * programs the repo's config names), no global config surprises.
 */
export const NO_REPO_PROGRAMS = ['-c', 'core.hooksPath=/dev/null', '-c', 'core.fsmonitor=false'];
const SAFE_FLAGS = [
  ...NO_REPO_PROGRAMS,
  '-c',
  'advice.detachedHead=false',
  '-c',
  'init.defaultBranch=main',
  '-c',
  'merge.conflictstyle=merge',
];

export function gitCommand(cwd: string, args: readonly string[], options: GitOptions): Command {
  return {
    program: 'git',
    args: [...SAFE_FLAGS, ...args],
    env: sanitizedGitEnv(options.env, options.identity, options.startedBy),
    cwd,
  };
}

/**
 * Git run by root against a repo it does not own, to read it as data (the
 * board, refs): that one path is marked safe, and no home config is read.
 */
export function outsiderReadCommand(repoPath: string, args: readonly string[]): Command {
  return gitCommand(repoPath, ['-c', `safe.directory=${repoPath}`, ...args], {
    env: { PATH: USER_PATH, HOME: '/nonexistent' },
  });
}

export class Git {
  constructor(
    private readonly process: ProcessPort,
    private readonly options: GitOptions,
  ) {}

  /** Runs git; throws GitError on a non-zero exit. */
  async run(cwd: string, args: readonly string[]): Promise<string> {
    const result = await this.process.run(gitCommand(cwd, args, this.options));
    if (result.exitCode !== 0) throw new GitError(args, cwd, result);
    return result.stdout;
  }

  /** Runs git and returns the result whatever the exit code. */
  try(cwd: string, args: readonly string[]): Promise<CommandResult> {
    return this.process.run(gitCommand(cwd, args, this.options));
  }

  /** The trimmed first line of stdout. */
  async value(cwd: string, args: readonly string[]): Promise<string> {
    return (await this.run(cwd, args)).trim();
  }

  /** The commit a ref points at, or undefined when the ref does not exist. */
  async resolve(cwd: string, ref: string): Promise<string | undefined> {
    if (ref === 'HEAD' && this.options.files) {
      const head = await headFromFiles(this.options.files, cwd);
      if (head) return head;
    }
    const result = await this.try(cwd, ['rev-parse', '--verify', '--quiet', `${ref}^{commit}`]);
    return result.exitCode === 0 ? result.stdout.trim() : undefined;
  }

  /**
   * HEAD and whether the tree has any change (untracked files included), in
   * one git process: `status --porcelain=v2 --branch`.
   */
  async treeState(cwd: string): Promise<{ head: string | undefined; dirty: boolean }> {
    const lines = (await this.run(cwd, ['status', '--porcelain=v2', '--branch', '--untracked-files=all']))
      .split('\n')
      .filter(Boolean);
    const oid = lines.find((line) => line.startsWith('# branch.oid '))?.slice('# branch.oid '.length);
    return { head: oid && oid !== '(initial)' ? oid : undefined, dirty: lines.some((line) => !line.startsWith('#')) };
  }

  /** Whether `ancestor` is contained in `descendant`. */
  async isAncestor(cwd: string, ancestor: string, descendant: string): Promise<boolean> {
    return (await this.try(cwd, ['merge-base', '--is-ancestor', ancestor, descendant])).exitCode === 0;
  }

  /** A git with another author for the commits it makes. */
  withIdentity(identity: GitIdentity): Git {
    return new Git(this.process, { ...this.options, identity });
  }
}
