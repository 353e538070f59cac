// Reading a tree a repo user controls: links anywhere below the root are
// refused, FIFOs never block, sizes are bounded, absent is undefined.
import t from 'tap';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { listUntrusted, readUntrusted, readUntrustedFiles, statUntrusted } from '../../src/io/untrusted-fs.js';
import { UntrustedPathError } from '../../src/errors.js';

function tree(t: { teardown(fn: () => void): void }) {
  const root = mkdtempSync(path.join(tmpdir(), 'untrusted-'));
  t.teardown(() => rmSync(root, { recursive: true, force: true }));
  const outside = mkdtempSync(path.join(tmpdir(), 'outside-'));
  t.teardown(() => rmSync(outside, { recursive: true, force: true }));
  writeFileSync(path.join(outside, 'secret'), 'TOKEN\n');
  mkdirSync(path.join(root, 'backlog'));
  writeFileSync(path.join(root, 'backlog', 'config.yml'), 'statuses: [To Do]\n');
  return { root, outside };
}

t.test('reads a plain file inside the root; absent is undefined', async (t) => {
  const { root } = tree(t);
  t.equal(await readUntrusted(root, 'backlog/config.yml', 1024), 'statuses: [To Do]\n');
  t.equal(await readUntrusted(root, 'backlog/missing.yml', 1024), undefined);
  t.equal(await readUntrusted(root, 'nothing/here.yml', 1024), undefined);
  t.same(await listUntrusted(root, 'backlog', 10), ['config.yml']);
  t.same(await listUntrusted(root, 'absent', 10), []);
});

t.test('a link as the last component is refused, not followed', async (t) => {
  const { root, outside } = tree(t);
  symlinkSync(path.join(outside, 'secret'), path.join(root, 'link.yml'));
  await t.rejects(readUntrusted(root, 'link.yml', 1024), UntrustedPathError);
  const stat = await statUntrusted(root, 'link.yml');
  t.equal(stat?.isSymlink, true, 'stat reports the link itself');
});

t.test('a link as a directory component is refused, not followed', async (t) => {
  const { root, outside } = tree(t);
  rmSync(path.join(root, 'backlog'), { recursive: true });
  symlinkSync(outside, path.join(root, 'backlog'));
  await t.rejects(readUntrusted(root, 'backlog/secret', 1024), /symbolic link|not a directory/);
  await t.rejects(listUntrusted(root, 'backlog', 10), UntrustedPathError);
  await t.rejects(statUntrusted(root, 'backlog/secret'), UntrustedPathError);
});

t.test('a FIFO is refused at once instead of blocking; size is bounded; .. never leaves', async (t) => {
  const { root } = tree(t);
  execFileSync('mkfifo', [path.join(root, 'fifo')]);
  await t.rejects(readUntrusted(root, 'fifo', 1024), /not a regular file/);
  writeFileSync(path.join(root, 'big'), 'x'.repeat(2048));
  await t.rejects(readUntrusted(root, 'big', 1024), /more than the 1024 allowed/);
  await t.rejects(readUntrusted(root, '../etc/passwd', 1024), /inside its root/);
  await t.rejects(readUntrusted(root, '/etc/passwd', 1024), /inside its root/);
  mkdirSync(path.join(root, 'many'));
  for (let i = 0; i < 5; i++) writeFileSync(path.join(root, 'many', String(i)), '');
  await t.rejects(listUntrusted(root, 'many', 3), /more than the 3 allowed/);
});

t.test('several files in one walk: each as read alone, folders shared, a link anywhere refused', async (t) => {
  const { root, outside } = tree(t);
  mkdirSync(path.join(root, 'backlog', 'tasks'));
  writeFileSync(path.join(root, 'backlog', 'tasks', 'a.md'), 'A\n');
  t.same(
    await readUntrustedFiles(root, ['backlog/config.yml', 'backlog/tasks/a.md', 'backlog/none', 'gone/x'], 1024),
    ['statuses: [To Do]\n', 'A\n', undefined, undefined],
    'in their order; absent is undefined',
  );
  await t.rejects(readUntrustedFiles(root, ['backlog/tasks/a.md', 'backlog'], 1024), /not a regular file/);
  await t.rejects(readUntrustedFiles(root, [''], 1024), /not a regular file/, 'the root itself is no file');
  symlinkSync(outside, path.join(root, 'elsewhere'));
  await t.rejects(
    readUntrustedFiles(root, ['backlog/config.yml', 'elsewhere/secret'], 1024),
    UntrustedPathError,
    'a link as a folder after a shared one',
  );
  writeFileSync(path.join(root, 'backlog', 'big'), 'x'.repeat(2000));
  await t.rejects(readUntrustedFiles(root, ['backlog/big'], 1024), /more than the 1024 allowed/);
  execFileSync('mkfifo', [path.join(root, 'backlog', 'pipe')]);
  await t.rejects(readUntrustedFiles(root, ['backlog/pipe'], 1024), /not a regular file/, 'a FIFO at once');
});
