// The watcher's side of the push webhook: a wake runs the poll's own check
// (ls-remote as the repo user, a fetch only when origin moved) at once,
// whatever remote_poll_sec says; a wake during a check or a run is kept and
// checked once after it. Time is the fake clock's: no interval ever fires here.
import t from 'tap';
import { RemotePoller } from '../../src/control/watch/remote.js';
import { realPorts } from '../../src/io/real-ports.js';
import { aRepo } from '../helpers/host-fixtures.js';
import { fakeClock, fakeProcess } from '../helpers/fake-ports.js';
import type { Command, RegistryRepo } from '../../src/types.js';

const A = 'a'.repeat(40);
const B = 'b'.repeat(40);

function poller(options: { pollSec: number; origin: () => string }) {
  let local = A;
  let busy = false;
  const moved: string[] = [];
  const events: string[] = [];
  let lsRemoteGate: Promise<void> | undefined;
  const process = fakeProcess({
    run: (command: Command) => {
      const ok = (stdout: string) => ({ exitCode: 0, signal: null, stdout, stderr: '' });
      if (command.program === 'getent')
        return ok('agent-web:x:1201:1201:agent-runner repo web:/home/agent-web:/usr/sbin/nologin\n');
      if (command.args.includes('ls-remote')) return ok(`${options.origin()}\trefs/heads/main\n`);
      if (command.args.includes('rev-parse')) return ok(`${local}\n`);
      if (command.args.includes('fetch')) local = options.origin();
      return ok('');
    },
  });
  const repo: RegistryRepo = aRepo('web', { remotePollSec: options.pollSec, runnerProxyPort: 713 });
  const clock = fakeClock();
  const remote = new RemotePoller({
    clock,
    ports: { process, fs: realPorts().fs },
    repo: async () => {
      await lsRemoteGate;
      return repo;
    },
    busy: () => busy,
    onMoved: async (check) => void moved.push(check.to),
    log: (event) => void events.push(event),
    redact: async (_repo, message) => message,
  });
  const lsRemotes = () => process.ran.filter((command) => command.args.includes('ls-remote')).length;
  return {
    remote,
    clock,
    moved,
    events,
    lsRemotes,
    setBusy: (value: boolean) => (busy = value),
    hold: () => {
      let release!: () => void;
      lsRemoteGate = new Promise<void>((resolve) => (release = resolve));
      return () => {
        lsRemoteGate = undefined;
        release();
      };
    },
  };
}

t.test('a wake checks origin at once, with the poll an hour away, and fetches only when it moved', async (t) => {
  let origin = A;
  const p = poller({ pollSec: 3600, origin: () => origin });
  p.remote.start(3600);
  await p.remote.wake();
  t.equal(p.lsRemotes(), 1, 'one ls-remote');
  t.same(p.moved, [], 'origin had not moved: nothing to do');
  origin = B;
  await p.remote.wake();
  t.equal(p.lsRemotes(), 2);
  t.same(p.moved, [B], 'moved: fetched and the watcher told');
  p.remote.stop();
});

t.test('with the poll off (remote_poll_sec = 0) a wake still checks', async (t) => {
  const p = poller({ pollSec: 0, origin: () => B });
  await p.remote.poll();
  t.equal(p.lsRemotes(), 0, 'the poll itself does nothing');
  await p.remote.wake();
  t.same(p.moved, [B]);
  p.remote.stop();
});

t.test('a wake during a run waits for the run; one during a check runs once after it', async (t) => {
  let origin = A;
  const p = poller({ pollSec: 3600, origin: () => origin });
  p.setBusy(true);
  origin = B;
  await p.remote.wake();
  t.equal(p.lsRemotes(), 0, 'nothing while a run is on (it fetched by itself)');
  p.setBusy(false);
  await p.remote.afterRun();
  t.equal(p.lsRemotes(), 1, 'checked when the run ended');
  t.same(p.moved, [B]);
  await p.remote.afterRun();
  t.equal(p.lsRemotes(), 1, 'and only once');

  const release = p.hold();
  const first = p.remote.wake();
  const second = p.remote.wake();
  const third = p.remote.wake();
  release();
  await Promise.all([first, second, third]);
  t.equal(p.lsRemotes(), 3, 'three wakes during one check: that check and one more');
  p.remote.stop();
});

t.test('after stop, a wake does nothing', async (t) => {
  const p = poller({ pollSec: 15, origin: () => B });
  p.remote.stop();
  await p.remote.wake();
  t.equal(p.lsRemotes(), 0);
  t.equal(p.clock.pendingTimers(), 0);
});
