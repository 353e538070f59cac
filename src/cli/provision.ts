// agent-runner provision host | repo NAME: read -> plan (pure) -> apply.
// A dry run prints the plan; a second real run plans nothing ("no change").
// --netns aims every nft and Squid effect into a network namespace (how the
// system tests provision without touching the host's own ruleset).
import type { Command } from 'commander';
import * as path from 'node:path';
import type { CliContext } from './context.js';
import { requireRoot } from './root-support.js';
import { installRoot } from '../paths.js';
import { EXIT, FailedError, UsageError } from '../errors.js';
import { hostLayout } from '../../backends/host/layout.js';
import { inNetns } from '../../backends/host/exec.js';
import { planRemove, planRepo, type ProvisionStep } from '../../backends/host/provision-plan.js';
import {
  applySteps,
  readRemoveState,
  readRepoState,
  type HostDeps,
  type StepReport,
} from '../../backends/host/provision-run.js';
import { systemdIsRunning } from '../control/dispatch/limits.js';
import { planHost, readHostState } from '../../backends/host/provision-host.js';
import { squidInstanceInNetns } from '../../backends/host/squid-config.js';
import { describePortBudget, morePortsFix, type ProxyPortBudget } from '../../backends/host/ports.js';

interface CommonOptions {
  dryRun?: boolean;
  json?: boolean;
  netns?: string;
  hostsFile?: string;
}

function hostDeps(context: CliContext, options: CommonOptions): HostDeps {
  if (options.netns !== undefined && !/^[A-Za-z0-9_.-]+$/.test(options.netns))
    throw new UsageError(`--netns: "${options.netns}" is not a namespace name`);
  return {
    process: context.ports.process,
    fs: context.ports.fs,
    clock: context.ports.clock,
    scheduler: context.ports.scheduler,
    ...(options.netns ? { wrap: inNetns(options.netns), squidInstance: squidInstanceInNetns(options.netns) } : {}),
    ...(options.hostsFile ? { squidOptions: { hostsFile: path.resolve(context.cwd, options.hostsFile) } } : {}),
  };
}

function requireRootUnlessDryRun(context: CliContext, options: CommonOptions): void {
  if (!options.dryRun)
    requireRoot(context, 'provision', 'it changes users, nftables and the proxy (add --dry-run to see the plan)');
}

async function finish(
  context: CliContext,
  deps: HostDeps,
  layout: ReturnType<typeof hostLayout>,
  subject: string,
  steps: readonly ProvisionStep[],
  checklist: readonly string[],
  options: CommonOptions,
  ports?: PortsReport,
): Promise<number> {
  if (!options.dryRun) {
    await applySteps(deps, layout, steps, (step) => {
      if (!options.json) context.err(stepLine(step));
    });
  }
  return report(context, subject, steps, checklist, options, ports);
}

function stepLine(step: StepReport): string {
  return `${step.summary ?? `${step.outcome}: ${step.description}`}${step.detail ? ` (${step.detail})` : ''}\n`;
}

/** The proxy port pool after a repo's provisioning, and the registry it is counted for. */
interface PortsReport {
  readonly budget: ProxyPortBudget;
  readonly registryFile: string;
}

/** When this few proxy ports are left, provision says how to get more before it has to refuse. */
const FEW_PORTS_LEFT = 16;

function portsJson({ budget }: PortsReport) {
  return {
    left: budget.left,
    total: budget.pool.size,
    first: budget.pool.first,
    last: budget.pool.below - 1,
    heldByRepos: budget.byRepos,
    heldByOthers: budget.byOthers,
    unprivilegedPortStart: budget.live,
    proxyPortsBelow: budget.declared,
  };
}

function portsLine({ budget, registryFile }: PortsReport): string {
  const few =
    budget.left <= FEW_PORTS_LEFT
      ? `\n  when none is left, provision refuses new repos; ${morePortsFix(budget, registryFile)}`
      : '';
  return `proxy ports: ${describePortBudget(budget)}${few}\n`;
}

function report(
  context: CliContext,
  subject: string,
  steps: readonly ProvisionStep[],
  checklist: readonly string[],
  options: CommonOptions,
  ports?: PortsReport,
): number {
  const pending = steps.filter((step) => !step.skip);
  const reports: StepReport[] = steps.map((step) => ({
    description: step.description,
    outcome: step.skip || options.dryRun ? 'skipped' : 'done',
    ...(step.skip || options.dryRun ? { detail: step.skip ?? 'dry run' } : {}),
  }));
  if (options.json) {
    context.out(
      `${JSON.stringify({ subject, dryRun: Boolean(options.dryRun), changed: pending.length > 0 && !options.dryRun, steps: reports, plan: steps.map((step) => describeStep(step)), checklist, ...(ports ? { proxyPorts: portsJson(ports) } : {}) }, null, 2)}\n`,
    );
    return EXIT.ok;
  }
  if (!pending.length && !options.dryRun) {
    context.out(
      `${subject}: no change\n${steps.map((step) => `  skipped: ${step.description} (${step.skip})\n`).join('')}`,
    );
  } else if (!steps.length) context.out(`${subject}: no change\n`);
  else if (options.dryRun)
    context.out(
      `${subject}: plan (dry run, nothing done)\n${steps.map((step) => `  - ${describeStep(step)}`).join('\n')}\n`,
    );
  else
    context.out(
      `${subject}: ${pending.length} step${pending.length === 1 ? '' : 's'} done${steps.length > pending.length ? `, ${steps.length - pending.length} skipped` : ''}\n${pending
        .flatMap((step) => ('command' in step && step.done ? [`  ${step.done}\n`] : []))
        .join('')}`,
    );
  if (ports) context.out(portsLine(ports));
  if (checklist.length) context.out(`\nStill to do by hand:\n${checklist.map((item) => `  [ ] ${item}`).join('\n')}\n`);
  return EXIT.ok;
}

function describeStep(step: ProvisionStep): string {
  const how =
    'command' in step
      ? `$ ${[step.command.program, ...step.command.args].join(' ')}`
      : 'write' in step
        ? `write ${step.write.path}`
        : `reload ${step.reload}`;
  return `${step.description}${step.skip ? ` [skipped: ${step.skip}]` : ''}\n      ${how}`;
}

export function define(command: Command, context: CliContext, setExit: (code: number) => void): void {
  command
    .command('host')
    .description('packages, config and state directories, systemd units (idempotent)')
    .option('--dry-run', 'print the plan, change nothing')
    .option('--json', 'machine-readable result')
    .action(async (options: CommonOptions) => {
      requireRootUnlessDryRun(context, options);
      const layout = hostLayout(context.env);
      const deps = hostDeps(context, options);
      const root = installRoot(context.selfBin);
      const systemd = await systemdIsRunning(context.ports.fs);
      const state = await readHostState(deps.process, deps.fs, layout, path.join(root, 'systemd'), systemd);
      const steps = planHost(state, layout, path.join(root, 'provision', 'install-packages.sh'));
      setExit(
        await finish(
          context,
          deps,
          layout,
          'host',
          steps,
          systemd
            ? []
            : [
                'systemd is not PID 1 here: the units were not installed; start the proxy and restore egress.json at boot another way',
              ],
          options,
        ),
      );
    });

  command
    .command('repo')
    .description('one repo: user, clone, registry entry, egress lock and proxy (idempotent)')
    .argument('<name>', 'repo name (lowercase letters, digits, "-")')
    .option('--url <url>', 'clone URL')
    .option('--base <branch>', 'base branch', undefined)
    .option('--allow <domain...>', 'domains its agents may reach through the proxy (replaces the list)')
    .option('--remove', 'undo: user and registry entry removed, clone moved aside (never deleted)')
    .option('--dry-run', 'print the plan, change nothing')
    .option('--json', 'machine-readable result')
    .option('--netns <name>', 'run nft and Squid inside this network namespace (tests, inspection)')
    .option('--hosts-file <file>', 'Squid resolves names from this file (tests)')
    .action(
      async (
        name: string,
        options: CommonOptions & { url?: string; base?: string; allow?: string[]; remove?: boolean },
      ) => {
        requireRootUnlessDryRun(context, options);
        const layout = hostLayout(context.env);
        const deps = hostDeps(context, options);
        const squidOptions = deps.squidOptions ?? {};
        if (options.remove) {
          const state = await readRemoveState(deps, layout, name);
          const stamp = new Date(context.ports.clock.now())
            .toISOString()
            .replace(/[-:]/g, '')
            .replace(/\.\d+Z$/, 'Z');
          const plan = planRemove(name, state, layout, stamp, squidOptions);
          setExit(await finish(context, deps, layout, `repo ${name} (remove)`, plan.steps, plan.checklist, options));
          return;
        }
        const request = { name, url: options.url, base: options.base, allow: options.allow };
        const plan = planRepo(request, await readRepoState(deps, layout, name), layout, squidOptions);
        const portsOf = (planned: typeof plan) =>
          planned.proxyPorts ? { budget: planned.proxyPorts, registryFile: layout.registryFile } : undefined;
        if (options.dryRun) {
          setExit(
            await finish(context, deps, layout, `repo ${name}`, plan.steps, plan.checklist, options, portsOf(plan)),
          );
          return;
        }
        // Some steps can only be planned once earlier ones happened (the
        // board's config is read from the clone the first pass creates), so
        // apply, read again, and go on until nothing is left to do.
        const steps: ProvisionStep[] = [];
        let next = plan;
        for (let pass = 0; pass < 3 && next.steps.length; pass += 1) {
          await applySteps(deps, layout, next.steps, (report) => {
            if (!options.json) context.err(stepLine(report));
          });
          steps.push(...next.steps);
          next = planRepo(request, await readRepoState(deps, layout, name), layout, squidOptions);
        }
        if (next.steps.length)
          throw new FailedError(
            `provision repo ${name} did not converge; still planned: ${next.steps.map((step) => step.description).join('; ')}`,
          );
        setExit(report(context, `repo ${name}`, steps, next.checklist, options, portsOf(next)));
      },
    );
}
