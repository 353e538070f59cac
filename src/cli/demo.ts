// agent-runner demo: the whole loop on an embedded example. The temp dir is
// removed afterwards unless --keep.
import * as path from 'node:path';
import type { Command } from 'commander';
import type { CliContext } from './context.js';
import { EXIT, UsageError } from '../errors.js';
import { runDemo, DEMO_REPO } from '../demo/demo.js';
import { progressPrinter, renderTaskTable } from './drain-output.js';
import { renderStatus } from './status.js';
import { USER_PATH } from '../system-path.js';
import { runGitHubDemo, type GitHubDemoResult } from '../demo/github-demo.js';
import { ledgerReport, renderLedger } from '../control/ledger/report.js';
import { installPaths } from './root-support.js';
import { keptCommands, keptRegistry } from '../demo/kept.js';

export function define(command: Command, context: CliContext, setExit: (code: number) => void): void {
  command
    .option('--keep', 'keep the demo repos (the path is printed)')
    .option('--json', 'print the drain summary, status and promotion as JSON')
    .option(
      '--github',
      'promote through a pull request against a local GitHub API (127.0.0.1): open, wait for CI, merge',
    )
    .action(async (options: { keep?: boolean; json?: boolean; github?: boolean }) => {
      if (options.github && (!context.github || !context.demoGitHub))
        throw new UsageError(
          'demo --github needs the GitHub client and the local demo server, which this agent-runner does not wire',
        );
      if (!context.demoProvider)
        throw new UsageError(
          "demo needs the local fake of the providers' model APIs (src/io/broker/fake-provider.ts), which this agent-runner does not wire",
        );
      const started = context.ports.clock.now();
      const agent = path.join(path.dirname(context.selfBin), 'scripted-agent');
      const result = await runDemo(context.ports, {
        agentCommand: [agent],
        path: context.env.PATH ?? USER_PATH,
        onEvent: progressPrinter(context, 'human'),
        onStep: (text) => context.err(`${text}\n`),
        stop: context.terminate,
        control: context.ports.control,
        locks: context.ports.locks,
        promoteByPush: !options.github,
        startProvider: context.demoProvider,
        install: await installPaths(context),
      });
      let github: GitHubDemoResult | undefined;
      if (options.github) {
        github = await runGitHubDemo(
          context.ports,
          result.git,
          result,
          { connector: context.github!, start: context.demoGitHub! },
          (text) => context.err(`${text}\n`),
        );
      }
      const seconds = ((context.ports.clock.now() - started) / 1000).toFixed(1);
      const mismatches = result.summary.tasks
        .filter((task) => result.expected[task.id] !== task.outcome)
        .map((task) => `${task.id} ${task.outcome} (expected ${result.expected[task.id]})`);
      const untouched = Object.entries(result.expected).filter(
        ([id, expect]) => expect === 'not started' && result.summary.tasks.some((task) => task.id === id),
      );
      // Kept: the commands that look at it, each with the state it needs (kept.ts).
      let kept: ReturnType<typeof keptCommands> | undefined;
      if (options.keep) {
        const registry = path.join(result.root, 'registry.toml');
        await context.ports.fs.writeAtomic(registry, keptRegistry(DEMO_REPO, result.clone), 0o600);
        kept = keptCommands({
          bin: context.selfBin,
          clone: result.clone,
          state: result.state,
          registry,
          task: 'TASK-1',
          repo: DEMO_REPO,
        });
      }
      if (options.json) {
        const { git: _git, ...shown } = result;
        context.out(
          `${JSON.stringify({ ...shown, ...(github ? { github } : {}), ...(kept ? { kept } : {}), seconds: Number(seconds), mismatches }, null, 2)}\n`,
        );
      } else {
        context.out(`\n${renderTaskTable(result.summary.tasks)}`);
        context.out(
          `not started: ${Object.entries(result.expected)
            .filter(([, expect]) => expect === 'not started')
            .map(([id]) => `${id} (needs a human)`)
            .join(', ')}\n\n`,
        );
        context.out(renderStatus({ ...result.status, lastDrain: result.summary }));
        if (result.promotion)
          context.out(`\npromote: ${result.promotion.detail}${result.promotion.pushed ? ', pushed to origin' : ''}\n`);
        if (github) {
          context.out(`\npromote --pr:          ${github.opened.detail}\n`);
          context.out(`promote --pr --merge:  ${github.waited} (exit 75 while CI runs)\n`);
          context.out(`promote --pr --merge:  ${github.merged.detail}\n`);
          context.out(`origin main:           ${github.baseBefore.slice(0, 12)} -> ${github.baseAfter.slice(0, 12)}\n`);
        }
        context.out(
          `\nledger (agent-runner ledger --by task):\n${renderLedger(ledgerReport([DEMO_REPO], result.ledger, 'task', undefined))}`,
        );
        context.out(`demo finished in ${seconds}s${options.keep ? `; repos kept in ${result.root}` : ''}\n`);
        if (kept) {
          context.out('\nto look at what it kept:\n');
          for (const { what, line } of kept) context.out(`  ${what}:\n    ${line}\n`);
        }
      }
      if (!options.keep) await context.ports.fs.remove(result.root);
      if (mismatches.length || untouched.length) {
        context.err(
          `demo: unexpected outcomes: ${[...mismatches, ...untouched.map(([id]) => `${id} was started`)].join('; ')}\n`,
        );
        setExit(EXIT.failed);
        return;
      }
      setExit(EXIT.ok);
    });
}
