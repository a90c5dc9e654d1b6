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
          allow: [],
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
    files: ['libs/topology/src/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['node:*', 'fs', 'fs/*', 'child_process', 'net', 'http', 'https', 'os', 'path', 'ssh2', '@temporalio/*', 'undici'],
              message: 'libs/topology is pure: no I/O imports (read files in an adapter and pass text in).',
            },
          ],
        },
      ],
    },
  },
];
