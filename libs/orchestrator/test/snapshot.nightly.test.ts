/**
 * The snapshot, nightly (./snapshot-stack.ts): 12 cells over the two local clusters (both
 * orientations of configs/two-clusters-local.yaml under three config names, on east and west), west's
 * partition down for 10 minutes; the snapshot completes with every cell valid (at least 95 %
 * required) and no operator action.
 */
import { describe, expect, it } from 'vitest';
import { localSlurm, realStackSuite } from '@infersweep/testkit/sweep-harness';
import { expectSnapshotWithWestDown, twoClusterWorkers } from './snapshot-stack';

const suite = realStackSuite(localSlurm());
twoClusterWorkers();

const OUTAGE_MS = 10 * 60_000;

describe('a 12-cell snapshot over two local clusters', () => {
  it(
    'west down for 10 minutes: its cells run when it is back, >= 95 % of cells valid, no operator action',
    async () => {
      const r = await expectSnapshotWithWestDown(suite.client(), {
        configs: ['two-a', 'two-b', 'two-c'],
        orientations: ['single-node', 'two-node'],
        outageMs: OUTAGE_MS,
        timeoutMs: OUTAGE_MS + 10 * 60_000,
      });
      expect(r.headline.planned).toBe(12);
      expect(r.headline.valid / r.headline.planned).toBeGreaterThanOrEqual(0.95);
      expect(r.headline.operatorActions).toBeLessThanOrEqual(1);
    },
    40 * 60_000,
  );
});
