// dispatchRun: orchestrate gets --launcher-fd 3 and a socket, root serves its launches as the repo's agent for the
// whole run, and what is still running when orchestrate ends is killed before the end sweep.
import t, { type Test } from 'tap';
import * as path from 'node:path';
import { dispatchRun, StopRequest } from '../../src/control/dispatch/index.js';
import type { UserAccount } from '../../src/control/repo-user/index.js';
import { realFs } from '../../src/io/real-ports.js';
import { fakeClock, fakeProcess, type FakeRunningProcess } from '../helpers/fake-ports.js';
import { aRepo, anAccount } from '../helpers/host-fixtures.js';
import { tempDir } from '../helpers/temp.js';
import type { LaunchEvent } from '../../src/launch/index.js';
import { readKubernetesRun } from '../../src/control/dispatch/kubernetes-arg.js';

const repo = aRepo('web');

/** The repo's three accounts as getent answers them, and their hand-off folders as provision leaves them. */
const accounts = {
  'agent-web': anAccount('agent-web', 1500, 'web'),
  'agent-web-agent': anAccount('agent-web-agent', 3001, 'web', 'agent'),
  'agent-web-gate': anAccount('agent-web-gate', 3002, 'web', 'gate'),
} as const;

function passwdLine(account: UserAccount): string {
  return `${account.name}:x:${account.uid}:${account.gid}:${account.comment}:${account.home}:${account.shell}\n`;
}

/** realFs, but the hand-off folders (lstat by the no-follow walk) are as provision makes them for these uids. */
const handoffFs: typeof realFs = {
  ...realFs,
  async statUntrusted(root, relative) {
    const full = path.join(root, relative);
    const folders: Record<string, [number, number, number]> = {
      '/home/agent-web.handoff': [0, 0, 0o755],
      '/home/agent-web.handoff/to-agent': [1500, 3001, 0o2750],
      '/home/agent-web.handoff/from-agent': [3001, 1500, 0o2750],
      '/home/agent-web.handoff/to-gate': [1500, 3002, 0o2750],
    };
    const known = folders[full];
    if (!known) return realFs.statUntrusted(root, relative);
    const [uid, gid, mode] = known;
    return { uid, gid, mode: 0o40000 | mode, size: 0, isDirectory: true, isFile: false, isSymlink: false, mtimeMs: 0 };
  },
};

async function dispatchOnce(t: Test, of = repo) {
  const log: string[] = [];
  const events: LaunchEvent[] = [];
  let orchestrate: FakeRunningProcess | undefined;
  const process = fakeProcess({
    run(command) {
      if (command.program === 'getent') {
        const account = accounts[command.args.at(-1) as keyof typeof accounts];
        return { exitCode: account ? 0 : 2, signal: null, stdout: account ? passwdLine(account) : '', stderr: '' };
      }
      log.push(`run ${command.args.join(' ')}`);
      return { exitCode: 0, signal: null, stdout: '', stderr: '' };
    },
    onStart(child) {
      if (orchestrate) return; // a launched command: it runs until killed
      orchestrate = child;
      const channel = child.channel!;
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
    {
      process,
      fs: handoffFs,
      clock: fakeClock(),
      ids: { next: () => 'x' },
      control: { processesOfUser: async () => [] },
    },
    {
      repo: of,
      state: tempDir(t),
      install: { node: '/usr/bin/node', main: '/opt/ar/dist/src/main.js' },
      orchestrateArgs: ['--drain'],
      trigger: 'manual',
      progress: 'json',
      runId: 'R1',
    },
    { onStderrLine: () => undefined },
    new StopRequest(),
  );
  return { record, log, events, process, orchestrate: orchestrate! };
}

t.test('a socket, --launcher-fd 3, launches served as the agent, the leftover killed before the sweep', async (t) => {
  const { record, log, events, process, orchestrate } = await dispatchOnce(t);
  t.equal(record.status === 'running', false, `the run ended (${record.status})`);
  const args = orchestrate.command.args;
  t.equal(args[args.indexOf('--launcher-fd') + 1], '3', 'orchestrate is told its fd');
  t.ok(orchestrate.channel, 'and has a socket');
  t.match(events, [{ id: 1, event: 'started' }]);
  const launched = process.started[1]!;
  const argv = [launched.command.program, ...launched.command.args];
  t.ok(argv.includes('--reuid=3001') && argv.includes('--regid=3001'), `launched as the agent: ${argv.join(' ')}`);
  t.same(launched.signals, ['SIGKILL'], 'killed when the run ended');
  const killedAt = log.indexOf('exited 600');
  const sweepAt = log.findIndex((entry) => / kill -STOP -- -1$/.test(entry));
  t.ok(killedAt >= 0 && sweepAt > killedAt, `killed, and gone, before the sweep: ${log.join(' | ')}`);
});

const kubernetesSettings = {
  cluster: { kind: 'in-cluster' as const },
  namespace: 'agent-runner-web',
  image: `worker@sha256:${'a'.repeat(64)}`,
  proxy: { ip: '10.0.0.5', port: 3128 },
  gitFetchUrl: 'git://10.0.0.5/web.git',
  gitPushUrl: 'https://10.0.0.5/web.git',
  workspaceBytes: 1 << 30,
  tmpBytes: 1 << 28,
  ttlSec: 3600,
};

t.test('a repo whose registry says backend = "kubernetes": orchestrate is told its cluster settings', async (t) => {
  const { orchestrate } = await dispatchOnce(t, { ...repo, kubernetes: kubernetesSettings });
  const args = orchestrate.command.args;
  const at = args.indexOf('--kubernetes');
  t.ok(at > 0, 'orchestrate gets --kubernetes');
  t.same(readKubernetesRun(args[at + 1]!), { repo: 'web', settings: kubernetesSettings, limits: repo.limits });
});

t.test('a kubernetes repo with a broker is refused before anything runs, saying why', async (t) => {
  const broker = { port: 905, providers: {} } as unknown as NonNullable<typeof repo.broker>;
  await t.rejects(dispatchOnce(t, { ...repo, kubernetes: kubernetesSettings, broker }), {
    message:
      'repo "web": backend = "kubernetes" with a broker: the broker listens on this host\'s loopback, where no pod reaches it (docs/operations.md, "Task workers on Kubernetes"); remove [repos.web.broker] or set repos.web.backend = "host"',
  });
});
