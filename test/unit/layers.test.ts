// No import runs back up: each module imports only from its own layer or
// the ones below it, so a reader (and the compiler) can take the tree from
// the bottom up.
//
//   src/main.ts                                   the entry, the only user of src/io/
//   src/cli/                                      commands, the composition root
//   src/control/ src/drain/ src/staging/          what root and a drain do
//     src/demo/ backends/ tui/                      (counted with control)
//   src/agent/ src/board/ src/git/ src/repo/      the pieces they are built from
//     src/github/                                   (the GitHub port; its real Octokit client, octokit.ts, is wired by src/main.ts only)
//     src/scripted-agent/                           (counted with agent)
//   src/*.ts                                      shared: types, errors, ports, paths, ...
//
// src/io/ is the edge: it may import anything below the CLI, and only
// src/main.ts may import it.
import t from 'tap';
import { importsOf, readSource, resolveImport, sourceFiles } from '../helpers/source-imports.js';

interface Layer {
  readonly name: string;
  readonly rank: number;
}

const LAYERS: readonly [RegExp, Layer][] = [
  [/^src\/main\.ts$/, { name: 'main', rank: 5 }],
  [/^src\/cli\//, { name: 'cli', rank: 4 }],
  [/^src\/io\//, { name: 'io', rank: 3.5 }],
  [/^(src\/(control|drain|staging|demo)|backends|tui)\//, { name: 'control', rank: 3 }],
  [/^src\/(agent|board|git|github|repo|scripted-agent)\//, { name: 'core', rank: 2 }],
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
  if (target.name === 'io' && source.name !== 'io' && source.name !== 'main') return `only src/main.ts may import src/io/ (${from} -> ${to})`;
  // The real GitHub client is an edge too: core code talks to the GitHubApi port.
  if (to === 'src/github/octokit.ts' && source.name !== 'main' && source.name !== 'io') return `only src/main.ts may import the real GitHub client (${from} -> ${to})`;
  if (target.rank > source.rank) return `${source.name} imports ${target.name} (${from} -> ${to})`;
  return undefined;
}

const files = sourceFiles(['src', 'backends', 'tui']);
const edges = files.flatMap((from) =>
  importsOf(readSource(from)).flatMap((specifier) => {
    const to = resolveImport(from, specifier);
    return to ? [{ from, to }] : [];
  }),
);
t.ok(edges.length > 100, `read the imports (${edges.length})`);

t.same(
  edges.flatMap(({ from, to }) => layerViolation(from, to) ?? []),
  [],
  'no import runs from a lower layer back up to a higher one',
);

t.test('every source file is in a layer', async (t) => {
  t.same(files.filter((file) => !layerOf(file)), []);
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
  ];
  for (const [from, to, allowed] of cases) t.equal(layerViolation(from, to) === undefined, allowed, `${from} -> ${to} is ${allowed ? 'allowed' : 'a violation'}`);
});
