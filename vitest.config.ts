import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';
import { workspaceAliases } from './libs/orchestrator/src/bundle';
import LaneSequencer from './test/lane-sequencer';

// the workspace's package aliases, from tsconfig.base.json `paths` (the one list)
const alias = workspaceAliases();

// Four kinds of test: unit (`*.test.ts`, fast, no services), integration (`*.int.test.ts`, the
// real local stack; brought up by test/global-setup.ts), production (`*.prod.test.ts`, the
// production-shaped Temporal of scripts/stack-production.sh) and nightly (`*.nightly.test.ts`, the
// real local stack at production timescales: `npm run test:nightly`, not per commit).
// test/gate.ts (`npm test`) runs the per-commit projects in the lanes of test/lanes.ts and gates them.
/**
 * The production-timescale proofs (a queue wait past the old 5-minute window, the full
 * `--orientation all` under the production-like profile, every real-vLLM shape at every point):
 * the integration stack and rules, daily instead of per commit.
 */
const nightly = {
  resolve: { alias },
  test: {
    name: 'nightly',
    include: ['libs/*/test/**/*.nightly.test.ts', 'apps/*/test/**/*.nightly.test.ts', 'test/**/*.nightly.test.ts'],
    exclude: ['**/node_modules/**'],
    globalSetup: ['test/global-setup.ts'],
    pool: 'forks' as const,
    poolOptions: { forks: { singleFork: true } },
    testTimeout: 1_800_000,
    hookTimeout: 240_000,
  },
};

export default defineConfig({
  resolve: { alias },
  test: {
    // a lane's files in the order of test/lanes.ts (./test/lane-sequencer.ts)
    sequence: { sequencer: LaneSequencer },
    // unit files two at a time at least: vitest's default on a 2-core host is one, which idles while a
    // file waits on a child (the spawned CLI, the Temporal dev server, a retry's backoff timer); the
    // other projects run one file at a time (singleFork)
    maxWorkers: Math.max(2, availableParallelism() - 1),
    projects: [
      {
        resolve: { alias },
        test: {
          name: 'unit',
          include: [
            'libs/*/test/**/*.test.ts',
            'apps/*/test/**/*.test.ts',
            'test/**/*.test.ts',
            'bench/test/**/*.test.ts',
          ],
          exclude: ['**/*.int.test.ts', '**/*.prod.test.ts', '**/*.nightly.test.ts', '**/node_modules/**'],
          // a bound on hangs, not on speed: `npm test` runs this project niced beside the integration lanes
          testTimeout: 60_000,
          // one event-loop turn after every test, so a file of long synchronous tests does not time out vitest's
          // own RPC (./test/unit-setup.ts)
          setupFiles: ['test/unit-setup.ts'],
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
      {
        resolve: { alias },
        test: {
          // the production-shaped stack (scripts/stack-production.sh: PostgreSQL, mutual TLS,
          // namespace infersweep, two clusters); brought up by test/production/global-setup.ts
          name: 'production',
          include: ['test/production/**/*.prod.test.ts'],
          exclude: ['**/node_modules/**'],
          globalSetup: ['test/production/global-setup.ts'],
          // after unit and integration (group 0): the two stacks share one Slurm and two cores
          sequence: { groupOrder: 1 },
          pool: 'forks',
          poolOptions: { forks: { singleFork: true } },
          testTimeout: 600_000,
          hookTimeout: 300_000,
        },
      },
      // defined only for `npm run test:nightly` (INFERSWEEP_NIGHTLY=1), so a plain `vitest run` stays per-commit
      ...(process.env.INFERSWEEP_NIGHTLY === '1' ? [nightly] : []),
    ],
  },
});
