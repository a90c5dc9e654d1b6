/**
 * A deploy while the sweep waits in a busy queue, on the real stack (Temporal dev server, local
 * Slurm, the production worker as a child process): the graceful stop leaves the queued request in
 * place (only a workflow cancel withdraws it, ../src/activities/interceptor.ts), and the next
 * worker adopts the same job by name, with its place in the queue, and runs the sweep on it.
 */
import { describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { allocationJobName } from '@infersweep/core';
import type { SweepResult } from '@infersweep/sweep';
import {
  exited,
  holdEveryNode,
  localSlurm,
  realStackSuite,
  signalGroup,
  spawnWorker,
  start,
  testInput,
  testPlan,
  waitHeartbeat,
} from './harness';

const slurm = localSlurm();
const suite = realStackSuite(slurm);

describe('a deploy keeps the queue', () => {
  it('SIGTERM while the allocation is queued behind a blocker: the job stays queued, the next worker adopts it, and the same job id is granted and used', async () => {
    const blocker = await holdEveryNode(slurm);
    const input = testInput(testPlan('latency', [1]), 'sigterm-queued');
    const jobName = allocationJobName(input.sweepId, 1, input.deploymentTag);
    const tq = `t-${randomUUID()}`;
    let w = spawnWorker(tq);
    const h = await start(suite.client(), input, tq);
    try {
      const queued = await waitHeartbeat(h, (d) => d.state === 'PENDING' && typeof d.jobId === 'string', 180_000, 'the allocation PENDING');
      const jobId = String(queued.jobId);
      signalGroup(w, 'SIGTERM');
      await exited(w);
      // the stopped worker left the request queued: the same job, still pending
      expect((await slurm.jobsNamed(jobName)).filter((j) => j.state === 'PENDING').map((j) => j.jobId)).toEqual([jobId]);
      w = spawnWorker(tq);
      const adopted = await waitHeartbeat(
        h,
        (d) => d.adoptedPending === true && d.jobId === jobId,
        180_000,
        'the next worker adopting the job',
      );
      expect(adopted).toMatchObject({ phase: 'allocating', jobName, state: 'PENDING' });
      await blocker.release();
      const r = (await h.result()) as SweepResult;
      expect(r.status).toBe('completed');
      expect(r.allocations.map((a) => [a.jobId, a.ended])).toEqual([[jobId, 'released']]);
      expect(r.points.map((p) => [p.concurrency, p.status, p.jobId])).toEqual([[1, 'done', jobId]]);
    } finally {
      signalGroup(w, 'SIGTERM');
      await exited(w);
    }
  });
});
