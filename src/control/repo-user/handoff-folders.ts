// The hand-off folders of a repo, as root makes them: beside the runner's
// home, root:root 0755, holding one folder per direction, each writable by
// its sender alone and readable by its receiver's group. The table below is
// the one rule for who owns which; provision makes and repairs by it,
// dispatch refuses to start without it, doctor checks it. Read (lstat) ->
// decide (pure).
import * as path from 'node:path';
import type { FileStat, FsPort } from '../../ports.js';
import { handoffDirs, handoffRoot, type HandoffDirs, type Identity } from '../../identities.js';

export const HANDOFF_ROOT_MODE = 0o755;
/** Owner writes, the group reads, nobody else enters; setgid so what is made inside keeps the receiver's group. */
export const HANDOFF_DIR_MODE = 0o2750;

type Owner = Identity | 'root';

/** Who owns each folder, whose primary group it has, and its mode. */
const HANDOFF_TABLE: readonly {
  readonly dir: 'root' | keyof HandoffDirs;
  readonly owner: Owner;
  readonly group: Owner;
  readonly mode: number;
}[] = [
  { dir: 'root', owner: 'root', group: 'root', mode: HANDOFF_ROOT_MODE },
  { dir: 'toAgent', owner: 'runner', group: 'agent', mode: HANDOFF_DIR_MODE },
  { dir: 'fromAgent', owner: 'agent', group: 'runner', mode: HANDOFF_DIR_MODE },
  { dir: 'toGate', owner: 'runner', group: 'gate', mode: HANDOFF_DIR_MODE },
];

/** An owner as a chown operand: a uid/gid, or a name for an account a plan has yet to create. */
export interface Principal {
  readonly user: number | string;
  readonly group: number | string;
}

export interface HandoffRule<P extends Principal = Principal> {
  readonly path: string;
  readonly owner: P['user'];
  readonly group: P['group'];
  readonly mode: number;
}

/** The folders in the order they are made (the root first), with the owner and group each must have. */
export function handoffRules<P extends Principal>(
  runnerHome: string,
  who: Readonly<Record<Identity, P>>,
): HandoffRule<P>[] {
  const root = handoffRoot(runnerHome);
  const dirs = handoffDirs(root);
  const principal = (owner: Owner): Principal => (owner === 'root' ? { user: 0, group: 0 } : who[owner]);
  return HANDOFF_TABLE.map((entry) => ({
    path: entry.dir === 'root' ? root : dirs[entry.dir],
    owner: principal(entry.owner).user,
    group: principal(entry.group).group,
    mode: entry.mode,
  }));
}

/** The rules for accounts that exist. */
export function accountHandoffRules(
  runnerHome: string,
  accounts: Readonly<Record<Identity, { readonly uid: number; readonly gid: number }>>,
): HandoffRule<{ user: number; group: number }>[] {
  const ids = (account: { uid: number; gid: number }) => ({ user: account.uid, group: account.gid });
  return handoffRules(runnerHome, {
    runner: ids(accounts.runner),
    agent: ids(accounts.agent),
    gate: ids(accounts.gate),
  });
}

/** What lstat says of a folder (a link reported, never followed). */
export type DirFacts = Pick<FileStat, 'uid' | 'gid' | 'mode' | 'isDirectory'> & { readonly isSymlink: boolean };

const octal = (mode: number) => (mode & 0o7777).toString(8).padStart(4, '0');

/** Whether a folder that is there can be repaired in place, or must be refused (a link, a file). */
export function handoffRefusal(file: string, facts: DirFacts | undefined): string | undefined {
  if (!facts) return undefined;
  if (facts.isSymlink) return `${file} is a symbolic link, not the hand-off folder root makes; remove it`;
  if (!facts.isDirectory) return `${file} is not a directory; move it away`;
  return undefined;
}

/** What is wrong with one folder against its rule; undefined when it is right. */
export function handoffDirProblem(
  rule: HandoffRule<{ user: number; group: number }>,
  facts: DirFacts | undefined,
): string | undefined {
  if (!facts) return `${rule.path} does not exist`;
  const refused = handoffRefusal(rule.path, facts);
  if (refused) return refused;
  if (facts.uid === rule.owner && facts.gid === rule.group && (facts.mode & 0o7777) === rule.mode) return undefined;
  return `${rule.path} is ${facts.uid}:${facts.gid ?? '?'} mode ${octal(facts.mode)}, not ${rule.owner}:${rule.group} mode ${octal(rule.mode)}`;
}

/** lstat of each hand-off folder (the root's first: a root that is a link is not walked into). */
export async function readHandoffFacts(
  fs: Pick<FsPort, 'statUntrusted'>,
  runnerHome: string,
): Promise<Map<string, DirFacts | undefined>> {
  const root = handoffRoot(runnerHome);
  const facts = new Map<string, DirFacts | undefined>();
  const lstat = async (dir: string, name: string): Promise<DirFacts | undefined> => {
    const stat = await fs.statUntrusted(dir, name);
    return (
      stat && {
        uid: stat.uid,
        gid: stat.gid,
        mode: stat.mode,
        isDirectory: stat.isDirectory,
        isSymlink: stat.isSymlink,
      }
    );
  };
  const rootFacts = await lstat(path.dirname(root), path.basename(root));
  facts.set(root, rootFacts);
  const usable = rootFacts !== undefined && handoffRefusal(root, rootFacts) === undefined;
  for (const dir of Object.values(handoffDirs(root)))
    facts.set(dir, usable ? await lstat(root, path.basename(dir)) : undefined);
  return facts;
}

/** Every problem of a repo's hand-off folders, for accounts that exist. */
export async function handoffProblems(
  fs: Pick<FsPort, 'statUntrusted'>,
  runnerHome: string,
  accounts: Readonly<Record<Identity, { readonly uid: number; readonly gid: number }>>,
): Promise<string[]> {
  const facts = await readHandoffFacts(fs, runnerHome);
  return accountHandoffRules(runnerHome, accounts)
    .map((rule) => handoffDirProblem(rule, facts.get(rule.path)))
    .filter((problem): problem is string => problem !== undefined);
}
