// agent-runner pause --repo NAME / agent-runner resume --repo NAME (or REPO): as root, stop a repo's
// watcher from starting anything new (a run in progress finishes), and let it
// go on again, without editing the registry (control/watch/pause.ts).
import type { Command } from 'commander';
import type { CliContext } from './context.js';
import { EXIT } from '../errors.js';
import { requireRoot } from './root-support.js';
import { REGISTERED_WORKSPACE_HELP, registeredTarget, resolveTarget, targetFlags } from './target.js';
import { withExamples } from './help.js';
import { pauseRepo, readPause, resumeRepo } from '../control/watch/pause.js';

export function defineFor(mode: 'pause' | 'resume') {
  return (command: Command, context: CliContext, setExit: (code: number) => void): void => {
    withExamples(targetFlags(command.argument('[repo]', 'the same as --repo NAME'), REGISTERED_WORKSPACE_HELP), [
      [`agent-runner ${mode} --repo web`, mode === 'pause' ? 'the watcher starts nothing new' : 'the watcher goes on'],
      [`agent-runner ${mode} --repo web --json`, 'the same, the result as JSON'],
    ])
      .option('--json', 'print the result as JSON')
      .action(
        async (positional: string | undefined, options: { repo?: string; workspace?: string; json?: boolean }) => {
          const target = resolveTarget(mode, { ...options, positional }, { workspace: true, required: true });
          requireRoot(context, mode, 'the pause flag lives in the root-owned state dir');
          const { state, repo } = await registeredTarget(context, mode, target);
          const { fs, clock } = context.ports;
          const before = await readPause(fs, state, repo.name);
          if (mode === 'pause' && !before)
            await pauseRepo(fs, state, repo.name, {
              since: new Date(clock.now()).toISOString(),
              by: context.env.SUDO_USER || context.env.USER || `uid ${context.uid}`,
            });
          if (mode === 'resume') await resumeRepo(fs, state, repo.name);
          const paused = mode === 'pause';
          const changed = paused !== Boolean(before);
          context.out(
            options.json
              ? `${JSON.stringify({ repo: repo.name, paused, changed })}\n`
              : `${repo.name}: ${paused ? (changed ? 'paused: its watcher starts nothing new until "agent-runner resume"' : `already paused since ${before!.since}`) : changed ? 'resumed' : 'was not paused'}\n`,
          );
          setExit(EXIT.ok);
        },
      );
  };
}

export const define = defineFor('pause');
