/**
 * The durable sweep on the real stack: Temporal dev server + local Slurm over the loopback sshd +
 * the simulator launched per allocation through srun. Short durations (the `local` profile).
 * Test 1 measures: it keeps the client-health gate, so the file runs in lane A (test/lanes.ts). Tests 2-8
 * (recovery: losses, restarts, cancel, time guard, operator wait) are in ./sweep-recovery.int.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { SweepProgress, SweepResult } from '@infersweep/sweep';
import {
  keepHistory,
  expectNoLeak as expectNoLeakOf,
  localSlurm,
  notSaturationGated,
  readPoint,
  realStackSuite,
  startOnNewWorker,
  testInput,
  testPlan,
} from '@infersweep/testkit/sweep-harness';

const slurm = localSlurm();
const suite = realStackSuite(slurm);

const expectNoLeak = (p: Pick<SweepProgress, 'allocations'>) => expectNoLeakOf(slurm, p);

describe('durable sweep on the real stack', () => {
  it('1. a 3-point sweep on 2 nodes completes: one valid result per point, allocation released', async () => {
    const plan = testPlan('latency', [1, 2, 4]);
    const input = testInput(plan, 'happy');
    const { worker, h } = await startOnNewWorker(suite.client(), input);
    const result = (await worker.runUntil(h.result())) as SweepResult;
    expect(result.status).toBe('completed');
    expect(result.points.map((p) => [p.concurrency, p.status])).toEqual([
      [1, 'done'],
      [2, 'done'],
      [4, 'done'],
    ]);
    expect(result.allocations).toHaveLength(1);
    expect(result.allocations[0]!.ended).toBe('released');
    for (const pt of [1, 2, 4]) {
      const r = readPoint(input.resultsDir, pt);
      expect(r.submission_invalid_reasons).toEqual([]);
      expect(r.submission_valid).toBe(true);
      expect(r.identity.deploymentPolicy).toBe('shared-server');
      expect(r.identity.jobId).toBe(result.allocations[0]!.jobId);
      expect(r.identity.planHash).toBe(plan.planHash);
    }
    await expectNoLeak(result);
    expect(readdirSync(join(input.resultsDir, 'logs', 'server-1')).sort()).toEqual(
      [...result.allocations[0]!.nodes].map((n) => `${n}.log`).sort(),
    );
    await keepHistory(h, 'happy-path');
  });

  it.each(['server-per-point', 'allocation-per-point'] as const)(
    '9. deployment policy %s: fresh server or allocation per point, recorded in every result',
    async (policy) => {
      // a path, not a measurement: the CI of ee56a54 refused its c=1 as host_saturated (load 7.77 on 2 CPUs)
      const plan = testPlan('latency', [1, 2], (p) => {
        notSaturationGated(p);
        p.deployment.policy = policy;
      });
      const input = testInput(plan, policy);
      const { worker, h } = await startOnNewWorker(suite.client(), input);
      const result = (await worker.runUntil(h.result())) as SweepResult;
      expect(result.status).toBe('completed');
      expect(result.points.map((p) => [p.concurrency, p.status, p.summary?.reasons ?? []])).toEqual([
        [1, 'done', []],
        [2, 'done', []],
      ]);
      expect(result.allocations.map((a) => a.ended)).toEqual(
        policy === 'allocation-per-point' ? ['released', 'released'] : ['released'],
      );
      for (const pt of [1, 2]) expect(readPoint(input.resultsDir, pt).identity.deploymentPolicy).toBe(policy);
      // a fresh server per point: one log folder per server
      expect(readdirSync(join(input.resultsDir, 'logs')).sort()).toEqual(['server-1', 'server-2']);
      await expectNoLeak(result);
    },
  );
});
