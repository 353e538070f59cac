// The agent and gate accounts of a repo and the hand-off folders between the
// three identities, as provisioning steps. Pure: what exists in, what is
// missing or wrong out, so a repo provisioned before these existed (one user)
// gets exactly the missing parts on its next provision: that is its migration.
import * as path from 'node:path';
import type { UserAccount } from '../../src/control/repo-user/privdrop.js';
import { accountProblem, identityComment } from '../../src/control/repo-user/account.js';
import {
  handoffDirProblem,
  handoffRefusal,
  handoffRules,
  type DirFacts,
  type Principal,
} from '../../src/control/repo-user/handoff-folders.js';
import { handoffRoot, identityNames, type LaunchedIdentity } from '../../src/identities.js';
import { UsageError } from '../../src/errors.js';
import type { ProvisionStep } from './provision-step.js';
import { createAccountCommands, DEFAULT_SHELL, handoffDirCommand, removeUserCommand } from './users.js';
import { homeOf } from './layout.js';
import { systemCommand } from './exec.js';

export interface IdentityState {
  readonly agent: UserAccount | undefined;
  readonly gate: UserAccount | undefined;
  /** lstat of each hand-off folder by path (src/control/repo-user/handoff.ts readHandoffFacts). */
  readonly handoff: ReadonlyMap<string, DirFacts | undefined>;
}

const LAUNCHED: readonly LaunchedIdentity[] = ['agent', 'gate'];

const octal = (mode: number) => mode.toString(8).padStart(4, '0');

/** The steps that create the missing agent and gate accounts and make or repair the hand-off folders. */
export function planIdentities(
  repo: { readonly name: string; readonly user: string },
  runner: UserAccount | undefined,
  runnerHome: string,
  state: IdentityState,
  uidMin: number,
): ProvisionStep[] {
  const names = identityNames(repo.user);
  const shell = runner?.shell || DEFAULT_SHELL;
  const steps: ProvisionStep[] = [];
  for (const part of LAUNCHED) {
    const account = state[part];
    if (account) {
      const refused = accountProblem(repo.name, account, uidMin, part);
      if (refused) throw new UsageError(refused);
      continue;
    }
    const name = names[part];
    const home = homeOf(name);
    const description = `create ${part} identity ${name} (own group, home ${home} 0700, password locked, shell ${shell})`;
    const commands = createAccountCommands(name, home, identityComment(repo.name, part), shell);
    commands.forEach((command, i) =>
      steps.push({
        description,
        command,
        ...(i === commands.length - 1 ? { done: `created ${part} identity ${name}` } : {}),
      }),
    );
  }

  // Accounts a step above creates are named (useradd --user-group gives each a group of its name); others by id.
  const principal = (account: UserAccount | undefined, name: string): Principal =>
    account ? { user: account.uid, group: account.gid } : { user: name, group: name };
  const rules = handoffRules(runnerHome, {
    runner: principal(runner, names.runner),
    agent: principal(state.agent, names.agent),
    gate: principal(state.gate, names.gate),
  });
  // The same rules by name, for people: root, the runner, <user>-agent, <user>-gate.
  const named = (name: string): Principal => ({ user: name, group: name });
  const shown = handoffRules(runnerHome, {
    runner: named(names.runner),
    agent: named(names.agent),
    gate: named(names.gate),
  });
  rules.forEach((rule, i) => {
    const facts = state.handoff.get(rule.path);
    const refused = handoffRefusal(rule.path, facts);
    if (refused) throw new UsageError(`provision repo ${repo.name}: hand-off folder ${refused}, then run it again`);
    const label = (who: number | string) => (who === 0 ? 'root' : String(who));
    const wanted = `${label(shown[i]!.owner)}:${label(shown[i]!.group)} mode ${octal(rule.mode)}`;
    if (!facts) {
      steps.push({
        description: `create hand-off folder ${rule.path} (${wanted})`,
        command: handoffDirCommand(rule.path, rule.owner, rule.group, rule.mode, true),
        done: `created hand-off folder ${rule.path}`,
      });
      return;
    }
    const problem =
      typeof rule.owner === 'number' && typeof rule.group === 'number'
        ? handoffDirProblem({ ...rule, owner: rule.owner, group: rule.group }, facts)
        : `${rule.path} belongs to accounts made only now`;
    if (problem)
      steps.push({
        description: `repair hand-off folder ${rule.path} to ${wanted} (${problem})`,
        command: handoffDirCommand(rule.path, rule.owner, rule.group, rule.mode, false),
        done: `repaired hand-off folder ${rule.path}`,
      });
  });
  return steps;
}

export interface IdentityRemoveState {
  readonly agent: UserAccount | undefined;
  readonly gate: UserAccount | undefined;
  /** Homes and the hand-off root that exist, by path. */
  readonly existing: ReadonlySet<string>;
}

/** Deleting the agent and gate accounts; their homes and the hand-off root move aside beside the runner's home. */
export function planIdentitiesRemove(
  repo: string,
  user: string,
  runnerHome: string,
  state: IdentityRemoveState,
  aside: string,
): { readonly users: ProvisionStep[]; readonly moves: ProvisionStep[] } {
  const names = identityNames(user);
  const users: ProvisionStep[] = [];
  const moves: ProvisionStep[] = [];
  const moveAside = (from: string, to: string, what: string) => {
    if (!state.existing.has(from)) return;
    moves.push({
      description: `move ${from} (${what}) aside to ${to}`,
      command: systemCommand('mv', ['--no-target-directory', from, to]),
    });
    moves.push({
      description: `give ${to} to root (its uid may be reused)`,
      command: systemCommand('chown', ['-R', '-h', '-P', 'root:root', '--', to]),
    });
  };
  for (const part of LAUNCHED) {
    const account = state[part];
    // An account of that name that agent-runner did not make for this part of this repo is not ours to delete.
    if (account && account.comment !== identityComment(repo, part))
      throw new UsageError(
        `provision repo ${repo} --remove: ${part} identity "${account.name}" was not created by agent-runner for this repo (its comment is ${JSON.stringify(account.comment ?? '')}, not "${identityComment(repo, part)}"); remove it by hand if it is no longer needed`,
      );
    if (account)
      users.push({
        description: `delete ${part} identity ${names[part]} (its home is kept)`,
        command: removeUserCommand(names[part]),
      });
    moveAside(account?.home ?? homeOf(names[part]), `${aside}.${part}`, `${part} home`);
  }
  moveAside(handoffRoot(runnerHome), `${aside}.handoff`, 'hand-off folders');
  return { users, moves };
}

/** The homes and hand-off root a removal looks for. */
export function identityRemovePaths(
  user: string,
  runnerHome: string,
  accounts: { readonly agent: UserAccount | undefined; readonly gate: UserAccount | undefined },
): string[] {
  const names = identityNames(user);
  return [
    accounts.agent?.home ?? homeOf(names.agent),
    accounts.gate?.home ?? homeOf(names.gate),
    handoffRoot(path.normalize(runnerHome)),
  ];
}
