// The import graph of the sources, read the way TypeScript reads it (static
// and dynamic imports, export-from, type imports; never comments or
// strings), for the tests that hold the import boundary and the layering.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

/** The repository root (tests run from dist/test/...). */
export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

/** The .ts files under each directory, as repo-relative paths with forward slashes. */
export function sourceFiles(dirs: readonly string[]): string[] {
  const walk = (dir: string): string[] =>
    readdirSync(path.join(REPO_ROOT, dir)).flatMap((name) => {
      const rel = `${dir}/${name}`;
      return statSync(path.join(REPO_ROOT, rel)).isDirectory() ? walk(rel) : name.endsWith('.ts') ? [rel] : [];
    });
  return dirs.flatMap(walk).sort();
}

export function readSource(file: string): string {
  return readFileSync(path.join(REPO_ROOT, file), 'utf8');
}

/** Every module specifier the source imports or re-exports. */
export function importsOf(source: string): string[] {
  return ts.preProcessFile(source, true, true).importedFiles.map((entry) => entry.fileName);
}

/** The repo-relative .ts file a relative specifier names; undefined for a package. */
export function resolveImport(from: string, specifier: string): string | undefined {
  if (!specifier.startsWith('.')) return undefined;
  return path.posix.normalize(path.posix.join(path.posix.dirname(from), specifier)).replace(/\.js$/, '.ts');
}
