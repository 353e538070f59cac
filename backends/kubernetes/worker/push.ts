// The result's push: HEAD to the attempt's result ref at the results
// endpoint, the token sent as an HTTP Authorization header that git takes
// from its environment (GIT_CONFIG_COUNT/KEY/VALUE): never on the argv
// (every user sees it in /proc), never in the URL (git prints URLs), never
// in a file. Redirects are not followed, so the header goes nowhere else.
// Pure: the push as a command.
import type { Command } from '../../../src/types.js';
import { gitCommand } from '../../../src/git/git.js';

export interface ResultPush {
  readonly cwd: string;
  readonly url: string;
  readonly ref: string;
  readonly token: string;
  /** HOME, PATH and the proxy variables git starts with. */
  readonly env: Readonly<Record<string, string>>;
}

/** Pure: the git push of HEAD to the result ref, with the token in git's environment config alone. */
export function resultPushCommand(push: ResultPush): Command {
  const command = gitCommand(push.cwd, ['push', '--porcelain', '--no-verify', push.url, `HEAD:${push.ref}`], {
    env: push.env,
  });
  return {
    ...command,
    env: {
      ...command.env,
      GIT_CONFIG_COUNT: '2',
      GIT_CONFIG_KEY_0: 'http.extraHeader',
      GIT_CONFIG_VALUE_0: `Authorization: Bearer ${push.token}`,
      GIT_CONFIG_KEY_1: 'http.followRedirects',
      GIT_CONFIG_VALUE_1: 'false',
    },
  };
}
