// How a command names what it works on: one resolver for every command, a table of flags in and the target or the
// usage error out; then the registry entry a target names (a workspace must be a registered repo's path).
import t from 'tap';
import {
  lifecycleChoice,
  repoOfTarget,
  resolveTarget,
  type Target,
  type TargetFlags,
  type TargetRules,
} from '../../src/cli/target.js';
import { UsageError } from '../../src/errors.js';
import { aRepo } from '../helpers/host-fixtures.js';
import type { Registry } from '../../src/types.js';

const LIFECYCLE: TargetRules = { workspace: true, required: false };
const RECORDS: TargetRules = { workspace: true, required: true };
const REPO_ONLY: TargetRules = { workspace: false, required: false };

const cases: readonly [string, string, TargetFlags, TargetRules, Target | RegExp][] = [
  ['--repo', 'status', { repo: 'web' }, LIFECYCLE, { kind: 'repo', name: 'web' }],
  ['a positional REPO is --repo', 'runs', { positional: 'web' }, RECORDS, { kind: 'repo', name: 'web' }],
  ['--workspace', 'logs', { workspace: '/srv/web' }, RECORDS, { kind: 'workspace', dir: '/srv/web' }],
  ['a relative --workspace is kept as given', 'next', { workspace: '.' }, LIFECYCLE, { kind: 'workspace', dir: '.' }],
  ['nothing, where there is a default', 'status', {}, LIFECYCLE, { kind: 'none' }],
  [
    'nothing, where there is none',
    'runs',
    {},
    RECORDS,
    /^runs: say which repo: --repo NAME \(from the registry\) or --workspace DIR$/,
  ],
  [
    'nothing, on a repo-only command that needs one',
    'watch',
    {},
    { workspace: false, required: true },
    /^watch: say which repo: --repo NAME \(from the registry\)$/,
  ],
  [
    'both flags',
    'gc',
    { repo: 'web', workspace: '.' },
    LIFECYCLE,
    /^gc: give --repo NAME or --workspace DIR, not both$/,
  ],
  [
    'a positional and --workspace',
    'dispatch',
    { positional: 'web', workspace: '.' },
    RECORDS,
    /^dispatch: give --repo NAME or --workspace DIR, not both$/,
  ],
  [
    'the repo twice',
    'enqueue',
    { positional: 'web', repo: 'web' },
    RECORDS,
    /^enqueue: the repo is named twice \("web" and --repo web\); give --repo NAME only$/,
  ],
  ['a name that is no repo name', 'pause', { repo: 'Web/../x' }, RECORDS, /^pause: "Web\/\.\.\/x" is not a repo name/],
  ['a positional that is no repo name', 'ledger', { positional: '-rf' }, LIFECYCLE, /"-rf" is not a repo name/],
  [
    '--workspace where only a repo goes',
    'doctor',
    { workspace: '.' },
    REPO_ONLY,
    /^doctor takes a registered repo only: give --repo NAME instead of --workspace$/,
  ],
  ['an empty --workspace', 'next', { workspace: '' }, LIFECYCLE, /^next: --workspace is empty/],
];

for (const [name, command, flags, rules, expected] of cases) {
  t.test(name, async (t) => {
    if (expected instanceof RegExp) {
      t.throws(() => resolveTarget(command, flags, rules), UsageError);
      t.throws(() => resolveTarget(command, flags, rules), { message: expected });
    } else t.same(resolveTarget(command, flags, rules), expected);
  });
}

t.test('the lifecycle commands get the two options the route takes', async (t) => {
  t.same(lifecycleChoice('status', { repo: 'web' }), { repo: 'web' });
  t.same(lifecycleChoice('status', { workspace: '/w' }), { workspace: '/w' });
  t.same(lifecycleChoice('status', {}), {});
});

t.test('the registry entry of a target', async (t) => {
  const web = aRepo('web', { path: '/srv/repos/web' });
  const registry = { repos: [web] } as unknown as Registry;
  const file = '/etc/agent-runner/registry.toml';
  t.equal(repoOfTarget('dispatch', { kind: 'repo', name: 'web' }, registry, file, '/'), web, 'by name');
  t.equal(repoOfTarget('dispatch', { kind: 'workspace', dir: 'web' }, registry, file, '/srv/repos'), web, 'by path');
  t.equal(repoOfTarget('dispatch', { kind: 'workspace', dir: '/srv/repos/web/' }, registry, file, '/'), web);
  t.throws(() => repoOfTarget('dispatch', { kind: 'repo', name: 'api' }, registry, file, '/'), {
    message: /registry\.toml: repos\.api: no such repo/,
  });
  t.throws(() => repoOfTarget('pause', { kind: 'workspace', dir: '/srv/other' }, registry, file, '/'), {
    message:
      'pause: no repo in /etc/agent-runner/registry.toml has path /srv/other; pass --repo NAME, or register the checkout (agent-runner provision repo)',
  });
  t.throws(() => repoOfTarget('pause', { kind: 'none' }, registry, file, '/'), { message: /say which repo/ });
});
