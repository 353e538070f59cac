// fleet reads a repo user's agent records as hostile input: no links
// followed, bounded, validated; it only ever lists task ids.
import t from 'tap';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { realFs } from '../../src/io/real-ports.js';
import { runningAgentTasks } from '../../src/control/fleet/agents.js';
import { repoUserStateDir, workspaceStateDir } from '../../src/paths.js';
import { tempDir } from '../helpers/temp.js';

t.test('records are listed; links, junk and oversized files are not', async (t) => {
  const home = tempDir(t, 'agent-runner-fleet-home-');
  const workspace = '/srv/repos/web';
  const agents = path.join(workspaceStateDir(repoUserStateDir(home), workspace), 'agents');
  mkdirSync(agents, { recursive: true });
  writeFileSync(path.join(agents, 'TASK-1.json'), '{"pid":4242,"startTime":"99","taskId":"TASK-1"}\n');
  writeFileSync(path.join(agents, 'TASK-2.json'), 'not json');
  writeFileSync(path.join(agents, 'TASK-3.json'), `{"pid":4243,"taskId":"TASK-3","pad":"${'x'.repeat(8192)}"}`);
  const secret = path.join(tempDir(t, 'agent-runner-fleet-secret-'), 'root-only.json');
  writeFileSync(secret, '{"pid":4244,"taskId":"SECRET"}');
  symlinkSync(secret, path.join(agents, 'TASK-4.json'));
  t.same(await runningAgentTasks(realFs, home, workspace), ['TASK-1']);
});

t.test('an agents dir that is a link is refused, not followed', async (t) => {
  const home = tempDir(t, 'agent-runner-fleet-home-');
  const workspace = '/srv/repos/web';
  const wsState = workspaceStateDir(repoUserStateDir(home), workspace);
  mkdirSync(wsState, { recursive: true });
  const elsewhere = tempDir(t, 'agent-runner-fleet-elsewhere-');
  writeFileSync(path.join(elsewhere, 'TASK-9.json'), '{"pid":4245,"taskId":"TASK-9"}');
  symlinkSync(elsewhere, path.join(wsState, 'agents'));
  await t.rejects(runningAgentTasks(realFs, home, workspace), { name: 'UntrustedPathError' });
});

t.test('no records: nothing running', async (t) => {
  t.same(await runningAgentTasks(realFs, tempDir(t, 'agent-runner-fleet-home-'), '/srv/x'), []);
});
