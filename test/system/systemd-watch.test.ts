// The watch unit under a real systemd (systemd-nspawn): it starts for a test
// repo and drains; kill -9 of the watcher mid-run makes systemd restart it,
// the restarted watcher records the run as interrupted, and the next drain
// lands the task.
import t from 'tap';
import { existsSync, mkdirSync, readFileSync, readdirSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { systemTestMayRun } from '../helpers/system.js';
import { controlFixture, landed } from '../helpers/control-fixture.js';
import { PROJECT_ROOT, waitFor } from '../helpers/drain-fixture.js';
import { bootContainer, unitsFor } from '../helpers/nspawn.js';

t.test('systemd restarts a killed watcher and the run recovers', async (t) => {
  if (!systemTestMayRun(t, ['systemd-nspawn', 'nsenter', 'setpriv', 'useradd', 'git'])) return;
  const fixture = controlFixture(t, [{ id: 'TASK-1', title: 'One', status: 'To Do' }], { schedule: '*/2 * * * * *' });
  writeFileSync(path.join(fixture.probeOut, 'freeze'), '');
  const fixtureRoot = path.dirname(fixture.probeOut);
  const originRoot = path.dirname(fixture.origin);
  const cloneRoot = path.dirname(fixture.clone);
  const container = await bootContainer(t, {
    binds: [...new Set([fixtureRoot, originRoot, cloneRoot])],
    // node_modules may be a link out of the checkout (a worktree sharing one): mount its target too.
    bindsReadOnly: [...new Set([PROJECT_ROOT, realpathSync(path.join(PROJECT_ROOT, 'node_modules'))])].filter(
      (dir) => dir === PROJECT_ROOT || !dir.startsWith(`${PROJECT_ROOT}/`),
    ),
    prepare: (root) => {
      unitsFor(path.join(root, 'etc', 'systemd', 'system'), PROJECT_ROOT, PROJECT_ROOT);
      // The fixture lives under /tmp, which PrivateTmp=yes hides from the unit;
      // real checkouts live elsewhere (/srv/repos), so only the test turns it off.
      // Nothing answers on the fixture's proxy port: runs start without the isolation check.
      mkdirSync(path.join(root, 'etc', 'systemd', 'system', 'agent-runner-watch@.service.d'), { recursive: true });
      writeFileSync(
        path.join(root, 'etc', 'systemd', 'system', 'agent-runner-watch@.service.d', 'test.conf'),
        '[Service]\nPrivateTmp=no\nEnvironment=AGENT_RUNNER_ISOLATION=off\n',
      );
      mkdirSync(path.join(root, 'etc', 'agent-runner'), { recursive: true });
      writeFileSync(path.join(root, 'etc', 'agent-runner', 'registry.toml'), readFileSync(fixture.registry, 'utf8'));
    },
  });
  const unit = `agent-runner-watch@${fixture.name}.service`;
  const state = path.join(container.root, 'var', 'lib', 'agent-runner', 'repos', fixture.name);
  const started = container.exec(['systemctl', 'start', unit]);
  t.equal(started.status, 0, started.stderr);
  const agentPidFile = path.join(fixture.probeOut, 'pid-TASK-1');
  const journal = () => container.exec(['journalctl', '-u', unit, '-o', 'cat', '--no-pager']).stdout;
  await waitFor(() => existsSync(agentPidFile), 60_000, 'the agent to start under the unit').catch((error: Error) => {
    throw new Error(`${error.message}; the unit's journal:\n${journal().split('\n').slice(-15).join('\n')}`);
  });
  const mainPid = Number(container.exec(['systemctl', 'show', '-p', 'MainPID', '--value', unit]).stdout.trim());
  t.ok(mainPid > 1, `the watcher runs as ${mainPid}`);
  await t.test('kill -9: systemd restarts the watcher and the run recovers', async (t) => {
    rmSync(path.join(fixture.probeOut, 'freeze'));
    const killed = container.exec(['kill', '-9', String(mainPid)]);
    t.equal(killed.status, 0, `kill -9 ${mainPid}: ${killed.stderr}`);
    await waitFor(
      () => {
        const now = Number(container.exec(['systemctl', 'show', '-p', 'MainPID', '--value', unit]).stdout.trim());
        return now > 1 && now !== mainPid;
      },
      60_000,
      'systemd to restart the watcher',
    ).catch((error: Error) => {
      throw new Error(
        `${error.message}; status:\n${container.exec(['systemctl', 'status', '--no-pager', unit]).stdout}\n${journal().split('\n').slice(-8).join('\n')}`,
      );
    });
    t.pass('systemd restarted the watcher');
    const landedOnOrigin = () => {
      try {
        return landed(fixture.origin, 'auto/work').includes('TASK-1');
      } catch {
        return false; // auto/work is not on origin yet
      }
    };
    await waitFor(landedOnOrigin, 120_000, 'the next drain to land TASK-1');
    const readRuns = () =>
      readdirSync(path.join(state, 'runs'))
        .filter((name) => name.endsWith('.json'))
        .sort()
        .map(
          (name) =>
            JSON.parse(readFileSync(path.join(state, 'runs', name), 'utf8')) as { status: string; outcome?: string },
        );
    // The run record is written when the drain's process ends, just after its push.
    await waitFor(() => readRuns().some((run) => run.status === 'finished'), 30_000, 'the later run to be recorded');
    const runs = readRuns();
    t.match(runs[0], { status: 'interrupted', outcome: 'interrupted' }, 'the killed run is recorded as interrupted');
    t.ok(
      runs.some((run) => run.status === 'finished' && run.outcome === 'drained'),
      'a later run drained',
    );
    const restarts = container.exec(['systemctl', 'show', '-p', 'NRestarts', '--value', unit]).stdout.trim();
    t.equal(restarts, '1');
    t.match(journal(), /"event":"run-interrupted"/);
  });
  container.exec(['systemctl', 'kill', '-s', 'SIGKILL', unit]);
  container.exec(['systemctl', 'stop', '--no-block', unit]);
});
