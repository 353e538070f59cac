// doctor's GitHub checks, for real against the API: the token (read by root
// from the repo user's ~/.git-credentials without following links) can read
// the repository and push auto/work, the base exists, whether it is
// protected and which checks it requires. Each failure names the missing
// permission and the fix. The token is never part of a detail.
import type { FsPort } from '../../src/ports.js';
import type { RegistryRepo } from '../../src/types.js';
import type { Check } from './check.js';
import { GitHubRequestError, type GitHubConnector, type RepoInfo } from '../../src/github/api.js';
import { apiBaseUrl, parseOrigin } from '../../src/github/origin.js';
import {
  CREDENTIALS_FILE,
  MAX_CREDENTIALS_BYTES,
  tokenFix,
  tokenFromCredentialsFile,
} from '../../src/github/credential.js';
import { STAGING_BRANCH } from '../../src/staging/names.js';
import { UntrustedPathError } from '../../src/errors.js';

export interface GitHubDoctorDeps {
  readonly fs: Pick<FsPort, 'readUntrusted' | 'statUntrusted'>;
  readonly github: GitHubConnector;
  onWait(message: string): void;
}

export interface GitHubDoctorTarget {
  readonly repo: RegistryRepo;
  /** The repo user's home, where its credential store is. */
  readonly home: string;
  /** The clone's origin URL (the registry's url, or what the clone says). */
  readonly originUrl: string | undefined;
}

const check = (name: string, ok: boolean, detail: string, fix: string): Check => ({
  name,
  ok,
  detail,
  fix: ok ? '' : fix,
});

const READ_FIX =
  'give the token read access to the repository: fine-grained token: Repository access includes it, Metadata, Contents and Pull requests: read; classic token: the repo scope';
const PUSH_FIX =
  'give the token write access: fine-grained token: Contents: read and write and Pull requests: read and write; classic token: the repo scope; and its user needs write access to the repository';

function why(error: unknown): string {
  return error instanceof GitHubRequestError ? error.message : (error as Error).message;
}

export async function githubChecks(deps: GitHubDoctorDeps, target: GitHubDoctorTarget): Promise<Check[]> {
  const { repo } = target;
  const checks: Check[] = [];
  const origin = target.originUrl ? parseOrigin(target.originUrl) : undefined;
  checks.push(
    check(
      'GitHub origin',
      origin !== undefined,
      origin
        ? `${origin.owner}/${origin.repo} on ${origin.host} (API ${apiBaseUrl(origin.host, repo.promote?.githubApiUrl)})`
        : `origin ${target.originUrl === undefined ? 'is not set' : 'is not a GitHub URL'}`,
      `set repos.${repo.name}.url (or the clone's origin) to https://github.com/OWNER/REPO.git or git@github.com:OWNER/REPO.git`,
    ),
  );
  if (!origin) return checks;
  let text: string | undefined;
  let unreadable: string | undefined;
  try {
    text = await deps.fs.readUntrusted(target.home, CREDENTIALS_FILE, MAX_CREDENTIALS_BYTES);
  } catch (error) {
    if (!(error instanceof UntrustedPathError)) throw error;
    unreadable = error.message;
  }
  const stat = text === undefined ? undefined : await deps.fs.statUntrusted(target.home, CREDENTIALS_FILE);
  const token = text === undefined ? undefined : tokenFromCredentialsFile(text, origin.host);
  const credentialFile = `${target.home}/${CREDENTIALS_FILE}`;
  checks.push(
    check(
      'GitHub token stored',
      token !== undefined,
      unreadable ??
        (token
          ? `a token for ${origin.host} in ${credentialFile}`
          : text === undefined
            ? `${credentialFile} does not exist`
            : `no https://${origin.host} entry in ${credentialFile}`),
      tokenFix(origin.host, repo.user),
    ),
  );
  if (stat)
    checks.push(
      check(
        'credential store is private',
        (stat.mode & 0o077) === 0,
        `${credentialFile} mode ${(stat.mode & 0o777).toString(8)}`,
        `chmod 0600 ${credentialFile} (as ${repo.user})`,
      ),
    );
  if (!token) return checks;

  const api = deps.github.connect({
    baseUrl: apiBaseUrl(origin.host, repo.promote?.githubApiUrl),
    token,
    onWait: deps.onWait,
  });
  const slug = { owner: origin.owner, repo: origin.repo };
  let info: RepoInfo | undefined;
  try {
    info = await api.getRepo(slug);
    checks.push(
      check('token can read the repo', true, `${info.fullName} (default branch ${info.defaultBranch})`, READ_FIX),
    );
  } catch (error) {
    checks.push(check('token can read the repo', false, why(error), READ_FIX));
    return checks;
  }
  const push = info.permissions?.push === true;
  const staging = await api.getBranch(slug, STAGING_BRANCH).catch(() => undefined);
  const stagingBlocked = staging?.protected === true;
  checks.push(
    check(
      `token can push ${STAGING_BRANCH}`,
      push && !stagingBlocked,
      !push
        ? `the token's user has no push permission on ${info.fullName} (missing: Contents: write)`
        : stagingBlocked
          ? `${STAGING_BRANCH} is a protected branch on GitHub`
          : `push permission on ${info.fullName}${staging ? '' : `; ${STAGING_BRANCH} does not exist yet (the first drain creates it)`}`,
      stagingBlocked
        ? `remove the branch protection (or ruleset) that covers ${STAGING_BRANCH}: agent-runner force-pushes it with a lease`
        : PUSH_FIX,
    ),
  );
  let base;
  try {
    base = await api.getBranch(slug, repo.baseBranch);
  } catch (error) {
    checks.push(check('base branch exists on GitHub', false, why(error), READ_FIX));
    return checks;
  }
  checks.push(
    check(
      'base branch exists on GitHub',
      base !== undefined,
      base ? `${repo.baseBranch} at ${base.sha.slice(0, 12)}` : `no branch ${repo.baseBranch} in ${info.fullName}`,
      `set repos.${repo.name}.base to an existing branch (GitHub's default is ${info.defaultBranch})`,
    ),
  );
  if (!base) return checks;
  const mode = repo.promote?.mode ?? 'push';
  const protection = base.protected
    ? `${repo.baseBranch} is protected${base.requiredChecks.length ? `; required checks: ${base.requiredChecks.join(', ')}` : '; no required checks'}`
    : `${repo.baseBranch} is not protected`;
  checks.push(
    check(
      'base protection fits promote',
      !(base.protected && mode === 'push'),
      `${protection}; promote = "${mode}"`,
      `a protected base refuses a direct push: set promote = "pr" for repos.${repo.name} in the registry (docs/github.md)`,
    ),
  );
  return checks;
}
