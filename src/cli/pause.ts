// agent-runner pause REPO / agent-runner resume REPO: as root, stop a repo's
// watcher from starting anything new (a run in progress finishes), and let it
// go on again, without editing the registry (control/watch/pause.ts).
import type { Command } from 'commander';
import type { CliContext } from './context.js';
import { EXIT } from '../errors.js';
import { findRepo } from '../control/registry/parse.js';
import { loadRegistry, requireRoot } from './root-support.js';
import { pauseRepo, readPause, resumeRepo } from '../control/watch/pause.js';

export function defineFor(mode: 'pause' | 'resume') {
  return (command: Command, context: CliContext, setExit: (code: number) => void): void => {
    command
      .argument('<repo>', 'a repo name from the registry')
      .option('--json', 'print the result as JSON')
      .action(async (repoName: string, options: { json?: boolean }) => {
        requireRoot(context, mode, 'the pause flag lives in the root-owned state dir');
        const { registry, registryFile, state } = await loadRegistry(context);
        const repo = findRepo(registry, repoName, registryFile);
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
      });
  };
}

export const define = defineFor('pause');
