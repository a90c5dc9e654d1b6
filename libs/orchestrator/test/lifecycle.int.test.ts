/**
 * A sweep's life across deploys and long histories, on the real stack (Temporal dev server, local Slurm over the loopback sshd, the simulator per allocation):
 *  - a worker shutdown (SIGTERM, as on a deploy) is not a failure: the point's activity is retried
 *    on the next worker, twice in one point, with the point's attempt count and the allocation
 *    unchanged (each stop does use one Temporal activity attempt of runPoint: 3 after two stops);
 *  - continue-as-new past a (small) history bound carries the allocation and the server over.
 * Liveness by timer across long waits (queue, requests, drain gate) is ./timings.int.test.ts, under
 * the production-like timing profile of libs/testkit/src/sweep-harness.ts.
 */
import { describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import type { SweepResult } from '@infersweep/sweep';
import type { SweepRunInput } from '../src/workflows/run';
import {
  exited,
  liveJobsOf,
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

const slurm = localSlurm();
// these tests are about liveness, deploys and history, not client saturation: notSaturationGated
const suite = realStackSuite(slurm);

describe('sweep lifecycle on the real stack', () => {
  it('restart the worker twice during one point (SIGTERM, as a deploy does): the point is retried on the next worker, its point attempt and allocation unchanged, one activity attempt used per stop', async () => {
    // each stop comes as soon as the point is seen profiling (250 ms polls); the worker's graceful stop
    // lets a running activity finish for 30 s (shutdownGraceTime, ../src/worker.ts) before it cancels
    // it, so the profile must outlast that grace: 45 s
    const plan = testPlan('latency', [1], (p) => {
      notSaturationGated(p);
      p.agentx.profileDurationSeconds = 45;
      p.pointBudgets = p.pointBudgets.map((b) => ({ ...b, totalSeconds: b.totalSeconds + 45 }));
      p.slurm.timeLimitMinutes += 10;
    });
    const input = testInput(plan, 'redeploy');
    const tq = `t-${randomUUID()}`;
    const profilingOnAttempt = async (attempt: number) => {
      await waitHeartbeat(
        h,
        (d) => d.phase === 'profiling',
        240_000,
        `point c=1 profiling on activity attempt ${attempt}`,
      );
      const d = await h.describe();
      return d.raw.pendingActivities?.[0]?.attempt ?? 0;
    };
    /** Wait for the point's activity to run (and heartbeat) on `attempt`; how its previous attempt ended. */
    const runningAgain = async (attempt: number): Promise<string | null | undefined> => {
      const deadline = Date.now() + 240_000;
      for (;;) {
        const a = (await h.describe()).raw.pendingActivities?.[0];
        const started = Number(a?.lastStartedTime?.seconds ?? 0);
        if (
          a &&
          a.attempt === attempt &&
          Number(a.state) === 2 &&
          started > 0 &&
          Number(a.lastHeartbeatTime?.seconds ?? 0) >= started
        )
          return a.lastFailure?.applicationFailureInfo?.type;
        if (Date.now() > deadline)
          throw new Error(`the point did not run again on attempt ${attempt}: ${JSON.stringify(a)}`);
        await new Promise((r) => setTimeout(r, 250));
      }
    };
    let w = spawnWorker(tq);
    const h = await start(suite.client(), input, tq);
    const resumeSeconds: number[] = [];
    try {
      await waitProgress(h, pointRunning(1), 240_000, 'point c=1 running');
      for (let restart = 1; restart <= 2; restart++) {
        expect(await profilingOnAttempt(restart)).toBe(restart);
        const allocation = (await h.query('progress')) as { allocation?: { jobId: string } };
        const sigterm = Date.now();
        signalGroup(w, 'SIGTERM');
        await exited(w);
        w = spawnWorker(tq);
        // the point resumes: its activity runs again (the next attempt) on the new worker and heartbeats
        // …after the previous attempt ended as a graceful worker shutdown, not a timeout or an abort
        expect(await runningAgain(restart + 1)).toBe('WorkerShutdown');
        resumeSeconds.push((Date.now() - sigterm) / 1000);
        const p = (await h.query('progress')) as {
          allocation?: { jobId: string };
          points: { attempts: number }[];
          allocations: unknown[];
        };
        expect(p.allocation?.jobId).toBe(allocation.allocation?.jobId);
        expect(p.points[0]!.attempts).toBe(1);
        expect(p.allocations).toHaveLength(1);
      }
      const result = (await h.result()) as SweepResult;
      expect(result.points.map((p) => [p.concurrency, p.status, p.attempts])).toEqual([[1, 'done', 1]]);
      expect(result.allocations.map((a) => a.ended)).toEqual(['released']);
      expect(readPoint(input.resultsDir, 1).identity.activityAttempt).toBe(3);
      expect(
        await liveJobsOf(
          slurm,
          result.allocations.map((a) => a.jobName),
        ),
      ).toEqual([]);
      console.log(
        `SIGTERM → point running again on the next worker: ${resumeSeconds.map((s) => `${s.toFixed(1)} s`).join(', ')}`,
      );
    } finally {
      signalGroup(w, 'SIGTERM');
      await exited(w);
    }
  }, 480_000);

  it('continues as new past a small history bound: the next run keeps the allocation and the server, no point reruns', async () => {
    const plan = testPlan('latency', [1, 2, 4], notSaturationGated);
    const input: SweepRunInput = { ...testInput(plan, 'can'), historyEventLimit: 30 };
    const { worker, h } = await startOnNewWorker(suite.client(), input);
    const result = (await worker.runUntil(h.result())) as SweepResult;
    expect(result.points.map((p) => [p.concurrency, p.status, p.attempts])).toEqual([
      [1, 'done', 1],
      [2, 'done', 1],
      [4, 'done', 1],
    ]);
    expect(result.allocations.map((a) => a.ended)).toEqual(['released']);
    const runs: { status: string; historyLength: number }[] = [];
    for await (const w of suite.client().workflow.list({ query: `WorkflowId = '${input.sweepId}'` }))
      runs.push({ status: w.status.name, historyLength: w.historyLength });
    expect(runs.filter((r) => r.status === 'CONTINUED_AS_NEW').length).toBeGreaterThanOrEqual(1);
    // every run stays near the bound (a point's events may cross it before the check between points)
    for (const r of runs) expect(r.historyLength).toBeLessThan(60);
    const jobIds = new Set([1, 2, 4].map((cc) => readPoint(input.resultsDir, cc).identity.jobId));
    expect(jobIds.size).toBe(1);
    console.log(`continue-as-new: ${runs.length} runs, history lengths ${runs.map((r) => r.historyLength).join(', ')}`);
  });
});
