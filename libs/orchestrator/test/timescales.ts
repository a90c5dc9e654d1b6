/**
 * Sweeps that survive real-cluster timescales: `--orientation all` (all of it, or its first
 * orientations) under the production-like timing profile (libs/testkit/src/sweep-harness.ts, productionTimings) on the
 * real stack (Temporal dev server, local Slurm over the loopback sshd, the simulator per allocation,
 * a real worker with the production activities on a test task queue). Every wait runs longer than
 * the limit it threatens: the first allocation queues behind a job holding every node for longer
 * than `queueGuard` (the allocate activity's heartbeat timeout per commit, the old 5-minute give-up
 * window nightly), every c=1 request streams longer than the point's heartbeat timeout, and the drain
 * gate before the second point of the first orientation takes longer than it too. Every point
 * completes on its first attempt. Run by timings.int.test.ts (per commit) and
 * timings.nightly.test.ts (production timescales).
 */
import { expect } from 'vitest';
import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import type { SlurmCluster } from '@infersweep/slurm';
import type { ChildSweepOutcome } from '@infersweep/sweep';
import {
  allOrientationPlans,
  HEARTBEAT_TIMEOUT_SECONDS,
  holdEveryNode,
  liveJobsOf,
  longestRequestMs,
  newWorker,
  productionDrainSeconds,
  productionLike,
  readPoint,
  startAll,
  testInput,
  waitHeartbeat,
} from '@infersweep/testkit/sweep-harness';

export interface TimescaleRun {
  /** how long the first allocation waits in the queue before the blocker is released */
  queueWaitSeconds: number;
  /** the limit the queue wait must outlast */
  queueGuard: { what: string; seconds: number };
  /** the first N orientations of `--orientation all` (undefined: every orientation) */
  orientationCount?: number;
}

export async function expectRealClusterTimescales(
  c: Client,
  slurm: SlurmCluster,
  { queueWaitSeconds, queueGuard, orientationCount }: TimescaleRun,
): Promise<void> {
  expect(productionDrainSeconds).toBeGreaterThan(HEARTBEAT_TIMEOUT_SECONDS.runPoint);
  expect(queueWaitSeconds).toBeGreaterThan(queueGuard.seconds);
  // the first orientation runs two points (the drain gate runs before the second), the rest c=1
  const plans = allOrientationPlans((_, i) => (i === 0 ? [1, 2] : [1]), productionLike).slice(0, orientationCount);
  const orientations = plans.map((p) => p.orientation);
  expect(orientations.length).toBeGreaterThan(1);
  const inputs = plans.map((p) => testInput(p, `timings-${p.orientation}`));
  const points = inputs.reduce((n, i) => n + i.points.length, 0);
  const blocker = await holdEveryNode(slurm);
  const tq = `t-${randomUUID()}`;
  const worker = await newWorker(tq);
  const t0 = Date.now();
  const h = await startAll(c, inputs, tq);
  const first = c.workflow.getHandle(inputs[0]!.sweepId);
  const { outcomes, queued, drainSeconds } = await worker.runUntil(async () => {
    // the first child's allocation waits behind the blocker, its heartbeat carrying Slurm's pending reason
    const queued = await waitHeartbeat(
      first,
      (d) => d.phase === 'allocating' && d.state === 'PENDING' && Number(d.waitedSeconds) >= queueWaitSeconds,
      (queueWaitSeconds + 180) * 1000,
      `the first allocation to wait ${queueWaitSeconds} s in the queue`,
    );
    await blocker.release();
    // the drain gate before the first orientation's second point, timed from its own heartbeats
    await waitHeartbeat(
      first,
      (d) => d.phase === 'draining' && d.concurrency === 2,
      300_000,
      'the drain gate before c=2',
    );
    const drainFrom = Date.now();
    await waitHeartbeat(
      first,
      (d) => d.phase !== 'draining' && d.concurrency === 2,
      300_000,
      'c=2 past its drain gate',
    );
    const drainSeconds = (Date.now() - drainFrom) / 1000;
    return { outcomes: (await h.result()) as ChildSweepOutcome[], queued, drainSeconds };
  });
  const wallSeconds = (Date.now() - t0) / 1000;

  expect(drainSeconds).toBeGreaterThan(HEARTBEAT_TIMEOUT_SECONDS.runPoint);
  expect(queued).toMatchObject({ jobName: expect.any(String), reason: expect.stringMatching(/Resources|Priority/) });
  expect(outcomes.map((o) => [o.orientation, o.status])).toEqual(orientations.map((o) => [o, 'completed']));
  const longest: { orientation: string; ms: number }[] = [];
  for (const [i, o] of outcomes.entries()) {
    const r = o.result!;
    expect(r.points.map((p) => [p.concurrency, p.status, p.attempts])).toEqual(
      inputs[i]!.points.map((c) => [c, 'done', 1]),
    );
    for (const p of r.points) expect(readPoint(o.resultsDir, p.concurrency).identity.activityAttempt).toBe(1);
    expect(r.allocations.map((a) => [a.attempt, a.ended])).toEqual([[1, 'released']]);
    // every c=1 request that stands for "minutes of streaming" outlived the point's heartbeat timeout
    const c1 = longestRequestMs(o.resultsDir, 1);
    expect(c1.ms).toBeGreaterThan((HEARTBEAT_TIMEOUT_SECONDS.runPoint + 5) * 1000);
    longest.push({ orientation: o.orientation, ms: c1.ms });
  }
  // the queued job is the one granted: one Slurm job for the first orientation, adopted as it was queued
  expect(outcomes[0]!.result!.allocations[0]!.jobName).toBe(queued.jobName);
  expect(outcomes[0]!.result!.allocations[0]!.jobId).toBe(queued.jobId);
  expect(
    await liveJobsOf(
      slurm,
      outcomes.flatMap((o) => o.result!.allocations.map((a) => a.jobName)),
    ),
  ).toEqual([]);

  // measurements: history per point, time per point, the longest request
  const histories = await Promise.all(
    [h.workflowId, ...inputs.map((i) => i.sweepId)].map(async (id) => {
      const d = await c.workflow.getHandle(id).describe();
      const events = (await c.workflow.getHandle(id).fetchHistory()).events ?? [];
      const started = events.flatMap((e) =>
        e.activityTaskStartedEventAttributes ? [e.activityTaskStartedEventAttributes.attempt ?? 0] : [],
      );
      return { id, events: events.length, started, bytes: Number(d.raw.workflowExecutionInfo?.historySizeBytes ?? 0) };
    }),
  );
  // no activity needed a second attempt: the queue wait, the long requests and the drain gate never
  // looked like a dead worker (allocate, waitReady, runPoint … each started once)
  const activityStarts = histories.flatMap((x) => x.started);
  expect(activityStarts.length).toBeGreaterThan(inputs.length * 5);
  expect(activityStarts.filter((a) => a !== 1)).toEqual([]);
  const events = histories.reduce((n, x) => n + x.events, 0);
  const bytes = histories.reduce((n, x) => n + x.bytes, 0);
  const pointSeconds = outcomes.flatMap((o) =>
    o.result!.points.map((p) => ({
      at: `${o.orientation} c=${p.concurrency}`,
      s: (Date.parse(p.finishedAt!) - Date.parse(p.startedAt!)) / 1000,
    })),
  );
  const top = longest.reduce((a, b) => (b.ms > a.ms ? b : a));
  console.log(
    `[measure] --orientation all (${orientations.length} orientations, ${points} points) under the production-like profile: ${wallSeconds.toFixed(0)} s wall, queued ${queued.waitedSeconds} s (${queued.reason}) before the blocker was released (guard: ${queueGuard.what} ${queueGuard.seconds} s); drain gate before c=2 ${drainSeconds.toFixed(0)} s; ${activityStarts.length} activity starts, all attempt 1`,
  );
  console.log(
    `[measure] history: ${events} events, ${bytes} bytes over parent + ${inputs.length} children = ${(events / points).toFixed(1)} events and ${Math.round(bytes / points)} bytes per point (${histories.map((x) => x.events).join(', ')} events)`,
  );
  console.log(
    `[measure] time per point (runPoint start → record): ${pointSeconds.map((p) => `${p.at} ${p.s.toFixed(0)} s`).join(', ')}; wall ${(wallSeconds / points).toFixed(0)} s per point`,
  );
  console.log(
    `[measure] longest c=1 request: ${(top.ms / 1000).toFixed(1)} s (${top.orientation}); per orientation ${longest.map((l) => `${l.orientation} ${(l.ms / 1000).toFixed(1)} s`).join(', ')}; point heartbeat timeout ${HEARTBEAT_TIMEOUT_SECONDS.runPoint} s`,
  );
}
