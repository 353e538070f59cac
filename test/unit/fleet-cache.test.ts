// The fleet cache's pure parts: ref files read as data, the cache file
// checked entry by entry, and when an entry may answer.
import t from 'tap';
import { looseRefOid, parsePackedRefs } from '../../src/git/ref-files.js';
import { parseFleetCache } from '../../src/control/fleet/cache.js';
import {
  gitViewMatches as entryMatches,
  validGitView as validEntry,
  type GitView as FleetCacheEntry,
  type RefCommits,
} from '../../src/control/repo-view/git-view.js';

const A = 'a'.repeat(40);
const B = 'b'.repeat(40);
const C = 'c'.repeat(40);

t.test('packed-refs as git writes it, and what is refused', async (t) => {
  const cases: [string, string, Record<string, string> | undefined][] = [
    ['empty file', '', {}],
    [
      'header, refs and a peeled tag',
      `# pack-refs with: peeled fully-peeled sorted \n${A} refs/heads/main\n${B} refs/tags/v1\n^${C}\n${C} refs/heads/auto/work\n`,
      { 'refs/heads/main': A, 'refs/tags/v1': B, 'refs/heads/auto/work': C },
    ],
    ['sha256 ids', `${'d'.repeat(64)} refs/heads/main\n`, { 'refs/heads/main': 'd'.repeat(64) }],
    ['a line that is no ref', `${A} refs/heads/main\ngarbage\n`, undefined],
    ['a short id', `abc refs/heads/main\n`, undefined],
    ['an upper-case id', `${A.toUpperCase()} refs/heads/main\n`, undefined],
  ];
  for (const [name, text, expected] of cases) {
    const parsed = parsePackedRefs(text);
    t.same(parsed ? Object.fromEntries(parsed) : undefined, expected, name);
  }
});

t.test('a loose ref file: an id, or nothing this reads', async (t) => {
  const cases: [string, string | undefined][] = [
    [`${A}\n`, A],
    [A, A],
    ['ref: refs/heads/main\n', undefined],
    [`${A}\n\n`, undefined],
    [`${A} extra\n`, undefined],
    ['', undefined],
  ];
  for (const [text, expected] of cases) t.equal(looseRefOid(text), expected, JSON.stringify(text));
});

const entry: FleetCacheEntry = {
  path: '/srv/web',
  baseBranch: 'main',
  commits: [A, null, B],
  board: { refs: ['auto/work'], ready: ['TASK-1'], parked: 0, unreadable: 1, total: 3 },
  staging: { exists: true, ahead: 1, behind: 0 },
};

t.test('an entry is taken only with every field as written', async (t) => {
  t.same(validEntry(JSON.parse(JSON.stringify(entry))), entry, 'round trip');
  const broken: [string, unknown][] = [
    ['null', null],
    ['a string', 'x'],
    ['no path', { ...entry, path: undefined }],
    ['two commits', { ...entry, commits: [A, B] }],
    ['a commit that is no id', { ...entry, commits: [A, 'HEAD', B] }],
    ['a negative count', { ...entry, board: { ...entry.board, parked: -1 } }],
    ['a fractional count', { ...entry, staging: { ...entry.staging, ahead: 1.5 } }],
    ['ready ids that are not strings', { ...entry, board: { ...entry.board, ready: [1] } }],
    ['no staging', { ...entry, staging: null }],
    ['exists not a boolean', { ...entry, staging: { ...entry.staging, exists: 'yes' } }],
  ];
  for (const [name, value] of broken) t.equal(validEntry(value), undefined, name);
});

t.test('the cache file: a malformed file is an empty cache, a malformed entry is dropped', async (t) => {
  const file = (repos: unknown, version = 1) => JSON.stringify({ version, repos });
  t.same([...parseFleetCache(file({ web: entry, bad: { path: 1 } })).keys()], ['web']);
  for (const [name, text] of [
    ['absent', undefined],
    ['not JSON', '{'],
    ['JSON null', 'null'],
    ['another version', file({ web: entry }, 2)],
    ['repos an array', file([entry])],
  ] as const)
    t.equal(parseFleetCache(text).size, 0, name);
});

t.test(
  'an entry answers only for the same path, base and the three commits, and never when no ref exists',
  async (t) => {
    const at = (commits: RefCommits, path = '/srv/web', base = 'main') => entryMatches(entry, path, base, commits);
    t.ok(at([A, null, B]));
    t.notOk(at([A, null, C]), 'the base moved');
    t.notOk(at([C, null, B]), 'auto/work moved');
    t.notOk(at([A, B, B]), 'origin/<base> appeared');
    t.notOk(at([A, null, B], '/srv/other'), 'another path');
    t.notOk(at([A, null, B], '/srv/web', 'trunk'), 'another base');
    t.notOk(entryMatches(undefined, '/srv/web', 'main', [A, null, B]), 'no entry');
    const none: FleetCacheEntry = { ...entry, commits: [null, null, null] };
    t.notOk(entryMatches(none, '/srv/web', 'main', [null, null, null]), 'no ref at all: git says what is wrong');
  },
);
