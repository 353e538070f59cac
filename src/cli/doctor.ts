// agent-runner doctor [REPO]: real isolation checks per repo, each with what
// it saw and the fix. Exit 1 when any check fails. --netns and the target
// options aim the probes (tests point them into a namespace).
import { printableLine } from '../printable.js';
import type { Command } from 'commander';
import * as path from 'node:path';
import type { CliContext } from './context.js';
import { EXIT, UsageError } from '../errors.js';
import { findRepo, readRegistry } from '../control/registry/parse.js';
import { resolveTarget } from './target.js';
import { parsePositiveInt } from './options.js';
import { hostLayout } from '../../backends/host/layout.js';
import { inNetns } from '../../backends/host/exec.js';
import { DEFAULT_TARGETS, doctorRepo, type Check } from '../../backends/host/doctor.js';
import { hostChecks } from '../../backends/host/doctor-host.js';
import { doctorIdentities } from '../../backends/host/doctor-identities.js';
import { repoGitHubChecks } from './doctor-github.js';
import { brokerReport, readBrokerFacts, type ModelReport } from '../../backends/host/doctor-broker.js';

interface DoctorOptions {
  json?: boolean;
  netns?: string;
  directAddress?: string;
  directPort?: string;
  allowedUrl?: string;
  privateUrl?: string;
  github?: boolean;
  repo?: string;
}

export function define(command: Command, context: CliContext, setExit: (code: number) => void): void {
  command
    .argument('[repo]', 'the same as --repo NAME')
    .option('--repo <name>', 'one repo (default: every registered repo)')
    .option('--json', 'machine-readable result')
    .option('--netns <name>', 'run nft, Squid and the probes inside this network namespace')
    .option(
      '--direct-address <ip>',
      `address a direct connect must fail to reach (default ${DEFAULT_TARGETS.directAddress})`,
    )
    .option('--direct-port <port>', `its port (default ${DEFAULT_TARGETS.directPort})`)
    .option('--allowed-url <url>', 'a URL on an allowlisted domain (default: the first allowlist entry over https)')
    .option('--private-url <url>', `a private URL the proxy must refuse (default ${DEFAULT_TARGETS.privateUrl})`)
    .option(
      '--github',
      'only the GitHub checks (token, permissions, base protection); they also run for every repo with promote = "pr"',
    )
    .action(async (positional: string | undefined, options: DoctorOptions) => {
      const target = resolveTarget('doctor', { positional, repo: options.repo }, { workspace: false, required: false });
      const name = target.kind === 'repo' ? target.name : undefined;
      if (context.uid !== 0)
        throw new UsageError('doctor acts as each repo user and reads the nft table: run it as root');
      if (options.netns !== undefined && !/^[A-Za-z0-9_.-]+$/.test(options.netns))
        throw new UsageError(`--netns: "${options.netns}" is not a namespace name`);
      const layout = hostLayout(context.env);
      const registry = await readRegistry(context.ports, layout.registryFile);
      const repos = name ? [findRepo(registry, name, layout.registryFile)] : registry.repos;
      if (!repos.length)
        throw new UsageError(
          `${layout.registryFile}: no repos registered; add one with agent-runner provision repo NAME --url URL`,
        );
      const deps = {
        process: context.ports.process,
        fs: context.ports.fs,
        clock: context.ports.clock,
        scheduler: context.ports.scheduler,
        ...(options.netns ? { wrap: inNetns(options.netns) } : {}),
      };
      const targets = {
        directAddress: options.directAddress ?? DEFAULT_TARGETS.directAddress,
        directPort: options.directPort
          ? parsePositiveInt('--direct-port', options.directPort, 65535)
          : DEFAULT_TARGETS.directPort,
        privateUrl: options.privateUrl ?? DEFAULT_TARGETS.privateUrl,
        ...(options.allowedUrl ? { allowedUrl: options.allowedUrl } : {}),
      };
      // identities: the runner, agent and gate accounts and the file boundaries between them, tried as each.
      // model: how its agents reach their model (the broker and its key files, or their own logins).
      const results: { repo: string; model?: ModelReport; checks: Check[]; identities: Check[] }[] = [];
      for (const repo of repos) {
        const isolation = options.github ? [] : await doctorRepo(deps, layout, registry, repo, targets);
        const github = options.github || repo.promote?.mode === 'pr' ? await repoGitHubChecks(context, repo) : [];
        const identities = options.github ? [] : await doctorIdentities(deps, repo);
        const broker = options.github
          ? undefined
          : brokerReport(
              repo,
              await readBrokerFacts({ process: context.ports.process, keys: context.brokerKeys }, repo),
            );
        results.push({
          repo: repo.name,
          ...(broker ? { model: broker.model } : {}),
          checks: [...(broker?.checks ?? []), ...isolation, ...github],
          identities,
        });
      }
      const host = options.github ? [] : await hostChecks(context.ports, layout.registryFile);
      const failed = [
        ...host.filter((check) => !check.ok).map((check) => `host: ${check.name}`),
        ...results.flatMap((result) =>
          [...result.checks, ...result.identities]
            .filter((check) => !check.ok)
            .map((check) => `${result.repo}: ${check.name}`),
        ),
      ];
      if (options.json) {
        context.out(`${JSON.stringify({ ok: failed.length === 0, host, repos: results }, null, 2)}\n`);
      } else {
        context.out('host\n');
        for (const check of host)
          context.out(
            `  ${check.ok ? 'ok  ' : 'FAIL'} ${check.name}: ${check.detail}${check.ok ? '' : `\n       fix: ${check.fix}`}\n`,
          );
        for (const result of results) {
          context.out(`${result.repo}\n`);
          for (const check of [...result.checks, ...result.identities])
            context.out(
              `  ${check.ok ? (check.warn ? 'warn' : 'ok  ') : 'FAIL'} ${check.name}: ${printableLine(check.detail)}${check.ok && !check.warn ? '' : `\n       fix: ${printableLine(check.fix)}`}\n`,
            );
        }
        context.out(
          failed.length
            ? `\n${failed.length} check${failed.length === 1 ? '' : 's'} failed\n`
            : `\nall checks passed (${path.basename(layout.registryFile)}: ${repos.length} repo${repos.length === 1 ? '' : 's'})\n`,
        );
      }
      setExit(failed.length ? EXIT.failed : EXIT.ok);
    });
}
