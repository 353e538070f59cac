// dispatchRun with identities: orchestrate gets --launcher-fd 3 and a socket, root serves its launches for the whole
// run, and what is still running when orchestrate ends is killed before the end sweep. Without identities: neither.
import t, { type Test } from 'tap';
import { dispatchRun, StopRequest } from '../../src/control/dispatch/index.js';
import { forcedLaunchEnvironment } from '../../src/control/repo-user/index.js';
import { accountComment } from '../../src/control/repo-user/account.js';
import type { UserAccount } from '../../src/control/repo-user/index.js';
import { realFs } from '../../src/io/real-ports.js';
import { fakeClock, fakeProcess, type FakeRunningProcess } from '../helpers/fake-ports.js';
import { aRepo } from '../helpers/host-fixtures.js';
import { tempDir } from '../helpers/temp.js';
import type { LaunchEvent } from '../../src/launch/index.js';

const repo = aRepo('web');
const agent: UserAccount = {
  name: 'agent-web-agent',
  uid: 3001,
  gid: 3001,
  home: '/home/agent-web-agent',
  shell: '/bin/sh',
};

async function dispatchWith(t: Test, identities: boolean) {
  const log: string[] = [];
  const events: LaunchEvent[] = [];
  let orchestrate: FakeRunningProcess | undefined;
  const process = fakeProcess({
    run(command) {
      if (command.program === 'getent')
        return {
          exitCode: 0,
          signal: null,
          stdout: `agent-web:x:2001:2001:${accountComment('web')}:/home/agent-web:/bin/bash\n`,
          stderr: '',
        };
      log.push(`run ${command.args.join(' ')}`);
      return { exitCode: 0, signal: null, stdout: '', stderr: '' };
    },
    onStart(child) {
      if (orchestrate) return; // a launched command: it runs until killed
      orchestrate = child;
      const channel = child.channel;
      if (!channel) {
        setImmediate(() => child.exit(0));
        return;
      }
      channel.onLine((line) => {
        const event = JSON.parse(line) as LaunchEvent;
        events.push(event);
        // Once the launched sleep runs, orchestrate ends, leaving it running.
        if (event.event === 'started') setImmediate(() => child.exit(0));
      });
      channel.send(
        JSON.stringify({ op: 'start', id: 1, as: 'agent', program: '/bin/sleep', args: ['600'], env: {}, cwd: '/' }),
      );
    },
    onSignal(child, signal) {
      log.push(`${signal} ${child.command.args.at(-1)}`);
      // It takes a moment to die: the sweep must wait for it.
      setTimeout(() => {
        log.push(`exited ${child.command.args.at(-1)}`);
        child.exit(null, signal);
      }, 30);
    },
  });
  const record = await dispatchRun(
    { process, fs: realFs, clock: fakeClock(), ids: { next: () => 'x' }, control: { processesOfUser: async () => [] } },
    {
      repo,
      state: tempDir(t),
      install: { node: '/usr/bin/node', main: '/opt/ar/dist/src/main.js' },
      orchestrateArgs: ['--drain'],
      trigger: 'manual',
      progress: 'json',
      runId: 'R1',
      ...(identities
        ? {
            identities: new Map([
              ['agent', { account: agent, env: forcedLaunchEnvironment('agent', agent, 700) }] as const,
            ]),
          }
        : {}),
    },
    { onStderrLine: () => undefined },
    new StopRequest(),
  );
  return { record, log, events, process, orchestrate: orchestrate! };
}

t.test(
  'with identities: a socket, --launcher-fd 3, launches served, the leftover killed before the sweep',
  async (t) => {
    const { record, log, events, process, orchestrate } = await dispatchWith(t, true);
    t.equal(record.status === 'running', false, `the run ended (${record.status})`);
    const args = orchestrate.command.args;
    t.equal(args[args.indexOf('--launcher-fd') + 1], '3', 'orchestrate is told its fd');
    t.ok(orchestrate.channel, 'and has a socket');
    t.match(events, [{ id: 1, event: 'started' }]);
    const launched = process.started[1]!;
    t.match(launched.command.args, ['--reuid=3001', '--regid=3001'], 'launched as the agent');
    t.same(launched.signals, ['SIGKILL'], 'killed when the run ended');
    const killedAt = log.indexOf('exited 600');
    const sweepAt = log.findIndex((entry) => / kill -STOP -- -1$/.test(entry));
    t.ok(killedAt >= 0 && sweepAt > killedAt, `killed, and gone, before the sweep: ${log.join(' | ')}`);
  },
);

t.test('control: without identities, no socket and no --launcher-fd', async (t) => {
  const { orchestrate, process } = await dispatchWith(t, false);
  t.notOk(orchestrate.command.args.includes('--launcher-fd'));
  t.notOk(orchestrate.channel);
  t.equal(process.started.length, 1);
});
