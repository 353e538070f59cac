// The shape of the sources, checked rather than promised:
// 1. No import runs back up: each module imports only from its own layer or
//    the ones below it, so a reader (and the compiler) can take the tree
//    from the bottom up.
//
//      src/main.ts                                   the entry, the only user of src/io/
//      src/cli/                                      commands, the composition root
//      src/control/ src/drain/ src/staging/          what root and a drain do
//        src/demo/ backends/ tui/                      (counted with control)
//      src/agent/ src/board/ src/git/ src/repo/      the pieces they are built from
//        src/spend/ src/github/                        (budgets; the GitHub port, whose real
//                                                       Octokit client, octokit.ts, only src/main.ts wires)
//        src/scripted-agent/                           (counted with agent)
//        src/broker/                                   (the model-API broker; its sockets are in src/io/broker/)
//      src/*.ts                                      shared: types, errors, ports, paths, ...
//
//    src/io/ is the edge: it may import anything below the CLI, and only
//    src/main.ts may import it.
// 2. A verdict (a file under a verdict/ folder, or named verdict.ts) is pure:
//    nothing it reaches, however indirectly, is a port, the edge or an OS module.
// 3. A folder inside a layer folder (src/control/fleet/, src/drain/integrate/)
//    is seen from beside it only through its entry, index.ts.
// 4. Nothing imports in a circle: not files, not the layer folders, not the
//    folders inside one.
// 5. A folder stays small enough to read: at most 15 files of its own (src/cli/,
//    one file per command, is the exception).
import t from 'tap';
import * as path from 'node:path';
import { REPO_ROOT, sourceFiles } from '../helpers/source-imports.js';
import { circles, groupGraph, importGraph, reachableFrom, routeTo, type ImportGraph } from '../helpers/import-graph.js';

const lint = (await import(path.join(REPO_ROOT, 'eslint.config.js'))) as { EDGE_ONLY: readonly string[] };

interface Layer {
  readonly name: string;
  readonly rank: number;
}

const LAYERS: readonly [RegExp, Layer][] = [
  [/^src\/main\.ts$/, { name: 'main', rank: 5 }],
  [/^src\/cli\//, { name: 'cli', rank: 4 }],
  [/^src\/io\//, { name: 'io', rank: 3.5 }],
  [/^(src\/(control|drain|staging|demo)|backends|tui)\//, { name: 'control', rank: 3 }],
  [/^src\/(agent|board|broker|git|github|handoff|launch|repo|scripted-agent|spend)\//, { name: 'core', rank: 2 }],
  [/^src\/[^/]+\.ts$/, { name: 'shared', rank: 1 }],
];

function layerOf(file: string): Layer | undefined {
  return LAYERS.find(([pattern]) => pattern.test(file))?.[1];
}

/** Why `from` may not import `to`, or undefined when it may. */
function layerViolation(from: string, to: string): string | undefined {
  const source = layerOf(from);
  const target = layerOf(to);
  if (!source) return `${from} is in no layer`;
  if (!target) return `${to} is in no layer`;
  if (target.name === 'io' && source.name !== 'io' && source.name !== 'main')
    return `only src/main.ts may import src/io/ (${from} -> ${to})`;
  // The real GitHub client is an edge too: core code talks to the GitHubApi port.
  if (to === 'src/github/octokit.ts' && source.name !== 'main' && source.name !== 'io')
    return `only src/main.ts may import the real GitHub client (${from} -> ${to})`;
  // So is the real Kubernetes client: drains talk to the KubeJobs port.
  if (to === 'backends/kubernetes/client/real-jobs.ts' && source.name !== 'main')
    return `only src/main.ts may import the real Kubernetes client (${from} -> ${to})`;
  if (target.rank > source.rank) return `${source.name} imports ${target.name} (${from} -> ${to})`;
  return undefined;
}

const isVerdict = (file: string) => /(^|\/)verdict(\/|\.ts$)/.test(file);
/** Packages a verdict may reach: any but the OS edge (node:path is arithmetic on strings). */
const OS_MODULE = (name: string) => lint.EDGE_ONLY.includes(name) || (name.startsWith('node:') && name !== 'node:path');
const isImpure = (file: string) =>
  file === 'src/ports.ts' || file === 'src/main.ts' || file.startsWith('src/io/') || OS_MODULE(file);

/** The route by which a verdict reaches a port, the edge or an OS module, or undefined when it reaches none. */
function impureRoute(graph: ImportGraph, file: string): string[] | undefined {
  const via = reachableFrom(graph, file);
  const impure = [...via.keys()].find(isImpure);
  return impure === undefined ? undefined : routeTo(via, impure);
}

/** The folder inside a layer folder that holds `file` (src/control/fleet for src/control/fleet/cache.ts). */
function innerFolderOf(file: string): string | undefined {
  const parts = file.split('/');
  return parts[0] === 'src' && parts.length >= 4 ? parts.slice(0, 3).join('/') : undefined;
}

/** Why `from` may not import `to` past the entry of `to`'s folder, or undefined when it may. */
function entryViolation(from: string, to: string): string | undefined {
  const folder = innerFolderOf(to);
  if (!folder || from.startsWith(`${folder}/`)) return undefined;
  const parent = path.posix.dirname(folder);
  if (!from.startsWith(`${parent}/`) || to === `${folder}/index.ts`) return undefined;
  return `${from} reaches into ${folder}/ for ${path.posix.basename(to)}; import ${folder}/index.ts (and export it there)`;
}

const files = sourceFiles(['src', 'backends', 'tui']);
const graph = importGraph(files);
const edges = [...graph].flatMap(([from, targets]) =>
  targets.filter((to) => to.endsWith('.ts')).map((to) => ({ from, to })),
);
t.ok(edges.length > 100, `read the imports (${edges.length})`);

t.same(
  edges.flatMap(({ from, to }) => layerViolation(from, to) ?? []),
  [],
  'no import runs from a lower layer back up to a higher one',
);

t.test('every source file is in a layer', async (t) => {
  t.same(
    files.filter((file) => !layerOf(file)),
    [],
  );
});

t.test('the checker tells a violation from an allowed import', async (t) => {
  const cases: readonly [string, string, boolean][] = [
    ['src/drain/orchestrate.ts', 'src/board/read.ts', true],
    ['src/board/read.ts', 'src/drain/orchestrate.ts', false],
    ['src/control/watch/watcher.ts', 'src/drain/types.ts', true],
    ['src/drain/task-flow.ts', 'src/staging/branch.ts', true],
    ['src/agent/run-task.ts', 'src/repo/config.ts', true],
    ['src/types.ts', 'src/agent/secrets.ts', false],
    ['src/paths.ts', 'src/errors.ts', true],
    ['src/control/dispatch/dispatch.ts', 'src/cli/context.ts', false],
    ['tui/dashboard.ts', 'src/cli/context.ts', false],
    ['backends/host/doctor.ts', 'src/control/repo-user/privdrop.ts', true],
    ['src/cli/run.ts', 'tui/view-model.ts', true],
    ['src/cli/watch.ts', 'src/io/lock.ts', false],
    ['src/control/watch/watcher.ts', 'src/io/cron.ts', false],
    ['src/main.ts', 'src/io/real-ports.ts', true],
    ['src/io/cron.ts', 'src/control/watch/watcher.ts', true],
    ['src/io/lock.ts', 'src/io/real-ports.ts', true],
    ['src/io/proc.ts', 'src/cli/context.ts', false],
    ['src/cli/commands.ts', 'src/main.ts', false],
    ['src/somewhere-new/x.ts', 'src/types.ts', false],
    ['src/drain/x.ts', 'test/helpers/fake-ports.ts', false],
    ['src/staging/pull-request.ts', 'src/github/api.ts', true],
    ['src/github/api.ts', 'src/staging/pull-request.ts', false],
    ['src/cli/promote.ts', 'src/github/octokit.ts', false],
    ['src/main.ts', 'src/github/octokit.ts', true],
    ['src/drain/session-guard.ts', 'src/spend/verdict.ts', true],
    ['src/control/ledger/totals.ts', 'src/spend/verdict.ts', true],
    ['src/spend/policy.ts', 'src/drain/session-guard.ts', false],
  ];
  for (const [from, to, allowed] of cases)
    t.equal(
      layerViolation(from, to) === undefined,
      allowed,
      `${from} -> ${to} is ${allowed ? 'allowed' : 'a violation'}`,
    );
});

t.test('verdicts are pure: none reaches a port, the edge or an OS module', async (t) => {
  const verdicts = files.filter(isVerdict);
  t.ok(
    verdicts.length >= 10 && verdicts.includes('src/staging/verdict.ts') && verdicts.includes('src/spend/verdict.ts'),
    `found the verdicts (${verdicts.length})`,
  );
  t.same(
    verdicts.flatMap((file) => impureRoute(graph, file)?.join(' -> ') ?? []),
    [],
  );
});

t.test('the purity checker finds an impure route, however deep', async (t) => {
  const fake: ImportGraph = new Map([
    ['src/drain/verdict/a.ts', ['src/drain/verdict/b.ts', 'yaml', 'node:path']],
    ['src/drain/verdict/b.ts', ['src/board/read.ts']],
    ['src/board/read.ts', ['src/ports.ts']],
    ['src/drain/verdict/c.ts', ['node:fs']],
    ['src/drain/verdict/d.ts', ['src/io/lock.ts']],
    ['src/drain/verdict/e.ts', ['src/types.ts', 'yaml']],
  ]);
  t.same(impureRoute(fake, 'src/drain/verdict/a.ts'), [
    'src/drain/verdict/a.ts',
    'src/drain/verdict/b.ts',
    'src/board/read.ts',
    'src/ports.ts',
  ]);
  t.same(impureRoute(fake, 'src/drain/verdict/c.ts'), ['src/drain/verdict/c.ts', 'node:fs']);
  t.same(impureRoute(fake, 'src/drain/verdict/d.ts'), ['src/drain/verdict/d.ts', 'src/io/lock.ts']);
  t.equal(impureRoute(fake, 'src/drain/verdict/e.ts'), undefined, 'types and a parsing package are pure');
  t.ok(
    isVerdict('src/staging/verdict.ts') &&
      isVerdict('src/drain/verdict/task.ts') &&
      !isVerdict('src/drain/task-flow.ts'),
  );
});

t.test('a folder inside a layer folder is entered from beside it through its index.ts', async (t) => {
  t.same(
    edges.flatMap(({ from, to }) => entryViolation(from, to) ?? []),
    [],
  );
});

t.test('the entry checker tells reaching in from going through the entry', async (t) => {
  const cases: readonly [string, string, boolean][] = [
    ['src/control/fleet/fleet.ts', 'src/control/ledger/totals.ts', false],
    ['src/control/fleet/fleet.ts', 'src/control/ledger/index.ts', true],
    ['src/control/fleet/fleet.ts', 'src/control/fleet/cache.ts', true],
    ['src/drain/task-flow.ts', 'src/drain/integrate/branch.ts', false],
    ['src/drain/task-flow.ts', 'src/drain/integrate/index.ts', true],
    ['src/drain/integrate/batch.ts', 'src/drain/verdict/batch.ts', false],
    ['src/drain/integrate/batch.ts', 'src/drain/types.ts', true],
    ['src/cli/fleet.ts', 'src/control/fleet/fleet.ts', true],
    ['src/control/watch/watcher.ts', 'src/drain/types.ts', true],
  ];
  for (const [from, to, allowed] of cases)
    t.equal(
      entryViolation(from, to) === undefined,
      allowed,
      `${from} -> ${to} is ${allowed ? 'allowed' : 'a violation'}`,
    );
});

t.test('nothing imports in a circle', async (t) => {
  const layerFolderOf = (file: string) =>
    file.split('/').length < 3
      ? undefined
      : file.startsWith('src/')
        ? file.split('/').slice(0, 2).join('/')
        : file.split('/')[0];
  t.same(circles(graph), [], 'files');
  t.same(circles(groupGraph(graph, layerFolderOf)), [], 'layer folders (src/drain, src/control, tui, ...)');
  t.same(
    circles(groupGraph(graph, innerFolderOf)),
    [],
    'the folders inside them (src/control/fleet, src/drain/integrate, ...)',
  );
});

t.test('the circle finder finds circles and only circles', async (t) => {
  t.same(
    circles(
      new Map([
        ['a', ['b']],
        ['b', ['c']],
        ['c', ['a']],
        ['d', ['a']],
      ]),
    ),
    [['a', 'b', 'c']],
  );
  t.same(circles(new Map([['a', ['a']]])), [['a']], 'a node importing itself');
  t.same(
    circles(
      new Map([
        ['a', ['b', 'c']],
        ['b', ['c']],
        ['c', []],
      ]),
    ),
    [],
    'a diamond is no circle',
  );
});

t.test('no folder under src/ but cli/ (one file per command) holds more than 15 source files of its own', async (t) => {
  const own = new Map<string, number>();
  for (const file of files.filter((file) => file.startsWith('src/'))) {
    own.set(path.posix.dirname(file), (own.get(path.posix.dirname(file)) ?? 0) + 1);
  }
  t.ok(own.size >= 20, `counted the folders (${own.size})`);
  t.same(
    [...own]
      .filter(([folder, count]) => folder !== 'src/cli' && count > 15)
      .map(([folder, count]) => `${folder}: ${count}`),
    [],
  );
});
