// --max-parallel is bounded by the same ceiling as the repo config and the
// registry (MAX_PARALLEL_CEILING): a larger value is a usage error naming the
// bound, before anything runs.
import t from 'tap';
import { mkdirSync } from 'node:fs';
import * as path from 'node:path';
import { tempDir } from '../helpers/temp.js';
import { cli } from '../helpers/in-process-cli.js';
import { MAX_PARALLEL_CEILING } from '../../src/repo/config.js';
import { EXIT } from '../../src/errors.js';

t.test('orchestrate --max-parallel above the ceiling is a usage error', async (t) => {
  const workspace = tempDir(t, 'agent-runner-flag-');
  mkdirSync(path.join(workspace, '.git'));
  mkdirSync(path.join(workspace, 'backlog'));
  const state = tempDir(t, 'agent-runner-state-');
  const result = await cli({ PATH: '/usr/bin:/bin', AGENT_RUNNER_STATE: state }, [
    'orchestrate',
    '--workspace',
    workspace,
    '--drain',
    '--max-parallel',
    String(MAX_PARALLEL_CEILING + 1),
  ]);
  t.equal(result.code, EXIT.usage);
  t.match(
    result.err,
    `--max-parallel must be a whole number from 1 to ${MAX_PARALLEL_CEILING}, not "${MAX_PARALLEL_CEILING + 1}"`,
  );
});
