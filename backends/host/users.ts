// The per-repo Linux user, as commands (data). One user per repo, its own
// group, home 0700 holding the clone, its worktrees and its secrets; no sudo,
// no password (useradd leaves the account locked for password login).
//
// Shell: /bin/bash, not nologin. Agents run tools through a shell (Claude
// Code's Bash tool, codex's exec), and with nologin they fail in confusing
// ways. Login stays impossible anyway: the password is locked and there
// are no authorized_keys; root reaches the user only through setpriv.
import type { Command } from '../../src/types.js';
import { systemCommand, SYSTEM_PATH } from './exec.js';

export const REPO_USER_SHELL = '/bin/bash';

/** The committer on every commit an agent makes; the author comes from the clone's config. */
export const COMMITTER = { name: 'agent-runner', email: 'agent-runner@localhost' } as const;

/**
 * Environment that makes git record agent-runner as committer while the
 * clone's local user.name/user.email (the registry's author) stays the
 * author. Added to the agent's environment at run time.
 */
export function committerEnvironment(): Record<string, string> {
  return { GIT_COMMITTER_NAME: COMMITTER.name, GIT_COMMITTER_EMAIL: COMMITTER.email };
}

export function createUserCommands(user: string, home: string, repo: string): Command[] {
  return [
    systemCommand('useradd', ['--create-home', '--home-dir', home, '--user-group', '--shell', REPO_USER_SHELL, '--comment', `agent-runner repo ${repo}`, user]),
    systemCommand('chmod', ['0700', home]),
  ];
}

/** Keeps the home (it is moved aside separately): nothing the user had is lost. */
export function removeUserCommand(user: string): Command {
  return systemCommand('userdel', [user]);
}

/**
 * A command run as a named user, for plans made before the user has a uid
 * (setpriv resolves names itself). Same drop as src/privdrop.ts: real and
 * effective ids, the user's groups only, no new privileges, env -i.
 */
export function asNamedUser(user: string, home: string, command: Omit<Command, 'env'> & { env?: Readonly<Record<string, string>> }): Command {
  const env = { HOME: home, USER: user, LOGNAME: user, PATH: '/usr/local/bin:/usr/bin:/bin', LANG: 'C.UTF-8', ...(command.env ?? {}) };
  return {
    program: 'setpriv',
    args: [`--reuid=${user}`, `--regid=${user}`, '--init-groups', '--no-new-privs', '--', '/usr/bin/env', '-i', ...Object.entries(env).map(([key, value]) => `${key}=${value}`), command.program, ...command.args],
    env: { PATH: SYSTEM_PATH },
    cwd: command.cwd,
    ...(command.stdin === undefined ? {} : { stdin: command.stdin }),
  };
}

/** git with no system or global config: what the user's clone says is all that counts. */
const GIT_ENV = { GIT_CONFIG_NOSYSTEM: '1', GIT_TERMINAL_PROMPT: '0' };

export function cloneCommand(user: string, home: string, url: string, clonePath: string, base: string): Command {
  // A local path as URL only works when the repo user may own-read it: git
  // refuses a repository owned by someone else ("dubious ownership").
  return asNamedUser(user, home, { program: 'git', args: ['clone', '--quiet', '--branch', base, '--', url, clonePath], env: GIT_ENV, cwd: home });
}

export function gitConfigCommand(user: string, home: string, clonePath: string, key: string, value: string): Command {
  return asNamedUser(user, home, { program: 'git', args: ['-C', clonePath, 'config', '--local', key, value], env: GIT_ENV, cwd: home });
}

export function gitCommitCommand(user: string, home: string, clonePath: string, file: string, message: string): Command[] {
  const env = { ...GIT_ENV, ...committerEnvironment() };
  return [
    asNamedUser(user, home, { program: 'git', args: ['-C', clonePath, 'add', '--', file], env, cwd: home }),
    asNamedUser(user, home, { program: 'git', args: ['-C', clonePath, 'commit', '--quiet', '--no-verify', '-m', message, '--', file], env, cwd: home }),
  ];
}

// ---------------------------------------------------------------- secrets

/** Files in a repo user's home that hold credentials (mode 0600, never elsewhere). */
export const SECRET_FILES: readonly string[] = ['.git-credentials', '.claude/.credentials.json', '.codex/auth.json', '.config/gh/hosts.yml'];

const SECRET_KEY = /token|secret|key|password|credential/i;
/** Shorter strings would redact ordinary words; real tokens are long. */
const MIN_SECRET_LENGTH = 8;

/** The secret strings in one credentials file's text. Pure. */
export function extractSecrets(file: string, text: string): string[] {
  const found = new Set<string>();
  if (file.endsWith('.git-credentials')) {
    // https://user:TOKEN@host, one a line.
    for (const line of text.split('\n')) {
      const match = /^[a-z][a-z0-9+.-]*:\/\/[^:/@\s]*:([^@\s]+)@/i.exec(line.trim());
      if (match) found.add(decodeURIComponent(match[1]!));
    }
  } else if (file.endsWith('.json')) {
    try {
      collect(JSON.parse(text), false, found);
    } catch {
      // Not JSON after all: fall back to key: value lines.
      for (const match of text.matchAll(/(\w*(?:token|secret|key|password)\w*)\W+([A-Za-z0-9._~+/=-]{8,})/gi)) found.add(match[2]!);
    }
  } else {
    for (const match of text.matchAll(/^\s*[\w-]*(?:token|secret|key|password)[\w-]*\s*:\s*["']?([^"'\s]+)/gim)) found.add(match[1]!);
  }
  return [...found].filter((secret) => secret.length >= MIN_SECRET_LENGTH);
}

function collect(value: unknown, underSecretKey: boolean, into: Set<string>): void {
  if (typeof value === 'string') {
    if (underSecretKey) into.add(value);
  } else if (Array.isArray(value)) {
    for (const item of value) collect(item, underSecretKey, into);
  } else if (value && typeof value === 'object') {
    for (const [key, inner] of Object.entries(value)) collect(inner, underSecretKey || SECRET_KEY.test(key), into);
  }
}

/** Every known secret of a repo user, read from its home (files that do not exist are skipped). */
export async function secretValues(fs: { readTextIfExists(path: string): Promise<string | undefined> }, home: string): Promise<string[]> {
  const all = new Set<string>();
  for (const file of SECRET_FILES) {
    const text = await fs.readTextIfExists(`${home}/${file}`);
    if (text !== undefined) for (const secret of extractSecrets(file, text)) all.add(secret);
  }
  return [...all];
}

/** The text with every occurrence of every secret replaced by [redacted]. Pure. */
export function redactSecrets(text: string, secrets: readonly string[]): string {
  // Longest first, so a secret that contains another is replaced whole.
  const ordered = [...new Set(secrets)].filter((secret) => secret.length >= MIN_SECRET_LENGTH).sort((a, b) => b.length - a.length);
  let result = text;
  for (const secret of ordered) result = result.split(secret).join('[redacted]');
  return result;
}
