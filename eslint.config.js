// Lint: typescript-eslint's recommended rules, plus the boundary that keeps
// OS effects out of the core. Only the edge (src/io/) and the
// entry point may spawn processes or touch the filesystem directly.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const EDGE_ONLY = ['node:child_process', 'child_process', 'node:fs', 'fs', 'node:fs/promises', 'fs/promises', 'execa', 'proper-lockfile'];

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', '.tap/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-non-null-assertion': 'off',
    },
  },
  {
    files: ['src/**/*.ts'],
    ignores: ['src/io/**', 'src/main.ts'],
    rules: {
      'no-restricted-imports': ['error', { paths: EDGE_ONLY.map((name) => ({ name, message: 'OS effects go through a port; only src/io/ may import this.' })) }],
      'no-restricted-globals': ['error', { name: 'process', message: 'Pass environment, argv and clock in as parameters.' }],
    },
  },
  {
    files: ['bin/*', 'scripts/**/*.mjs'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly' } },
  },
);
