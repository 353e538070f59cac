// The repo's setup command (config "setup"), run in a task's tree before its
// agent, under the same watchdog as a session: the host's task worker and
// the pod worker both run it through here, so it fails the same way in both.
import type { Clock, ProcessPort } from '../ports.js';
import type { RepoConfig } from '../types.js';
import { superviseAgent } from './supervise.js';

/** Why the setup command failed (its last lines), or undefined when it passed or there is none. */
export async function runSetupCommand(
  deps: { readonly process: ProcessPort; readonly clock: Clock },
  config: Pick<RepoConfig, 'setup' | 'agentIdleTimeoutSec' | 'agentWallClockSec'>,
  env: Readonly<Record<string, string>>,
  dir: string,
): Promise<string | undefined> {
  const setup = config.setup;
  if (!setup) return undefined;
  const argv = typeof setup === 'string' ? [`${dir}/${setup}`] : [...setup];
  const lines: string[] = [];
  const run = await superviseAgent(
    deps,
    { program: argv[0]!, args: argv.slice(1), env, cwd: dir },
    {
      idleTimeoutMs: config.agentIdleTimeoutSec * 1000,
      wallClockMs: config.agentWallClockSec * 1000,
      killGraceMs: 5000,
    },
    (_stream, line) => {
      lines.push(line);
      if (lines.length > 20) lines.shift();
    },
  );
  if (run.endedBy === 'exit' && run.exitCode === 0) return undefined;
  return `setup ${argv.join(' ')} failed (${run.endedBy === 'exit' ? `exit ${run.exitCode ?? run.signal}` : run.endedBy}): ${lines.slice(-3).join(' | ')}`;
}
