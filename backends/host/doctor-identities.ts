// doctor: the file boundaries between a repo's identities, tried for real.
// Each probe runs as the agent or the gate (setpriv, like every doctor probe)
// and tries to open the runner's home, token, clone and git dir for reading,
// or its refs for writing; the kernel's answer is the result. Nothing is
// created: a write is tried only on what is there (append of nothing to a
// file, access(2) on a directory). Root only lstats the hand-off folders.
import * as path from 'node:path';
import type { RegistryRepo } from '../../src/types.js';
import { dropPrivileges, lookupUser, type UserAccount } from '../../src/control/repo-user/privdrop.js';
import { accountProblem, readUidMin } from '../../src/control/repo-user/account.js';
import {
  accountHandoffRules,
  handoffDirProblem,
  readHandoffFacts,
} from '../../src/control/repo-user/handoff-folders.js';
import { identityNames, type Identity } from '../../src/identities.js';
import { SYSTEM_PATH } from '../../src/system-path.js';
import { repoUserStateDir } from '../../src/paths.js';
import type { Check } from './check.js';
import type { HostDeps } from './provision-run.js';

type ProbeKind = 'read' | 'append' | 'write-dir';

/**
 * Exit 0: the identity could (the boundary is open). Otherwise the shell or ls says "Permission denied" when the kernel
 * refused it; anything else is a probe that could not be made.
 */
const PROBE = [
  'case "$1" in',
  '  read) exec 3< "$2" ;;',
  '  append) exec 3>> "$2" ;;',
  '  write-dir) test -w "$2" && exit 0; ls -d -- "$2" > /dev/null || exit 1; echo "$2: Permission denied" >&2; exit 1 ;;',
  'esac',
].join('\n');

const check = (name: string, ok: boolean, detail: string, fix: string): Check => ({
  name,
  ok,
  detail,
  fix: ok ? '' : fix,
});

interface Boundary {
  readonly name: string;
  readonly kind: ProbeKind;
  readonly target: string;
  /** Said in the detail when the target is not the one named (no token file: the home was tried). */
  readonly note?: string;
  readonly fix: string;
}

const octal = (mode: number) => mode.toString(8).padStart(4, '0');

export async function doctorIdentities(deps: HostDeps, repo: RegistryRepo): Promise<Check[]> {
  const { process, fs } = deps;
  const reprovision = `agent-runner provision repo ${repo.name}`;
  const names = identityNames(repo.user);
  const uidMin = await readUidMin(fs);
  const accounts: Partial<Record<Identity, UserAccount>> = {};
  const checks: Check[] = [];
  for (const part of ['runner', 'agent', 'gate'] as const) {
    const account = await lookupUser(process, names[part]);
    const problem = account
      ? accountProblem(repo.name, account, uidMin, part)
      : `no account ${names[part]}: the repo has no ${part} identity yet`;
    if (account && !problem) accounts[part] = account;
    checks.push(
      check(
        `${part} identity`,
        problem === undefined,
        problem ?? `${names[part]} is uid ${account!.uid}, "${account!.comment}"`,
        reprovision,
      ),
    );
  }
  const { runner, agent, gate } = accounts;
  if (!runner) return checks;
  const home = runner.home;
  const insideHome = !path.relative(home, repo.path).startsWith('..');
  const closeClone = insideHome ? `chmod 0700 ${home}` : `chmod -R o-rwx ${repo.path}`;
  const gitDir = path.join(repo.path, '.git');
  const token = path.join(home, '.git-credentials');
  const hasToken = (await fs.statUntrusted(home, '.git-credentials').catch(() => undefined)) !== undefined;
  const packedRefs = path.join(gitDir, 'packed-refs');
  const hasPackedRefs = (await fs.stat(packedRefs).catch(() => undefined)) !== undefined;
  const refsFix = `chown -R ${runner.name}: ${gitDir} && chmod -R go-w ${gitDir}`;
  // Closed to both the agent and the gate: the runner's home and the token in it.
  const homeAndToken: readonly Boundary[] = [
    { name: "cannot read the runner's home", kind: 'read', target: home, fix: `chmod 0700 ${home}` },
    {
      name: "cannot read the runner's git token",
      kind: 'read',
      target: hasToken ? token : home,
      ...(hasToken ? {} : { note: `there is no ${token}; tried the home` }),
      fix: `chmod 0600 ${token} && chmod 0700 ${home}`,
    },
  ];
  const probes: readonly [UserAccount | undefined, Identity, readonly Boundary[]][] = [
    [
      agent,
      'agent',
      [
        ...homeAndToken,
        {
          name: "cannot read the runner's state",
          kind: 'read',
          target: repoUserStateDir(home),
          fix: `chmod 0700 ${home} ${repoUserStateDir(home)}`,
        },
        { name: "cannot read the runner's clone", kind: 'read', target: repo.path, fix: closeClone },
        { name: "cannot read the clone's git dir", kind: 'read', target: gitDir, fix: closeClone },
        {
          name: "cannot write the clone's refs",
          kind: 'write-dir',
          target: path.join(gitDir, 'refs', 'heads'),
          fix: refsFix,
        },
        {
          name: "cannot write the clone's packed-refs",
          kind: hasPackedRefs ? 'append' : 'write-dir',
          target: hasPackedRefs ? packedRefs : gitDir,
          ...(hasPackedRefs ? {} : { note: `there is no ${packedRefs}; tried creating it in ${gitDir}` }),
          fix: refsFix,
        },
      ],
    ],
    [
      gate,
      'gate',
      [
        ...homeAndToken,
        { name: 'cannot write the clone', kind: 'write-dir', target: repo.path, fix: `${closeClone}; ${refsFix}` },
      ],
    ],
  ];
  for (const [account, part, boundaries] of probes) {
    if (!account) continue;
    for (const boundary of boundaries) checks.push(await probeBoundary(deps, account, part, boundary));
  }
  checks.push(...(await handoffChecks(deps, home, runner, agent, gate, reprovision)));
  return checks;
}

async function probeBoundary(deps: HostDeps, account: UserAccount, part: Identity, boundary: Boundary): Promise<Check> {
  const env = { PATH: SYSTEM_PATH, HOME: account.home, USER: account.name, LOGNAME: account.name, LANG: 'C.UTF-8' };
  const result = await deps.process.run(
    dropPrivileges(account, {
      program: '/bin/sh',
      args: ['-c', PROBE, 'agent-runner-probe', boundary.kind, boundary.target],
      env,
      cwd: '/',
    }),
  );
  const tried = `${boundary.kind === 'read' ? 'open for reading' : 'write'} ${boundary.target}`;
  const note = boundary.note ? ` (${boundary.note})` : '';
  const name = `${part} ${boundary.name}`;
  if (result.exitCode === 0) return check(name, false, `${account.name} could ${tried}${note}`, boundary.fix);
  if (/Permission denied/.test(result.stderr))
    return check(name, true, `${account.name} may not ${tried}: permission denied${note}`, '');
  return check(
    name,
    false,
    `could not try to ${tried} as ${account.name} (exit ${result.exitCode}: ${result.stderr.trim() || 'no output'})${note}`,
    `check that ${boundary.target} exists and that ${account.name} can be switched to (setpriv)`,
  );
}

async function handoffChecks(
  deps: HostDeps,
  home: string,
  runner: UserAccount,
  agent: UserAccount | undefined,
  gate: UserAccount | undefined,
  reprovision: string,
): Promise<Check[]> {
  if (!agent || !gate)
    return [
      check(
        'hand-off folders',
        false,
        'they need the agent and gate identities, which are missing or wrong (above)',
        reprovision,
      ),
    ];
  const facts = await readHandoffFacts(deps.fs, home).catch((error: Error) => error);
  return accountHandoffRules(home, { runner, agent, gate }).map((rule) => {
    const problem = facts instanceof Error ? facts.message : handoffDirProblem(rule, facts.get(rule.path));
    return check(
      `hand-off folder ${path.basename(rule.path)}`,
      problem === undefined,
      problem ?? `${rule.path} is ${rule.owner}:${rule.group} mode ${octal(rule.mode)}`,
      `${reprovision} (it repairs owners and modes; a link or a file there it refuses: remove it first)`,
    );
  });
}
