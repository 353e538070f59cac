// The watcher's registry: parsed once per change of its text, a broken one
// too (it used to be parsed again on every tick while it stayed broken).
import t from 'tap';
import { CachedRegistry } from '../../src/control/registry/cached.js';
import { cronScheduler } from '../../src/io/cron.js';
import { UsageError } from '../../src/errors.js';

function fakeFile(initial: string | undefined) {
  const file = { text: initial, reads: 0 };
  return { file, fs: { readTextIfExists: async () => (file.reads++, file.text) } };
}

t.test('a broken registry is parsed once while it stays broken, and again once fixed', async (t) => {
  const { file, fs } = fakeFile('[repos.web]\npath = "/srv/web"\nproxy_port = 700\nbogus = 1\n');
  const cache = new CachedRegistry({ fs, scheduler: cronScheduler }, '/etc/agent-runner/registry.toml');
  for (let tick = 0; tick < 5; tick++) await t.rejects(cache.read(), UsageError, `tick ${tick}: the same error`);
  t.equal(cache.parses, 1, 'five ticks, one parse');
  t.equal(file.reads, 5, 'the text is still read each tick, to notice a change');
  file.text = '[repos.web]\npath = "/srv/web"\nproxy_port = 700\n';
  t.same(
    (await cache.read()).repos.map((repo) => repo.name),
    ['web'],
  );
  await cache.read();
  t.equal(cache.parses, 2, 'fixed: parsed once more, then cached');
  file.text = undefined;
  await t.rejects(cache.read(), /the registry does not exist/);
});
