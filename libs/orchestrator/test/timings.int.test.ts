/**
 * Real-cluster timescales per commit (./timescales.ts): the first two orientations of
 * `--orientation all` under the production-like profile. The first allocation queues for a little
 * over twice the allocate activity's heartbeat timeout; the c=1 requests and the drain gate outlast
 * the point's heartbeat timeout; every point completes on its first attempt. The old 5-minute
 * give-up window is guarded by the sbatch argv (libs/slurm/test/commands.test.ts: no --immediate,
 * a grant wait of hours) and, on the real queue, by timings.nightly.test.ts.
 */
import { describe, it } from 'vitest';
import { HEARTBEAT_TIMEOUT_SECONDS, localSlurm, realStackSuite } from '@infersweep/testkit/sweep-harness';
import { expectRealClusterTimescales } from './timescales';

const slurm = localSlurm();
const suite = realStackSuite(slurm);
/** past twice production's allocate heartbeat timeout (45 s at 20 s) */
const QUEUE_WAIT_SECONDS = 2 * HEARTBEAT_TIMEOUT_SECONDS.allocate + 5;

describe('real-cluster timescales, per commit', () => {
  it('two orientations under the production-like profile: queued past twice the allocate heartbeat timeout, requests and drain longer than the point heartbeat timeout, every point on its first attempt', async () => {
    await expectRealClusterTimescales(suite.client(), slurm, {
      queueWaitSeconds: QUEUE_WAIT_SECONDS,
      queueGuard: { what: 'the allocate heartbeat timeout', seconds: HEARTBEAT_TIMEOUT_SECONDS.allocate },
      orientationCount: 2,
    });
  }, 600_000);
});
