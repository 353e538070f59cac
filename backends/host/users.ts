// The per-repo Linux user, as commands (data). One user per repo, its own
// group, home 0700 holding the clone, its worktrees and its secrets; no sudo,
// no password (useradd leaves the account locked for password login).
//
// Shell: /bin/bash, not nologin. Agents run tools through a shell (Claude
// Code's Bash tool, codex's exec), and with nologin they fail in confusing
// ways. Login stays impossible anyway: the password is locked and there
// are no authorized_keys; root reaches the user only through setpriv.
import type { Command } from '../../src/types.js';
import { systemCommand } from './exec.js';
import { dropPrivileges } from '../../src/control/repo-user/privdrop.js';
import { accountComment } from '../../src/control/repo-user/account.js';

const REPO_USER_SHELL = '/bin/bash';

// agent-runner is the committer of every agent commit (src/git/git.ts); the author comes from the clone's config.
import { committerEnvironment, NO_REPO_PROGRAMS } from '../../src/git/git.js';
import { cloneArgs, setLocalConfigArgs } from '../../src/git/plumbing.js';
import { USER_PATH } from '../../src/system-path.js';

export function createUserCommands(user: string, home: string, repo: string): Command[] {
  return createAccountCommands(user, home, accountComment(repo), REPO_USER_SHELL);
}

/** An account of a repo (the runner, its agent or its gate): own group, home 0700, password locked. */
export function createAccountCommands(user: string, home: string, comment: string, shell: string): Command[] {
  return [
    systemCommand('useradd', [
      '--create-home',
      '--home-dir',
      home,
      '--user-group',
      '--shell',
      shell,
      '--comment',
      comment,
      user,
    ]),
    systemCommand('chmod', ['0700', home]),
  ];
}

/** The shell of the broker's account: it runs one program, started by root, and never logs in. */
export const NO_LOGIN_SHELL = '/usr/sbin/nologin';

/**
 * The broker's system account: a system uid, its own group and no other, no home, no login shell. It owns the provider
 * key files and nothing else.
 */
export function createBrokerAccountCommand(name: string): Command {
  return systemCommand('useradd', [
    '--system',
    '--user-group',
    '--no-create-home',
    '--home-dir',
    '/nonexistent',
    '--shell',
    NO_LOGIN_SHELL,
    '--comment',
    'agent-runner provider broker',
    name,
  ]);
}

/** The shell new accounts of a repo get when the runner's is not known yet. */
export const DEFAULT_SHELL = REPO_USER_SHELL;

/**
 * Makes a hand-off folder, or sets its owner and mode, as root. The folder is
 * checked not to be a link right before (its parent is root's own 0755, so
 * nobody else can swap it afterwards); mkdir refuses anything already there.
 */
export function handoffDirCommand(
  dir: string,
  owner: string | number,
  group: string | number,
  mode: number,
  create: boolean,
): Command {
  const script = [
    'set -e',
    'if [ "$4" = create ]; then mkdir -m "$3" -- "$1"; fi',
    'if [ -L "$1" ] || [ ! -d "$1" ]; then echo "agent-runner: $1 is not a directory (or is a symbolic link); refusing to change it" >&2; exit 1; fi',
    'chown -h -- "$2" "$1"',
    'chmod -- "$3" "$1"',
  ].join('\n');
  return systemCommand('/bin/sh', [
    '-c',
    script,
    'agent-runner-handoff',
    dir,
    `${owner}:${group}`,
    mode.toString(8).padStart(4, '0'),
    create ? 'create' : 'repair',
  ]);
}

/** Keeps the home (it is moved aside separately): nothing the user had is lost. */
export function removeUserCommand(user: string): Command {
  return systemCommand('userdel', [user]);
}

/**
 * A command run as a named user, for plans made before the user has a uid (src/control/repo-user/privdrop.ts does the
 * drop).
 */
function asNamedUser(
  user: string,
  home: string,
  command: Omit<Command, 'env'> & { env?: Readonly<Record<string, string>> },
): Command {
  const env = { HOME: home, USER: user, LOGNAME: user, PATH: USER_PATH, LANG: 'C.UTF-8', ...(command.env ?? {}) };
  return dropPrivileges({ name: user }, { ...command, env });
}

/** git with no system or global config: what the user's clone says is all that counts. */
const GIT_ENV = { GIT_CONFIG_NOSYSTEM: '1', GIT_TERMINAL_PROMPT: '0' };

export function cloneCommand(user: string, home: string, url: string, clonePath: string, base: string): Command {
  // A local path as URL only works when the repo user may own-read it: git
  // refuses a repository owned by someone else ("dubious ownership").
  return asNamedUser(user, home, { program: 'git', args: cloneArgs(url, clonePath, base), env: GIT_ENV, cwd: home });
}

export function gitConfigCommand(user: string, home: string, clonePath: string, key: string, value: string): Command {
  return asNamedUser(user, home, {
    program: 'git',
    args: setLocalConfigArgs(clonePath, key, value),
    env: GIT_ENV,
    cwd: home,
  });
}

/** NO_REPO_PROGRAMS (`-c key=value` pairs) as GIT_CONFIG_* variables: they hold for every git a script starts. */
function noRepoProgramsEnv(): Record<string, string> {
  const pairs = NO_REPO_PROGRAMS.filter((_, i) => i % 2 === 1).map((pair) => pair.split('=') as [string, string]);
  const env: Record<string, string> = { GIT_CONFIG_COUNT: String(pairs.length) };
  pairs.forEach(([key, value], i) => {
    env[`GIT_CONFIG_KEY_${i}`] = key;
    env[`GIT_CONFIG_VALUE_${i}`] = value;
  });
  return env;
}

/**
 * A runner-made commit of one file in the user's clone, as the user, with
 * plumbing only: the file is hashed without filters, the commit is built in
 * a private index and moves HEAD by compare-and-swap. No hook, fsmonitor or
 * editor of the repo runs, no filter driver for the commit itself, and
 * whatever the user had staged stays out of it; the checkout's index then
 * gets the file's new entry.
 */
export function gitCommitCommand(
  user: string,
  home: string,
  clonePath: string,
  file: string,
  message: string,
): Command {
  const script = [
    'set -e',
    'cd -- "$1"',
    'blob=$(git hash-object -w --no-filters -- "$2")',
    'head=$(git rev-parse --verify HEAD)',
    'index=$(git rev-parse --absolute-git-dir)/agent-runner-index.$$',
    'trap \'rm -f -- "$index"\' EXIT',
    'GIT_INDEX_FILE=$index git read-tree "$head"',
    'GIT_INDEX_FILE=$index git update-index --add --cacheinfo "100644,$blob,$2"',
    'tree=$(GIT_INDEX_FILE=$index git write-tree)',
    'commit=$(git commit-tree "$tree" -p "$head" -m "$3")',
    'git update-ref -m "agent-runner: $3" HEAD "$commit" "$head"',
    // Writing the checkout's index re-checks racily clean entries through the
    // repo's filters (as the user); a filter that fails leaves that index stale, not the commit undone.
    'git update-index --cacheinfo "100644,$blob,$2" || echo "agent-runner: the checkout index of $1 was not updated; run git status there" >&2',
  ].join('\n');
  const env = { ...GIT_ENV, ...committerEnvironment(), ...noRepoProgramsEnv() };
  return asNamedUser(user, home, {
    program: '/bin/sh',
    args: ['-c', script, 'agent-runner-commit', clonePath, file, message],
    env,
    cwd: home,
  });
}

/**
 * Writes a file in the user's tree as the user: the text on stdin into a temp
 * file beside the target, then a rename over it (rename replaces a link, never
 * writes through it). A directory on the way that points where the user may
 * not write makes the command fail on permissions; root writes nothing there.
 */
export function writeFileAsUserCommand(user: string, home: string, file: string, text: string, mode: number): Command {
  const script =
    'set -e; tmp=$(mktemp -- "$1.agent-runner.XXXXXX"); trap \'rm -f -- "$tmp"\' EXIT; cat > "$tmp"; chmod -- "$2" "$tmp"; mv -f -T -- "$tmp" "$1"; trap - EXIT';
  return asNamedUser(user, home, {
    program: '/bin/sh',
    args: ['-c', script, 'agent-runner-write', file, mode.toString(8)],
    cwd: home,
    stdin: text,
  });
}
