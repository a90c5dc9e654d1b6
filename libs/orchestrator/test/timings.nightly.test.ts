/**
 * Real-cluster timescales at production scale (./timescales.ts), nightly: the whole
 * `--orientation all` under the production-like profile, its first allocation queued past the window
 * the allocation used to give up at (`salloc --immediate=300`); every c=1 request and the drain gate
 * outlast the point's heartbeat timeout; every point completes on its first attempt.
 */
import { describe, it } from 'vitest';
import { localSlurm, OLD_GRANT_WINDOW_SECONDS, realStackSuite } from '@infersweep/testkit/sweep-harness';
import { expectRealClusterTimescales } from './timescales';

const slurm = localSlurm();
const suite = realStackSuite(slurm);

describe('real-cluster timescales, production scale', () => {
  it('--orientation all under the production-like profile: queued past the old 5-minute window, requests and drain longer than the heartbeat timeout, every point on its first attempt', async () => {
    await expectRealClusterTimescales(suite.client(), slurm, {
      queueWaitSeconds: OLD_GRANT_WINDOW_SECONDS + 10,
      queueGuard: { what: 'the old grant window', seconds: OLD_GRANT_WINDOW_SECONDS },
    });
  }, 1_200_000);
});
