/**
 * A deploy while the sweep waits in a busy queue, on the real stack (Temporal dev server, local
 * Slurm, the production worker as a child process): the graceful stop leaves the queued request in
 * place (only a workflow cancel withdraws it, ../src/activities/interceptor.ts), and the next
 * worker adopts the same job by name, with its place in the queue, and runs the sweep on it.
 */
import { describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { allocationJobName } from '@infersweep/core';
import type { SweepResult } from '@infersweep/sweep';
import {
  exited,
  holdEveryNode,
  localSlurm,
  notSaturationGated,
  pointRunning,
  readPoint,
  realStackSuite,
  signalGroup,
  spawnWorker,
  start,
  startOnNewWorker,
  testInput,
  testPlan,
  waitHeartbeat,
  waitProgress,
} from '@infersweep/testkit/sweep-harness';
import { stackEnv } from '@infersweep/testkit/stack';

const slurm = localSlurm();
const suite = realStackSuite(slurm);

describe('a deploy keeps the queue', () => {
  it('SIGTERM while the allocation is queued behind a blocker: the job stays queued, the next worker adopts it, and the same job id is granted and used', async () => {
    const blocker = await holdEveryNode(slurm);
    // about the queue and the job id, not client saturation (this file runs in lane B beside the real-vLLM engine of
    // lane A: CI of 2026-12-04 saw its point invalid, event-loop delay p99 69 ms > 25 ms)
    const input = testInput(testPlan('latency', [1], notSaturationGated), 'sigterm-queued');
    const jobName = allocationJobName(input.sweepId, 1, input.deploymentTag);
    const tq = `t-${randomUUID()}`;
    let w = spawnWorker(tq);
    const h = await start(suite.client(), input, tq);
    try {
      const queued = await waitHeartbeat(
        h,
        (d) => d.state === 'PENDING' && typeof d.jobId === 'string',
        180_000,
        'the allocation PENDING',
      );
      const jobId = String(queued.jobId);
      signalGroup(w, 'SIGTERM');
      await exited(w);
      // the stopped worker left the request queued: the same job, still pending
      expect((await slurm.jobsNamed(jobName)).filter((j) => j.state === 'PENDING').map((j) => j.jobId)).toEqual([
        jobId,
      ]);
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

describe('a point that crashes its server', () => {
  /** scancel every server step of the job (what an OOM-killed engine looks like to Slurm: the step ends). */
  const killServerSteps = (jobId: string): void => {
    const env = { ...process.env, SLURM_CONF: stackEnv().SLURM_CONF };
    const steps = execFileSync('squeue', ['-s', '-j', jobId, '-h', '-o', '%i|%j'], { env, encoding: 'utf8' })
      .split('\n')
      .map((l) => l.split('|'))
      .filter(([id, name]) => id && name && !/extern|batch/.test(id));
    for (const [id] of steps) execFileSync('scancel', [id!], { env });
  };

  it('every time at c=2: the point fails after its attempts with the reason recorded; the allocation is kept and c=4 runs on it', async () => {
    // about server losses, not client saturation on a loaded test machine: notSaturationGated
    const plan = testPlan('latency', [1, 2, 4], notSaturationGated);
    const input = { ...testInput(plan, 'server-crash'), maxPointAttempts: 2 };
    const { worker, h } = await startOnNewWorker(suite.client(), input);
    const result = (await worker.runUntil(async () => {
      for (let attempt = 1; attempt <= 2; attempt++) {
        const p = await waitProgress(
          h,
          (x) => pointRunning(2)(x) && x.points.find((pt) => pt.concurrency === 2)?.attempts === attempt,
          180_000,
          `point c=2 running, attempt ${attempt}`,
        );
        killServerSteps(p.allocation!.jobId);
      }
      return h.result();
    })) as SweepResult;
    expect(result.status).toBe('completed');
    expect(result.allocations.map((a) => a.ended)).toEqual(['released']);
    expect(result.points.map((p) => [p.concurrency, p.status, p.attempts])).toEqual([
      [1, 'done', 1],
      [2, 'failed', 2],
      [4, 'done', 1],
    ]);
    expect(result.points[1]!.lastError).toMatch(/gone/);
    expect(readPoint(input.resultsDir, 4).identity.jobId).toBe(result.allocations[0]!.jobId);
  });
});
