// How every command names what it works on, said once: a registered repo as
// `--repo NAME` (a positional REPO is kept as an alias where commands took one
// before), or a checkout as `--workspace DIR`. `resolveTarget` is pure: the
// flags in, the target or the usage error out; `registeredTarget` then finds
// the registry entry for the commands that only work on a registered repo.
import * as path from 'node:path';
import type { Command } from 'commander';
import type { CliContext } from './context.js';
import type { RegistryRepo } from '../types.js';
import { UsageError } from '../errors.js';
import { findRepo, REPO_NAME_PATTERN } from '../control/registry/parse.js';
import { registeredRepoAt } from '../control/dispatch/lifecycle-target.js';
import { loadRegistry, type RootSetup } from './root-support.js';

/** What a command was pointed at. `none` only where the command has a default (the current directory, all repos). */
export type Target =
  | { readonly kind: 'repo'; readonly name: string }
  | { readonly kind: 'workspace'; readonly dir: string }
  | { readonly kind: 'none' };

export interface TargetFlags {
  /** The positional REPO, where the command kept it as an alias of --repo. */
  readonly positional?: string;
  readonly repo?: string;
  readonly workspace?: string;
}

export interface TargetRules {
  /** The command takes --workspace DIR. */
  readonly workspace: boolean;
  /** Neither flag given is an error (the command has no default target). */
  readonly required: boolean;
}

/** Pure: the one target the flags name, or a UsageError that says which flags to give. */
export function resolveTarget(command: string, flags: TargetFlags, rules: TargetRules): Target {
  if (flags.positional !== undefined && flags.repo !== undefined)
    throw new UsageError(
      `${command}: the repo is named twice ("${flags.positional}" and --repo ${flags.repo}); give --repo NAME only`,
    );
  const name = flags.repo ?? flags.positional;
  if (flags.workspace !== undefined && !rules.workspace)
    throw new UsageError(`${command} takes a registered repo only: give --repo NAME instead of --workspace`);
  if (name !== undefined && flags.workspace !== undefined)
    throw new UsageError(`${command}: give --repo NAME or --workspace DIR, not both`);
  if (name !== undefined) {
    if (!REPO_NAME_PATTERN.test(name))
      throw new UsageError(
        `${command}: "${name}" is not a repo name (a lowercase letter, then lowercase letters, digits and "-", at most 24); give --repo NAME as registry.toml spells it`,
      );
    return { kind: 'repo', name };
  }
  if (flags.workspace !== undefined) {
    if (!flags.workspace) throw new UsageError(`${command}: --workspace is empty; give the path of the git checkout`);
    return { kind: 'workspace', dir: flags.workspace };
  }
  if (rules.required)
    throw new UsageError(
      `${command}: say which repo: --repo NAME (from the registry)${rules.workspace ? ' or --workspace DIR' : ''}`,
    );
  return { kind: 'none' };
}

/** The target as the two options the lifecycle route and the records reader take. */
export function targetOptions(target: Target): { repo?: string; workspace?: string } {
  if (target.kind === 'repo') return { repo: target.name };
  if (target.kind === 'workspace') return { workspace: target.dir };
  return {};
}

/** Pure: the registry entry a target names; a workspace must be a registered repo's path. */
export function repoOfTarget(
  command: string,
  target: Target,
  registry: RootSetup['registry'],
  registryFile: string,
  cwd: string,
): RegistryRepo {
  if (target.kind === 'repo') return findRepo(registry, target.name, registryFile);
  if (target.kind === 'none') throw new UsageError(`${command}: say which repo: --repo NAME or --workspace DIR`);
  const dir = path.resolve(cwd, target.dir);
  const repo = registeredRepoAt(registry, dir);
  if (!repo)
    throw new UsageError(
      `${command}: no repo in ${registryFile} has path ${dir}; pass --repo NAME, or register the checkout (agent-runner provision repo)`,
    );
  return repo;
}

/** For the commands that act on a registered repo only (dispatch, enqueue, pause, resume): registry and repo. */
export async function registeredTarget(
  context: CliContext,
  command: string,
  target: Target,
): Promise<RootSetup & { readonly repo: RegistryRepo }> {
  const setup = await loadRegistry(context);
  return { ...setup, repo: repoOfTarget(command, target, setup.registry, setup.registryFile, context.cwd) };
}

/** The flags every command that takes a target declares, worded the same everywhere. */
export function targetFlags(
  command: Command,
  workspaceHelp = 'the git checkout (default: the current directory)',
): Command {
  return command
    .option('--repo <name>', 'a repo from the registry (as root)')
    .option('--workspace <dir>', workspaceHelp);
}

/** --workspace on a command that needs a registered repo. */
export const REGISTERED_WORKSPACE_HELP = 'the path of a registered repo (the same as --repo with its name)';

/** The target of status, promote, discard, gc and unpark: as the lifecycle route takes it (none: the current dir). */
export function lifecycleChoice(command: string, flags: TargetFlags): { repo?: string; workspace?: string } {
  return targetOptions(resolveTarget(command, flags, { workspace: true, required: false }));
}
