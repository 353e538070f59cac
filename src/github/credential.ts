// The GitHub token comes from the repo user's own git credential store, the
// one its pushes use: `git credential fill` run as that user (a command as
// data), or, for root, the user's ~/.git-credentials read without following
// links. Never from argv, another process's environment, logs or transcripts.
// Nothing here prints a token; callers must not either.
import type { Command } from '../types.js';
import { USER_PATH } from '../system-path.js';

/** The credential store git's `store` helper writes, relative to the user's home. */
export const CREDENTIALS_FILE = '.git-credentials';
export const MAX_CREDENTIALS_BYTES = 64 * 1024;

/**
 * `git credential fill` for https://host as the current user. No terminal
 * prompt, no askpass program, no system config: only the user's own store.
 * It runs in the home, not in a clone, so no repo-local config takes part.
 */
export function credentialFillCommand(host: string, home: string): Command {
  return {
    program: 'git',
    args: ['-c', 'credential.interactive=never', 'credential', 'fill'],
    env: { HOME: home, PATH: USER_PATH, GIT_TERMINAL_PROMPT: '0', GIT_CONFIG_NOSYSTEM: '1' },
    cwd: home,
    stdin: `protocol=https\nhost=${host}\n\n`,
  };
}

/** The password (token) in `git credential fill` output, if any. */
export function passwordFromFill(stdout: string): string | undefined {
  const line = stdout.split('\n').find((entry) => entry.startsWith('password='));
  const value = line?.slice('password='.length).trim();
  return value ? value : undefined;
}

/** The token for `host` in a git-credential-store file (lines like https://user:token@host). */
export function tokenFromCredentialsFile(text: string, host: string): string | undefined {
  for (const line of text.split('\n')) {
    let url: URL;
    try {
      url = new URL(line.trim());
    } catch {
      continue;
    }
    if (url.protocol === 'https:' && url.hostname.toLowerCase() === host.toLowerCase() && url.password)
      return decodeURIComponent(url.password);
  }
  return undefined;
}

/** What to do when no token was found, for an error or the doctor. */
export function tokenFix(host: string, user: string): string {
  return `store a token for https://${host} in ${user}'s credential store, as that user: git config --global credential.helper store && printf 'protocol=https\\nhost=${host}\\nusername=x-access-token\\npassword=TOKEN\\n\\n' | git credential approve (mode 0600, never in the registry)`;
}
