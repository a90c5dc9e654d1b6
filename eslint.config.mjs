import nx from '@nx/eslint-plugin';
import tseslint from 'typescript-eslint';
import vitest from '@vitest/eslint-plugin';

// libs/testkit (@infersweep/testkit, tags scope:test and type:test) holds what tests and bench share:
// harnesses, stack helpers, fakes and fixtures. Only tests and bench import it.
const testkitBan = {
  group: ['@infersweep/testkit', '@infersweep/testkit/*'],
  message: 'libs/testkit is for tests and bench only: no src/ file imports @infersweep/testkit.',
};

// what a test may import: its own project, the libraries (by package name) and the test kit
const testConstraints = [
  { sourceTag: 'scope:lib', onlyDependOnLibsWithTags: ['scope:lib', 'scope:test'] },
  { sourceTag: 'scope:app', onlyDependOnLibsWithTags: ['scope:lib', 'scope:test'] },
];

// the folders outside any Nx project (repository-level tests, bench) reach a project by its package name only
const noRelativeIntoProjects = (folders, where) => ({
  regex: `^(\\.\\./)+(${folders.join('|')})/`,
  message: `${where} imports another project by its package name (@infersweep/<lib>, the test kit @infersweep/testkit/<file>), never by a relative path.`,
});

export default [
  {
    ignores: [
      '**/node_modules/**',
      '.tools/**',
      '.infersweep/**',
      '.infersweep-*/**',
      'dist/**',
      'test-results/**',
      '.nx/**',
    ],
  },
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    plugins: { '@nx': nx },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@nx/enforce-module-boundaries': [
        'error',
        {
          depConstraints: [
            // libs never import apps; pure libs (core, topology, sweep, stats) import only other pure code;
            // no library or app imports the test kit (scope:test); the test kit imports libraries
            { sourceTag: 'scope:lib', onlyDependOnLibsWithTags: ['scope:lib'] },
            { sourceTag: 'type:pure', onlyDependOnLibsWithTags: ['type:pure'] },
            { sourceTag: 'scope:app', onlyDependOnLibsWithTags: ['scope:lib'] },
            { sourceTag: 'scope:test', onlyDependOnLibsWithTags: ['scope:lib', 'scope:test'] },
          ],
          // a library's tests import the test kit, which imports the library: not a circle of sources
          ignoredCircularDependencies: [['testkit', '*']],
        },
      ],
    },
  },
  {
    // no source file imports the test kit (the pure files' rule below repeats the ban: a later block's
    // options replace an earlier one's)
    files: ['libs/*/src/**/*.ts', 'apps/*/src/**/*.ts'],
    ignores: ['libs/testkit/src/**'],
    rules: { 'no-restricted-imports': ['error', { patterns: [testkitBan] }] },
  },
  {
    // pure libs and workflow code: no I/O modules at all
    files: [
      'libs/core/src/**/*.ts',
      'libs/topology/src/**/*.ts',
      'libs/sweep/src/**/*.ts',
      'libs/stats/src/**/*.ts',
      'libs/orchestrator/src/workflows/**/*.ts',
    ],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: [
                'node:*',
                'fs',
                'fs/*',
                'child_process',
                'net',
                'http',
                'https',
                'os',
                'path',
                'ssh2',
                '@temporalio/*',
                '!@temporalio/workflow',
                '!@temporalio/common',
                'undici',
              ],
              message:
                'libs/core, libs/topology, libs/sweep, libs/stats and workflow code are pure: no I/O imports (do I/O in an adapter or activity).',
            },
            testkitBan,
          ],
        },
      ],
    },
  },
  {
    // Size budgets for source (tests excluded), counted without blank and comment lines: a file
    // holds at most 500 lines and a function at most 80. Growth past them is a split, named after
    // the noun it moves out (docs/conventions.md "Size budgets"). No source file switches a rule off
    // with an inline comment (noInlineConfig), so the budgets hold without exception.
    // (the test kit is test code: tests are excluded)
    files: ['libs/*/src/**/*.ts', 'apps/*/src/**/*.ts'],
    ignores: ['libs/testkit/src/**'],
    linterOptions: { noInlineConfig: true },
    rules: {
      'max-lines': ['error', { max: 500, skipBlankLines: true, skipComments: true }],
      'max-lines-per-function': ['error', { max: 80, skipBlankLines: true, skipComments: true, IIFEs: true }],
    },
  },
  {
    // type-aware rules where they are cheap: a promise nobody awaits or handles is a bug
    // (@typescript-eslint/no-deprecated is not on yet: zod 4 deprecations in the config schemas)
    files: ['libs/*/src/**/*.ts', 'apps/*/src/**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
    },
  },
  {
    // the Nx inference plugin is CommonJS (Nx loads it with require)
    files: ['tools/**/*.js'],
    languageOptions: {
      sourceType: 'commonjs',
      globals: { require: 'readonly', exports: 'writable', module: 'writable' },
    },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    // a test must be able to fail: no focused or disabled tests (a stray .only skips the rest of its
    // file), every test asserts, and no expect hides behind a branch
    files: ['**/*.test.ts'],
    plugins: { vitest },
    rules: {
      'vitest/no-focused-tests': 'error',
      'vitest/no-disabled-tests': 'error',
      'vitest/expect-expect': ['error', { assertFunctionNames: ['expect', 'expect*', 'assert*', 'fc.assert'] }],
      'vitest/no-conditional-expect': 'error',
      'vitest/valid-expect': ['error', { alwaysAwait: true, maxArgs: 2 }],
    },
  },
  {
    // a project's tests import other projects by package name and may import the test kit; a relative
    // import into another project (its src/ or test/) is an error (Nx: noRelativeOrAbsoluteImportsAcrossLibraries)
    files: ['libs/*/test/**/*.ts', 'apps/*/test/**/*.ts'],
    rules: {
      '@nx/enforce-module-boundaries': [
        'error',
        {
          depConstraints: testConstraints,
          ignoredCircularDependencies: [['testkit', '*']],
          // a test may use its own library through the package name, as its users do
          allowCircularSelfDependency: true,
        },
      ],
    },
  },
  {
    files: ['test/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [noRelativeIntoProjects(['libs', 'apps', 'bench'], 'test/')] }],
    },
  },
  {
    files: ['bench/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [noRelativeIntoProjects(['libs', 'apps', 'test'], 'bench/')] }],
    },
  },
];
