// Which GitHub repository a workspace promotes into, the API root, and a
// client holding the token from the current user's own credential store.
// The token is never printed, logged or passed on a command line.
import type { CliContext } from './context.js';
import type { LifecycleInput } from '../staging/lifecycle.js';
import type { GitHubTarget } from '../staging/pull-request.js';
import { UsageError } from '../errors.js';
import { configuredRemoteUrl } from '../git/remote.js';
import { apiBaseUrl, apiUrlProblem, parseOrigin, type GitHubOrigin } from '../github/origin.js';
import { credentialFillCommand, passwordFromFill, tokenFix } from '../github/credential.js';

export interface ResolvedTarget extends GitHubTarget {
  readonly origin: GitHubOrigin;
  readonly baseUrl: string;
}

/** The origin URL without any user or password in it, for messages. */
function withoutCredentials(url: string): string {
  return url.replace(/^([a-z+]+:\/\/)[^@/]*@/i, '$1');
}

export async function githubTarget(
  context: CliContext,
  input: LifecycleInput,
  apiOption: string | undefined,
): Promise<ResolvedTarget> {
  if (!context.github) throw new UsageError('no GitHub client is wired into this agent-runner');
  const url = await configuredRemoteUrl(input.git, input.workspace, 'origin');
  if (!url)
    throw new UsageError(
      `${input.workspace} has no origin remote; promote --pr needs the GitHub repository as origin (git remote add origin https://github.com/OWNER/REPO.git)`,
    );
  const origin = parseOrigin(url);
  if (!origin)
    throw new UsageError(
      `the origin of ${input.workspace} (${withoutCredentials(url)}) is not a GitHub URL; expected https://HOST/OWNER/REPO.git, ssh://git@HOST/OWNER/REPO.git or git@HOST:OWNER/REPO.git`,
    );
  if (apiOption !== undefined) {
    const problem = apiUrlProblem(apiOption);
    if (problem)
      throw new UsageError(`--github-api ${problem}; give the API root, e.g. https://ghe.example.com/api/v3`);
  }
  const home = context.env.HOME;
  if (!home) throw new UsageError('HOME is not set: the GitHub token is read from the credential store in your home');
  const fill = await context.ports.process.run(credentialFillCommand(origin.host, home));
  const token = fill.exitCode === 0 ? passwordFromFill(fill.stdout) : undefined;
  if (!token)
    throw new UsageError(
      `no token for https://${origin.host} in the git credential store of ${context.env.USER ?? `uid ${context.uid}`}; ${tokenFix(origin.host, context.env.USER ?? 'the repo user')}`,
    );
  const baseUrl = apiBaseUrl(origin.host, apiOption);
  const api = context.github.connect({ baseUrl, token, onWait: (message) => context.err(`${message}\n`) });
  return { api, slug: { owner: origin.owner, repo: origin.repo }, origin, baseUrl };
}
