// The core must not reach the OS except through ports: no child_process, fs
// or execa outside the edge. ESLint enforces the same rule; this test keeps it
// true even where lint is not run.
import t from 'tap';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const src = path.join(root, 'src');
const EDGE = (file: string) => file === 'main.ts' || file.startsWith('io/');
const FORBIDDEN = /from\s+['"](node:)?(child_process|fs|fs\/promises)['"]|from\s+['"](execa|proper-lockfile)['"]|import\(\s*['"](node:)?(child_process|fs)/;

function walk(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    return statSync(full).isDirectory() ? walk(full) : name.endsWith('.ts') ? [full] : [];
  });
}

function withoutComments(source: string): string {
  return source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
}

const files = walk(src).map((full) => path.relative(src, full));
t.ok(files.length >= 5, `found the core's source files (${files.length})`);
t.ok(files.includes('io/real-ports.ts'), 'the edge module exists');

for (const file of files) {
  if (EDGE(file)) continue;
  const text = withoutComments(readFileSync(path.join(src, file), 'utf8'));
  t.notMatch(text, FORBIDDEN, `${file} does not import OS modules directly`);
  t.notMatch(text, /\bprocess\.(env|argv)\b/, `${file} does not read process.env or process.argv`);
}

t.test('the checker catches a violation', async (t) => {
  t.match("import { spawn } from 'node:child_process';", FORBIDDEN);
  t.match("import * as fs from 'node:fs/promises';", FORBIDDEN);
  t.match("import { execa } from 'execa';", FORBIDDEN);
});
