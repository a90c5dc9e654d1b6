import { describe, expect, it } from 'vitest';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from '@temporalio/worker';
import { bundlerOptions, workflowsPath } from '../src/bundle';

const dir = join(__dirname, 'fixtures', 'histories');
const fixtures = existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith('.json')) : [];

/**
 * Histories recorded from real sweeps (sweep.int.test.ts with INFERSWEEP_RECORD_HISTORIES=1) must
 * replay with the current workflow code: a change that breaks determinism fails here.
 */
describe('workflow replay', () => {
  it('has recorded histories to check', () => {
    expect(fixtures.length).toBeGreaterThanOrEqual(3);
  });

  it.each(fixtures)(
    '%s replays without nondeterminism',
    async (file) => {
      const history = JSON.parse(readFileSync(join(dir, file), 'utf8'));
      await expect(
        Worker.runReplayHistory({ workflowsPath, bundlerOptions }, history, file.replace(/\.json$/, '')),
      ).resolves.toBeUndefined();
    },
    60_000,
  );
});
