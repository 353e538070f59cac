// Dropping from root to a repo's user, as a command builder. Node's own
// spawn({uid, gid}) keeps root's supplementary groups out but leaks the whole
// parent environment, so the drop is done by setpriv with `env -i`: the child
// gets exactly the environment built here and nothing of root's.
import type { ProcessPort } from '../../ports.js';
import type { Command } from '../../types.js';
import { SYSTEM_PATH } from '../../system-path.js';

export interface UserAccount {
  readonly name: string;
  readonly uid: number;
  readonly gid: number;
  readonly home: string;
  readonly shell: string;
  /** The GECOS field: provisioning marks a repo user there (account.ts). */
  readonly comment?: string;
}

export interface AgentEnvInput {
  readonly user: UserAccount;
  /** PATH for the agent (the registry's toolchain PATH). */
  readonly path: string;
  /** The repo's local proxy port; undefined when no proxy is configured. */
  readonly proxyPort: number | undefined;
  /** Non-secret variables from the registry. */
  readonly extra: Readonly<Record<string, string>>;
}

/** The complete environment a repo user's process starts with. */
export function agentEnvironment(input: AgentEnvInput): Record<string, string> {
  const env: Record<string, string> = { ...input.extra };
  env.HOME = input.user.home;
  env.USER = input.user.name;
  env.LOGNAME = input.user.name;
  env.PATH = input.path;
  env.LANG = env.LANG ?? 'C.UTF-8';
  if (input.proxyPort !== undefined) Object.assign(env, proxyEnvironment(input.proxyPort));
  return env;
}

/** The proxy variables for a repo's proxy port, both cases (curl reads only the lowercase ones). */
export function proxyEnvironment(proxyPort: number): Record<string, string> {
  // 127.0.0.1, not localhost: the egress lock allows exactly that address.
  const proxy = `http://127.0.0.1:${proxyPort}`;
  const noProxy = '127.0.0.1,localhost,::1';
  return {
    http_proxy: proxy,
    https_proxy: proxy,
    HTTP_PROXY: proxy,
    HTTPS_PROXY: proxy,
    no_proxy: noProxy,
    NO_PROXY: noProxy,
  };
}

/** Who to drop to: resolved ids, or a name setpriv resolves itself (for plans made before the user exists). */
export type DropTarget = Pick<UserAccount, 'uid' | 'gid'> | Pick<UserAccount, 'name'>;

/**
 * Wraps a command so it runs as `user`: real and effective uid/gid, the
 * user's own supplementary groups, no new privileges, and `env` only. The
 * process edge starts every command in a new session with no terminal
 * (src/io/real-ports.ts), so nothing run as a repo user can reach root's tty. With
 * parentDeathSignal, the command gets that signal when its parent dies.
 */
export function dropPrivileges(
  user: DropTarget,
  command: Command,
  options: { parentDeathSignal?: 'SIGTERM' } = {},
): Command {
  const envArgs = Object.entries(command.env).map(([key, value]) => `${key}=${value}`);
  const [uid, gid] = 'uid' in user ? [String(user.uid), String(user.gid)] : [user.name, user.name];
  return {
    program: 'setpriv',
    args: [
      ...(options.parentDeathSignal ? ['--pdeathsig', options.parentDeathSignal] : []),
      `--reuid=${uid}`,
      `--regid=${gid}`,
      '--init-groups',
      '--no-new-privs',
      '--',
      '/usr/bin/env',
      '-i',
      ...envArgs,
      command.program,
      ...command.args,
    ],
    env: { PATH: SYSTEM_PATH },
    cwd: command.cwd,
    ...(command.stdin === undefined ? {} : { stdin: command.stdin }),
  };
}

/** What useradd accepts as a user name (and what lookupUser will look up). */
export const USER_NAME_PATTERN = /^[a-z_][a-z0-9_-]{0,31}$/;

/** Parses one `getent passwd` line. */
export function parsePasswdLine(line: string): UserAccount | undefined {
  const fields = line.trim().split(':');
  if (fields.length < 7) return undefined;
  const [name, , uid, gid, comment, home, shell] = fields as [string, string, string, string, string, string, string];
  if (!/^\d+$/.test(uid) || !/^\d+$/.test(gid)) return undefined;
  return { name, uid: Number(uid), gid: Number(gid), home, shell, comment };
}

/** Looks a user up by name (or by uid); undefined when there is no such user. */
export async function lookupUser(process: ProcessPort, who: string | number): Promise<UserAccount | undefined> {
  if (typeof who === 'number' ? !Number.isInteger(who) || who < 0 : !USER_NAME_PATTERN.test(who)) return undefined;
  const result = await process.run({
    program: 'getent',
    args: ['passwd', String(who)],
    env: { PATH: '/usr/bin:/bin' },
    cwd: '/',
  });
  if (result.exitCode !== 0) return undefined;
  return parsePasswdLine(result.stdout);
}
