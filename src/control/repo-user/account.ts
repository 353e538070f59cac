// Which Linux account may be a repo's user: one agent-runner created for that
// repo. A registry naming a system account (`user = "proxy"`, uid below
// UID_MIN) or any account agent-runner did not make would have root run
// agents as it, with its files, groups and processes. Read (getent,
// /etc/login.defs) -> decide (pure).
import type { FsPort } from '../../ports.js';
import type { UserAccount } from './privdrop.js';
import { identityNames, MAX_RUNNER_NAME, type Identity } from '../../identities.js';

/** The GECOS comment provisioning gives a repo user: the mark that agent-runner made it, and for which repo. */
export function accountComment(repo: string): string {
  return `agent-runner repo ${repo}`;
}

/** The GECOS comment of one identity of a repo: the runner keeps the repo user's, the others say their part. */
export function identityComment(repo: string, part: Identity): string {
  return part === 'runner' ? accountComment(repo) : `${accountComment(repo)} ${part}`;
}

/** Why a registry user cannot carry a repo's identities (too long for the suffixes), with the fix; else undefined. */
export function runnerNameProblem(repo: string, user: string, registryFile?: string): string | undefined {
  if (user.length <= MAX_RUNNER_NAME) return undefined;
  const { agent } = identityNames(user);
  return `${registryFile ? `${registryFile}: ` : ''}repos.${repo}.user: "${user}" is ${user.length} characters; the agent and gate identities add "-agent" and "-gate" ("${agent}" is ${agent.length}, Linux allows 32), so a repo user has at most ${MAX_RUNNER_NAME}. Fix: set repos.${repo}.user to a shorter name that does not exist yet and run agent-runner provision repo ${repo}`;
}

/** UID_MIN when /etc/login.defs does not say. */
const DEFAULT_UID_MIN = 1000;

/** UID_MIN from the text of /etc/login.defs. */
export function parseUidMin(text: string | undefined): number {
  const match = /^[ \t]*UID_MIN[ \t]+(\d+)[ \t]*$/m.exec(text ?? '');
  return match ? Number(match[1]) : DEFAULT_UID_MIN;
}

export async function readUidMin(fs: Pick<FsPort, 'readTextIfExists'>): Promise<number> {
  return parseUidMin(await fs.readTextIfExists('/etc/login.defs'));
}

/**
 * Why `account` may not be `part` of repo `repo` (the runner: the repo's user), with the fix; undefined when it may.
 * Another repo's account, or another part's of this repo, has another comment and is refused too.
 */
export function accountProblem(
  repo: string,
  account: Pick<UserAccount, 'name' | 'uid' | 'comment'>,
  uidMin: number,
  part: Identity = 'runner',
): string | undefined {
  const who = part === 'runner' ? `user "${account.name}"` : `${part} identity "${account.name}"`;
  const fix =
    part === 'runner'
      ? `give repo "${repo}" its own user: remove the user line from [repos.${repo}] (default agent-${repo}) or name a user that does not exist yet, and run agent-runner provision repo ${repo}`
      : `remove that account (userdel ${account.name}) or give repo "${repo}" another user (repos.${repo}.user), and run agent-runner provision repo ${repo}`;
  if (account.uid === 0) return `repo "${repo}": ${who} has uid 0; agents never run as root. ${fix}`;
  if (account.uid < uidMin)
    return `repo "${repo}": ${who} is a system account (uid ${account.uid} is below UID_MIN ${uidMin} of /etc/login.defs); agents never run as a system account. ${fix}`;
  const comment = identityComment(repo, part);
  if (account.comment !== comment) {
    return `repo "${repo}": ${who} was not created by agent-runner for this repo (its comment is ${JSON.stringify(account.comment ?? '')}, not "${comment}"); agents run only as a user made for their repo. ${fix}`;
  }
  return undefined;
}
