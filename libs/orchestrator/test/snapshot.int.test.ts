/**
 * A snapshot over the two local clusters per commit (./snapshot-stack.ts): one cell on each, west's
 * partition down while east's cell runs and for longer than the allocate activity's heartbeat
 * timeout; west's cell runs when it is restored, and the snapshot completes with both cells valid.
 * Its history is the replay fixture `snapshot-cluster-down` (INFERSWEEP_RECORD_HISTORIES=1).
 */
import { describe, it } from 'vitest';
import { localSlurm, realStackSuite } from '@infersweep/testkit/sweep-harness';
import { ALLOCATE_HEARTBEAT_MS, expectSnapshotWithWestDown, twoClusterWorkers } from './snapshot-stack';

const suite = realStackSuite(localSlurm());
twoClusterWorkers();

describe('a snapshot over two local clusters', () => {
  it('west down while east runs: west waits, runs when restored, and every cell is valid', async () => {
    await expectSnapshotWithWestDown(suite.client(), {
      configs: ['two'],
      orientations: ['single-node'],
      outageMs: ALLOCATE_HEARTBEAT_MS,
      timeoutMs: 150_000,
      scenario: 'snapshot-cluster-down',
    });
  }, 240_000);
});
