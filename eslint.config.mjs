import nx from '@nx/eslint-plugin';
import tseslint from 'typescript-eslint';

export default [
  { ignores: ['**/node_modules/**', '.tools/**', '.infersweep/**', 'dist/**', 'test-results/**', '.nx/**'] },
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    plugins: { '@nx': nx },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@nx/enforce-module-boundaries': [
        'error',
        {
          // the CLI embeds a worker (the embedded default): the one app-to-app import allowed
          allow: ['@infersweep/worker'],
          depConstraints: [
            // libs never import apps; the pure topology lib imports only other pure code
            { sourceTag: 'scope:lib', onlyDependOnLibsWithTags: ['scope:lib'] },
            { sourceTag: 'type:pure', onlyDependOnLibsWithTags: ['type:pure'] },
            { sourceTag: 'scope:app', onlyDependOnLibsWithTags: ['scope:lib'] },
          ],
        },
      ],
    },
  },
  {
    // libs/topology is pure: no I/O modules at all
    files: ['libs/topology/src/**/*.ts', 'libs/sweep/src/**/*.ts', 'apps/worker/src/workflows/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['node:*', 'fs', 'fs/*', 'child_process', 'net', 'http', 'https', 'os', 'path', 'ssh2', '@temporalio/*', '!@temporalio/workflow', '!@temporalio/common', 'undici'],
              message: 'libs/topology, libs/sweep and workflow code are pure: no I/O imports (do I/O in an adapter or activity).',
            },
          ],
        },
      ],
    },
  },
  {
    // tests may share the repo-level test helpers (test/stack-env.ts) and drive other projects' adapters
    files: ['**/test/**/*.ts'],
    rules: { '@nx/enforce-module-boundaries': 'off' },
  },
];
