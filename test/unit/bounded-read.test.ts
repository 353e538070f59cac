// The runner's one way of reading a file (realFs.readText): sized from the
// file, read to its end, whatever the file's size, and never a FIFO.
import t from 'tap';
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { open } from 'node:fs/promises';
import { realFs } from '../../src/io/real-ports.js';
import { readToBound } from '../../src/io/read-to-bound.js';
import { UnreadableFileError } from '../../src/errors.js';
import { tempDir } from '../helpers/temp.js';

t.test('reads every byte: empty, small, multi-byte text across buffers, bigger than one buffer', async (t) => {
  const dir = tempDir(t);
  const cases: [string, string][] = [
    ['empty', ''],
    ['small', 'id: TASK-1\n'],
    ['multibyte', 'é€😀'.repeat(200_000)],
    ['big', 'x'.repeat(3 * 1024 * 1024 + 17)],
  ];
  for (const [name, text] of cases) {
    const file = path.join(dir, name);
    writeFileSync(file, text);
    t.equal(await realFs.readText(file), text, name);
  }
  t.equal(await realFs.readTextIfExists(path.join(dir, 'missing')), undefined, 'a missing file');
});

t.test('a file whose size says 0 (/proc) is read to its end', async (t) => {
  const text = await realFs.readText('/proc/self/status');
  t.match(text, /^Name:/);
  t.match(text, /\nPid:\s+\d+\n/, 'more than the first byte');
  t.ok(text.endsWith('\n'));
});

t.test('a FIFO is refused, not waited on', async (t) => {
  const fifo = path.join(tempDir(t), 'fifo');
  execFileSync('mkfifo', [fifo]);
  await t.rejects(realFs.readText(fifo), UnreadableFileError);
});

t.test(
  'readToBound: a file larger than its stat said is read on to its end, and past the bound is "grew"',
  async (t) => {
    const dir = tempDir(t);
    const file = path.join(dir, 'grown');
    writeFileSync(file, 'x'.repeat(100));
    for (const [statSize, maxBytes, expected] of [
      [10, 200, 100],
      [10, 50, 'grew'],
      [100, 100, 100],
      [100, 99, 'grew'],
      [0, 200, 100],
    ] as const) {
      const handle = await open(file, 'r');
      try {
        const bytes = await readToBound(
          async (chunk) => (await handle.read(chunk, 0, chunk.length, null)).bytesRead,
          statSize,
          maxBytes,
        );
        t.equal(bytes === 'grew' ? bytes : bytes.length, expected, `stat said ${statSize}, bound ${maxBytes}`);
      } finally {
        await handle.close();
      }
    }
  },
);
