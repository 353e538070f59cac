// Lint: typescript-eslint's recommended rules, the type-aware rules that
// catch real bugs here (a promise nobody awaits or catches, a promise where
// a callback's result is ignored, a switch that misses a case), lines of at
// most 120 (Prettier formats to that width; only strings, template literals
// and regular expressions, which no formatter can break, may run past it),
// and the boundary that keeps
// OS effects out of the core. Only the edge (src/io/) and the entry point
// (src/main.ts) may spawn processes, touch the filesystem, take file locks
// or schedule timers; everything else, the host backend and the dashboard
// included, gets them through ports. test/unit/core-imports.test.ts checks
// the same list (it imports EDGE_ONLY and KNOWN_VIOLATIONS from here)
// without eslint.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import prettier from 'eslint-config-prettier';

export const EDGE_ONLY = [
  'node:child_process',
  'child_process',
  'node:fs',
  'fs',
  'node:fs/promises',
  'fs/promises',
  'execa',
  'proper-lockfile',
  'node-cron',
];
const CORE = ['src/**/*.ts', 'backends/**/*.ts', 'tui/**/*.ts'];
const EDGE = ['src/io/**', 'src/main.ts'];
const MESSAGE = 'OS effects go through a port; only src/io/ (and src/main.ts) may import this.';

/**
 * Imports of EDGE_ONLY modules that are known and still to be moved behind a
 * port; each entry lets its file import just those modules. Remove an entry
 * when its import is gone (core-imports.test.ts lists the same ones as todo).
 */
export const KNOWN_VIOLATIONS = {};

const edgeRules = (allowed = []) => {
  const names = EDGE_ONLY.filter((name) => !allowed.includes(name));
  const escaped = names.map((name) => name.replace(/[/.]/g, '\\$&')).join('|');
  return {
    'no-restricted-imports': ['error', { paths: names.map((name) => ({ name, message: MESSAGE })) }],
    // import('node:fs') is not an import declaration; catch it as syntax.
    'no-restricted-syntax': [
      'error',
      { selector: `ImportExpression[source.value=/^(${escaped})$/]`, message: MESSAGE },
    ],
  };
};

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', '.tap/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  prettier,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-non-null-assertion': 'off',
      'max-len': [
        'error',
        { code: 120, ignoreStrings: true, ignoreTemplateLiterals: true, ignoreRegExpLiterals: true, ignoreUrls: true },
      ],
    },
  },
  {
    files: ['**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      // tap awaits the subtests it queues (t.test returns a PromiseWithSubtest): only those may float.
      '@typescript-eslint/no-floating-promises': [
        'error',
        { allowForKnownSafePromises: [{ from: 'package', name: 'PromiseWithSubtest', package: '@tapjs/core' }] },
      ],
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': ['error', { considerDefaultExhaustiveForUnions: true }],
    },
  },
  {
    files: CORE,
    ignores: EDGE,
    rules: {
      ...edgeRules(),
      'no-restricted-globals': [
        'error',
        { name: 'process', message: 'Pass environment, argv and clock in as parameters.' },
      ],
    },
  },
  ...Object.entries(KNOWN_VIOLATIONS).map(([file, allowed]) => ({ files: [file], rules: edgeRules(allowed) })),
  {
    files: ['bin/*', 'scripts/**/*.mjs'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly' } },
  },
);
