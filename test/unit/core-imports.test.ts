// The core must not reach the OS except through ports: no child_process, fs,
// execa, proper-lockfile or node-cron outside the edge (src/io/ and
// src/main.ts), in src/, the host backend (backends/) and the dashboard
// (tui/) alike. ESLint enforces the same rule with the same list (imported
// from eslint.config.js); this test keeps it true even where lint is not run.
import t from 'tap';
import * as path from 'node:path';
import { importsOf, readSource, REPO_ROOT, sourceFiles } from '../helpers/source-imports.js';

const lint = (await import(path.join(REPO_ROOT, 'eslint.config.js'))) as {
  EDGE_ONLY: readonly string[];
  KNOWN_VIOLATIONS: Readonly<Record<string, readonly string[]>>;
};
const FORBIDDEN = new Set(lint.EDGE_ONLY);
const EDGE = (file: string) => file === 'src/main.ts' || file.startsWith('src/io/');

/** The OS modules a source imports directly. */
function forbiddenImports(source: string): string[] {
  return importsOf(source).filter((name) => FORBIDDEN.has(name));
}

function withoutComments(source: string): string {
  return source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
}

const files = sourceFiles(['src', 'backends', 'tui']);
t.ok(files.length >= 5, `found the core's source files (${files.length})`);
t.ok(files.includes('src/io/real-ports.ts'), 'the edge module exists');
t.ok(
  files.some((file) => file.startsWith('backends/')) && files.some((file) => file.startsWith('tui/')),
  'backends/ and tui/ are checked too',
);

for (const file of files) {
  if (EDGE(file)) continue;
  const text = readSource(file);
  const found = forbiddenImports(text);
  const known = lint.KNOWN_VIOLATIONS[file] ?? [];
  t.same(
    found.filter((name) => !known.includes(name)),
    [],
    `${file} does not import OS modules directly`,
  );
  // Known before issue 9 is merged; remove the entry from KNOWN_VIOLATIONS in eslint.config.js once the import is gone.
  for (const name of known)
    t.notOk(found.includes(name), `${file} does not import ${name}`, {
      todo: `known violation: ${file} imports ${name}`,
    });
  t.notMatch(withoutComments(text), /\bprocess\.(env|argv)\b/, `${file} does not read process.env or process.argv`);
}

t.test('the list holds every OS module the boundary is about', async (t) => {
  for (const name of [
    'node:child_process',
    'child_process',
    'node:fs',
    'fs',
    'node:fs/promises',
    'fs/promises',
    'execa',
    'proper-lockfile',
    'node-cron',
  ])
    t.ok(FORBIDDEN.has(name), `${name} is forbidden outside the edge`);
});

t.test('the checker catches each forbidden module, however it is imported', async (t) => {
  for (const name of FORBIDDEN) {
    t.same(forbiddenImports(`import { x } from '${name}';`), [name], `import from ${name}`);
    t.same(forbiddenImports(`import * as x from "${name}";`), [name], `import * from ${name}`);
    t.same(forbiddenImports(`import type { X } from '${name}';`), [name], `import type from ${name}`);
    t.same(forbiddenImports(`export { x } from '${name}';`), [name], `export from ${name}`);
    t.same(forbiddenImports(`const x = await import('${name}');`), [name], `dynamic import of ${name}`);
  }
});

t.test('the checker passes what is allowed', async (t) => {
  t.same(forbiddenImports("import * as path from 'node:path';"), []);
  t.same(forbiddenImports("import { realFs } from '../io/real-ports.js';"), []);
  t.same(
    forbiddenImports("// import { spawn } from 'node:child_process';\n/* import('node:fs') */"),
    [],
    'comments are not imports',
  );
  t.same(
    forbiddenImports('const text = "import { spawn } from \'node:child_process\'";'),
    [],
    'strings are not imports',
  );
  t.same(forbiddenImports("import { x } from 'fs-extra-not-really';"), [], 'a name that only starts alike');
});
