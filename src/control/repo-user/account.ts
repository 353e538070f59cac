// Which Linux account may be a repo's user: one agent-runner created for that
// repo. A registry naming a system account (`user = "proxy"`, uid below
// UID_MIN) or any account agent-runner did not make would have root run
// agents as it, with its files, groups and processes. Read (getent,
// /etc/login.defs) -> decide (pure).
import type { FsPort } from '../../ports.js';
import type { UserAccount } from './privdrop.js';

/** The GECOS comment provisioning gives a repo user: the mark that agent-runner made it, and for which repo. */
export function accountComment(repo: string): string {
  return `agent-runner repo ${repo}`;
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

/** Why `account` may not be repo `repo`'s user, with the fix; undefined when it may. */
export function accountProblem(
  repo: string,
  account: Pick<UserAccount, 'name' | 'uid' | 'comment'>,
  uidMin: number,
): string | undefined {
  const fix = `give repo "${repo}" its own user: remove the user line from [repos.${repo}] (default agent-${repo}) or name a user that does not exist yet, and run agent-runner provision repo ${repo}`;
  if (account.uid === 0) return `repo "${repo}": user "${account.name}" has uid 0; agents never run as root. ${fix}`;
  if (account.uid < uidMin)
    return `repo "${repo}": user "${account.name}" is a system account (uid ${account.uid} is below UID_MIN ${uidMin} of /etc/login.defs); agents never run as a system account. ${fix}`;
  if (account.comment !== accountComment(repo)) {
    return `repo "${repo}": user "${account.name}" was not created by agent-runner for this repo (its comment is ${JSON.stringify(account.comment ?? '')}, not "${accountComment(repo)}"); agents run only as a user made for their repo. ${fix}`;
  }
  return undefined;
}
