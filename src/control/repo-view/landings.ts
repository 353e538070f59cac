// What a run landed, read by root from the repo's auto/work as data (git as
// an outsider: no hooks, no config programs): the landing commits the
// integrator made on auto/work's first-parent line whose trailer names the
// run. Only the first-parent line counts: an agent can write any trailer
// into commits of its own branch, which a landing then brings in as a
// second parent; it cannot make the integrator's merge commits.
import type { ProcessPort } from '../../ports.js';
import type { TaskId } from '../../types.js';
import { outsiderReadCommand } from '../../git/git.js';
import { LANDING_LOG_FORMAT, parseLandings } from '../../staging/lifecycle.js';
import { STAGING_REF } from '../../staging/names.js';

/** Landing commits looked at: far more than one run lands. */
const MAX_LANDINGS = 1000;

/** The task ids run `runId` landed on auto/work; [] when there is no auto/work or git cannot read it. */
export async function tasksLandedInRun(
  process: Pick<ProcessPort, 'run'>,
  repoPath: string,
  runId: string,
): Promise<TaskId[]> {
  const result = await process.run(
    outsiderReadCommand(repoPath, [
      'log',
      '--first-parent',
      '--merges',
      '--fixed-strings',
      `--grep=Agent-Runner-Run: ${runId}`,
      `--format=${LANDING_LOG_FORMAT}`,
      '-n',
      String(MAX_LANDINGS),
      STAGING_REF,
      '--',
    ]),
  );
  if (result.exitCode !== 0) return [];
  return parseLandings(result.stdout).map((landing) => landing.taskId);
}
