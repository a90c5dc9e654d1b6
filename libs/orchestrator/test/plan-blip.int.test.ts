/**
 * A blip of the results folder's storage mid-sweep, on the real stack: the stored plan
 * (`<resultsDir>/plan.json`, read by every activity of a new worker) is unreadable for a while when
 * a worker restarts during a point. The read is transient (PlanUnreadableError, retried), never an
 * input error that would fail the sweep and strand its job: once the plan is back, the point ends
 * done on the same allocation, its point attempt unchanged.
 */
import { existsSync, renameSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ResultsLayout } from '@infersweep/core';
import type { SweepResult } from '@infersweep/sweep';
import {
  exited,
  liveJobsOf,
  localSlurm,
  notSaturationGated,
  pointRunning,
  realStackSuite,
  signalGroup,
  spawnWorker,
  start,
  testInput,
  testPlan,
  waitProgress,
} from '@infersweep/testkit/sweep-harness';

const slurm = localSlurm();
const suite = realStackSuite(slurm);

describe('the stored plan blinks', () => {
  it('plan.json unreadable while a restarted worker resumes a point: retried as transient, the sweep completes', async () => {
    const plan = testPlan('latency', [1], (p) => {
      notSaturationGated(p);
      p.agentx.profileDurationSeconds = 20;
      p.pointBudgets = p.pointBudgets.map((b) => ({ ...b, totalSeconds: b.totalSeconds + 20 }));
      p.slurm.timeLimitMinutes += 10;
    });
    const input = testInput(plan, 'plan-blip');
    const planFile = new ResultsLayout(input.resultsDir).planFile;
    const tq = `t-${randomUUID()}`;
    let w = spawnWorker(tq);
    const h = await start(suite.client(), input, tq);
    try {
      await waitProgress(h, pointRunning(1), 240_000, 'point c=1 running');
      const before = (await h.query('progress')) as { allocation?: { jobId: string } };
      expect(existsSync(planFile)).toBe(true);
      renameSync(planFile, `${planFile}.away`); // the storage blinks…
      signalGroup(w, 'SIGTERM'); // …while a deploy restarts the worker (its plan cache goes with it)
      await exited(w);
      w = spawnWorker(tq);
      // the new worker's read fails, as a transient failure of the point's activity
      const deadline = Date.now() + 180_000;
      let lastFailure: { type?: string | null; message?: string | null } | undefined;
      for (;;) {
        const a = (await h.describe()).raw.pendingActivities?.[0];
        lastFailure = { type: a?.lastFailure?.applicationFailureInfo?.type, message: a?.lastFailure?.message };
        if (lastFailure.type === 'PlanUnreadableError') break;
        if (Date.now() > deadline)
          throw new Error(`no transient plan read failure seen: ${JSON.stringify(lastFailure)}`);
        await new Promise((r) => setTimeout(r, 250));
      }
      expect(lastFailure.message).toContain('cannot be read');
      renameSync(`${planFile}.away`, planFile); // …and is back
      const result = (await h.result()) as SweepResult;
      expect(result.status).toBe('completed');
      expect(result.points.map((p) => [p.concurrency, p.status, p.attempts])).toEqual([[1, 'done', 1]]);
      expect(result.allocations.map((a) => a.jobId)).toEqual([before.allocation?.jobId]);
      expect(
        await liveJobsOf(
          slurm,
          result.allocations.map((a) => a.jobName),
        ),
      ).toEqual([]);
    } finally {
      signalGroup(w, 'SIGTERM');
      await exited(w);
    }
  }, 480_000);
});
