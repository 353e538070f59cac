// realControl.processesInRepository against real processes: what the recovery of a killed run's gits reads. A
// process is listed when it has one of the files open or works in one of the directories, with its start time, uid,
// process group and the starter identity its environment carries; one elsewhere is not listed, nor this process.
import t, { type Test } from 'tap';
import { spawn } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { realControl } from '../../src/io/proc.js';
import { realProcess } from '../../src/io/real-ports.js';
import { STARTED_BY_VARIABLE } from '../../src/process-identity.js';
import { waitFor } from '../helpers/drain-fixture.js';
import { tempDir } from '../helpers/temp.js';
import { killGroup } from '../helpers/kill.js';
import { running } from '../helpers/user-processes.js';

/** A shell (exec'd into what it runs) in its own group, ended in teardown. */
function started(t: Test, script: string, cwd: string, env: Record<string, string> = {}): number {
  const child = spawn('sh', ['-c', script], {
    cwd,
    env: { PATH: '/usr/bin:/bin', ...env },
    stdio: 'ignore',
    detached: true,
  });
  t.teardown(() => killGroup(child.pid!));
  return child.pid!;
}

t.test('what is listed, and what is read of each', async (t) => {
  const root = tempDir(t, 'agent-runner-repo-processes-');
  const repo = path.join(root, 'repo');
  const elsewhere = path.join(root, 'elsewhere');
  mkdirSync(path.join(repo, '.git'), { recursive: true });
  mkdirSync(elsewhere);
  const lock = path.join(repo, '.git', 'index.lock');
  writeFileSync(lock, '');
  const self = await realControl.self();
  t.equal(self.pid, process.pid);
  t.equal(self.uid, process.getuid!(), 'self() says whose this process is');

  const holder = started(t, `exec 3<"${lock}"; exec sleep 300`, elsewhere);
  const worker = started(t, 'exec sleep 300', path.join(repo, '.git'), { [STARTED_BY_VARIABLE]: '1234:5678' });
  const outsider = started(t, 'exec sleep 300', elsewhere, { [STARTED_BY_VARIABLE]: '1234:5678' });
  await waitFor(
    () => openFiles(holder) > 3 && [holder, worker, outsider].every((pid) => nameOf(pid) === 'sleep'),
    5000,
    'each shell to become its sleep, the holder with the lock open',
  );
  const found = await realControl.processesInRepository([lock], [repo]);
  const byPid = new Map(found.map((entry) => [entry.pid, entry]));
  t.same(byPid.get(holder), {
    pid: holder,
    name: 'sleep',
    startTime: await realProcess.startTimeOf(holder),
    uid: process.getuid!(),
    pgid: holder,
    file: lock,
    inDirs: false,
    startedBy: undefined,
  });
  t.same(byPid.get(worker), {
    pid: worker,
    name: 'sleep',
    startTime: await realProcess.startTimeOf(worker),
    uid: process.getuid!(),
    pgid: worker,
    file: undefined,
    inDirs: true,
    startedBy: '1234:5678',
  });
  t.notOk(byPid.has(outsider), 'a process working elsewhere holding nothing is not listed');
  t.notOk(byPid.has(process.pid), 'nor this process');

  t.notOk(realControl.signalProcess(1, 'SIGTERM'), 'init is never signalled');
  t.ok(realControl.signalProcess(worker, 'SIGKILL'), 'one process, by pid');
  await waitFor(() => !running(worker), 5000, 'the signal to end it');
  t.ok(running(holder), 'and only that one');
});

function nameOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
  } catch {
    return '';
  }
}

function openFiles(pid: number): number {
  try {
    return readdirSync(`/proc/${pid}/fd`).length;
  } catch {
    return 0;
  }
}
