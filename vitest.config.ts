import { defineConfig } from 'vitest/config';
import { fileURLToPath } from 'node:url';

const alias = {
  '@infersweep/topology': fileURLToPath(new URL('./libs/topology/src/index.ts', import.meta.url)),
  '@infersweep/slurm': fileURLToPath(new URL('./libs/slurm/src/index.ts', import.meta.url)),
  '@infersweep/agentx': fileURLToPath(new URL('./libs/agentx/src/index.ts', import.meta.url)),
  '@infersweep/sweep': fileURLToPath(new URL('./libs/sweep/src/index.ts', import.meta.url)),
  '@infersweep/worker': fileURLToPath(new URL('./apps/worker/src/index.ts', import.meta.url)),
};

// Two kinds of test: unit (`*.test.ts`, fast, no services) and integration
// (`*.int.test.ts`, the real local stack; brought up by test/global-setup.ts).
export default defineConfig({
  resolve: { alias },
  test: {
    projects: [
      {
        resolve: { alias },
        test: {
          name: 'unit',
          include: ['libs/*/test/**/*.test.ts', 'apps/*/test/**/*.test.ts', 'test/**/*.test.ts'],
          exclude: ['**/*.int.test.ts', '**/node_modules/**'],
          testTimeout: 20_000,
        },
      },
      {
        resolve: { alias },
        test: {
          name: 'integration',
          include: ['libs/*/test/**/*.int.test.ts', 'apps/*/test/**/*.int.test.ts', 'test/**/*.int.test.ts'],
          exclude: ['**/node_modules/**'],
          globalSetup: ['test/global-setup.ts'],
          // Temporal's worker and native bridge want real processes, and the suites share one
          // Slurm cluster and one Temporal server: run files one at a time in forks.
          pool: 'forks',
          poolOptions: { forks: { singleFork: true } },
          testTimeout: 240_000,
          hookTimeout: 240_000,
        },
      },
    ],
  },
});
