// What root forwards to the repo user's promote/status (the registry's
// promote mode and API root), and the watcher hook: a GitHub problem is
// logged, never thrown, and push-mode repos are left alone.
import t from 'tap';
import { promoteFlagsFor } from '../../src/cli/promote.js';
import { afterPublishedDrain } from '../../src/control/pull-request/after-drain.js';
import { parseRegistry } from '../../src/control/registry/parse.js';
import { realPorts } from '../../src/io/real-ports.js';

const repoOf = (extra: string) =>
  parseRegistry(
    `[repos.web]\npath = "/srv/web"\nproxy_port = 700\nuser = "agent-nobody-${Math.random().toString(36).slice(2, 8)}"\n${extra}`,
    'r.toml',
    { isValid: () => true },
  ).registry.repos[0]!;

t.test('root forwards the registry promote settings to the repo user', async (t) => {
  t.same(promoteFlagsFor(repoOf(''), {}), []);
  t.same(promoteFlagsFor(repoOf('promote = "pr"\n'), {}), ['--pr']);
  t.same(promoteFlagsFor(repoOf('promote = "pr"\ngithub_api_url = "https://ghe.example.com/api/v3"\n'), {}), [
    '--pr',
    '--github-api',
    'https://ghe.example.com/api/v3',
  ]);
  t.same(promoteFlagsFor(repoOf('promote = "pr"\n'), { push: true }), [], '--push wins');
  t.same(
    promoteFlagsFor(repoOf('promote = "pr"\ngithub_api_url = "https://ghe.example.com/api/v3"\n'), {
      githubApi: 'https://other/api/v3',
    }),
    ['--pr'],
    'an explicit --github-api is not doubled',
  );
  t.same(
    promoteFlagsFor(repoOf('promote = "push"\nauto_merge = true\n'), {}),
    [],
    'auto_merge alone changes nothing for a push repo',
  );
});

t.test('the watcher hook logs a failure and never throws', async (t) => {
  const events: { event: string; fields: Record<string, unknown> }[] = [];
  const deps = {
    ...realPorts(),
    install: { node: process.execPath, main: '/nonexistent/main.js' },
    state: '/nonexistent-state',
    now: () => '2026-11-30T21:00:00Z',
  };
  await afterPublishedDrain(deps, repoOf(''), (event, fields) => events.push({ event, fields }));
  t.same(events, [], 'push mode: nothing to do');
  await afterPublishedDrain(deps, repoOf('promote = "pr"\n'), (event, fields) => events.push({ event, fields }));
  t.equal(events.length, 1);
  t.equal(events[0]!.event, 'pull-request-failed');
  t.match(String(events[0]!.fields.error), /does not exist/);
});
