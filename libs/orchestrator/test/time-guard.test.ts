import { describe, expect, it } from 'vitest';
import type { JobInfo } from '@infersweep/slurm';
import type { SweepPlan } from '@infersweep/topology';
import { timeGuard } from '../src/activities/point';
import { InsufficientTimeError } from '../src/activities/errors';
import type { PointRequest } from '../src/activities/types';

/**
 * The point's time guard reads the job once, from the read that found it alive (../src/activities/point.ts): with
 * two reads, a node failing between them made the ended job's 0 s left an InsufficientTimeError, a loss the workflow
 * then left unclassified (a CI run of apps/cli/test/fleet.int.test.ts, 2026-12-05).
 */
describe('timeGuard: a point starts only when the allocation can finish it', () => {
  const plan = { pointBudgets: [{ concurrency: 4, totalSeconds: 600 }] } as unknown as SweepPlan;
  const req = (concurrency: number) =>
    ({ concurrency, pointBudgetSeconds: 120, deployment: { jobId: '42' } }) as unknown as PointRequest;
  const job = (state: string, timeLeftSeconds: number | null) => ({ state, timeLeftSeconds }) as JobInfo;

  it("fits: the point's budget from the plan, else the request's, plus 30 s margin", () => {
    expect(() => timeGuard(job('RUNNING', 630), plan, req(4), 'point:c=4')).not.toThrow();
    expect(() => timeGuard(job('RUNNING', 150), plan, req(8), 'point:c=8')).not.toThrow();
  });

  it('short of it: an InsufficientTimeError naming the job, the time left, the budget and the margin', () => {
    let err: unknown;
    try {
      timeGuard(job('RUNNING', 629), plan, req(4), 'point:c=4');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(InsufficientTimeError);
    expect((err as Error).message).toBe('allocation 42 has 629 s left, point c=4 needs 600 s + 30 s margin');
  });

  it('a job still CONFIGURING has no time to count on, nor one whose time left squeue does not give', () => {
    expect(() => timeGuard(job('CONFIGURING', 9999), plan, req(4), 'point:c=4')).toThrow(/has 0 s left/);
    expect(() => timeGuard(job('RUNNING', null), plan, req(4), 'point:c=4')).toThrow(/has \? s left/);
  });
});
