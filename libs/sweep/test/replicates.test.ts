import { describe, expect, it } from 'vitest';
import { tInterval, calibratedSequentialDecision } from '@infersweep/stats';
import {
  betweenAllocationShare,
  failPoint,
  finishPoint,
  needsFreshAllocation,
  nextReplicate,
  replicateLines,
  replicateStatusLines,
  summaryLine,
  replicatedConcurrencies,
  replicatesPending,
  requeuePoint,
  settleReplicate,
  startPoint,
  startReplicates,
  type PointState,
  type SweepProgress,
  type SweepReplicates,
} from '../src';
import { progress } from '@infersweep/testkit/progress-fixture';

const spec = (over: Partial<SweepReplicates> = {}): SweepReplicates => ({
  points: 'all',
  min: 3,
  max: 6,
  target: { totalThroughputPerGpu: 0.03 },
  independentAllocations: true,
  ...over,
});

/** Run a point state on job `jobId` measuring throughput `tput` (invalid when tput is undefined). */
const run = (pt: PointState, jobId: string, tput: number | undefined): void => {
  startPoint(pt, jobId, 't');
  finishPoint(
    pt,
    {
      concurrency: pt.concurrency,
      valid: tput !== undefined,
      reasons: tput === undefined ? ['saturated'] : [],
      resultPath: `/r/${pt.concurrency}/${jobId}`,
      reused: false,
      jobId,
      nodes: [`node-${jobId}`],
      ...(tput === undefined ? {} : { totalThroughputPerGpu: tput, interactivityP50: 50 }),
    },
    't',
  );
};

/** A sweep whose first pass measured `first` (concurrency → throughput, undefined: invalid) on job1. */
const firstPass = (first: Record<number, number | undefined>): SweepProgress => {
  const p = progress(Object.keys(first).map(Number));
  for (const pt of p.points) run(pt, 'job1', first[pt.concurrency]);
  return p;
};

/** Measure the next replicate on `jobId` with `tput`, as the workflow does; returns its point. */
const step = (p: SweepProgress, s: SweepReplicates, jobId: string, tput: number | undefined) => {
  const next = nextReplicate(p.replicates!)!;
  run(next.state, jobId, tput);
  settleReplicate(next.point, s);
  return next;
};

describe('which points are replicated', () => {
  it('all: every valid first-pass point, in point order', () => {
    expect(replicatedConcurrencies(firstPass({ 4: 100, 8: undefined, 16: 300 }), spec())).toEqual({
      concurrencies: [4, 16],
      unresolved: [],
    });
  });

  it('a list and the search’s answers, once each; a missing answer or measurement is named', () => {
    const p = firstPass({ 4: 100, 8: 200, 16: undefined });
    p.search = {
      pointsAdded: 0,
      limit: { concurrency: 8, status: 'found', text: '8' },
      knee: { concurrency: null, status: 'unresolved', text: '' },
    };
    expect(replicatedConcurrencies(p, spec({ points: [8, 'slo-limit', 4, 16, 'knee'] }))).toEqual({
      concurrencies: [4, 8],
      unresolved: ['16: c=16 has no valid first-pass measurement', 'knee: the search has no answer'],
    });
  });
});

describe('the replicate schedule', () => {
  it('interleaves rounds: every point’s 2nd replicate before any 3rd, in point order', () => {
    const p = firstPass({ 4: 100, 8: 200 });
    const s = spec({ target: {} });
    startReplicates(p, s);
    const order = [2, 3, 4, 5].map((k) => {
      const n = step(p, s, `job${k}`, 100 + k);
      return `c${n.point.concurrency}r${n.replicate}`;
    });
    expect(order).toEqual(['c4r2', 'c8r2', 'c4r3', 'c8r3']);
    expect(nextReplicate(p.replicates!)).toBeUndefined();
    expect(p.replicates!.points.map((rp) => rp.status)).toEqual(['fixed-n', 'fixed-n']);
  });

  it('asks for a fresh allocation where the point already ran, never elsewhere', () => {
    const p = firstPass({ 4: 100 });
    const [rp] = startReplicates(p, spec()).points;
    expect(needsFreshAllocation(rp!, 'job1')).toBe(true);
    expect(needsFreshAllocation(rp!, 'job2')).toBe(false);
    expect(needsFreshAllocation(rp!, undefined)).toBe(false);
  });

  it('startReplicates is idempotent: a settled replicate survives a second call', () => {
    const p = firstPass({ 4: 100 });
    const s = spec();
    startReplicates(p, s);
    step(p, s, 'job2', 101);
    expect(startReplicates(p, s).points[0]!.replicates.map((x) => x.jobId)).toEqual(['job1', 'job2']);
  });

  it('a requeued replicate (lost allocation) runs again without losing the settled ones', () => {
    const p = firstPass({ 4: 100 });
    const s = spec();
    startReplicates(p, s);
    step(p, s, 'job2', 101);
    const next = nextReplicate(p.replicates!)!;
    startPoint(next.state, 'job3', 't');
    requeuePoint(next.state, 'allocation lost');
    settleReplicate(next.point, s);
    const again = nextReplicate(p.replicates!)!;
    expect(again.replicate).toBe(3);
    expect(again.state).toBe(next.state);
    expect(again.point.replicates.map((x) => x.jobId)).toEqual(['job1', 'job2']);
  });
});

describe('the stopping rule', () => {
  it('stops at min when the calibrated CI meets the target, with that CI', () => {
    const p = firstPass({ 4: 1000 });
    const s = spec();
    startReplicates(p, s);
    step(p, s, 'job2', 1001);
    expect(p.replicates!.points[0]!.status).toBe('replicating');
    step(p, s, 'job3', 999);
    const rp = p.replicates!.points[0]!;
    expect(rp.status).toBe('target-met');
    const want = calibratedSequentialDecision([1000, 1001, 999], { min: 3, max: 6, relativeHalfWidth: 0.03 }).interval!;
    expect(rp.stats.totalThroughputPerGpu).toMatchObject({
      n: 3,
      mean: 1000,
      halfWidth: want.halfWidth,
      level: 0.95,
      target: 0.03,
    });
    // a metric without a target gets the plain t-interval
    expect(rp.stats.interactivityP50).toMatchObject({ n: 3, mean: 50, halfWidth: 0 });
    expect(replicatesPending(p.replicates!, s)).toBe(0);
  });

  it('keeps replicating a noisy point and stops at max with a note', () => {
    const p = firstPass({ 4: 1000 });
    const s = spec();
    startReplicates(p, s);
    const values = [1200, 800, 1100, 900, 1000];
    for (const [i, v] of values.entries()) {
      expect(replicatesPending(p.replicates!, s)).toBe(6 - (i + 1));
      step(p, s, `job${i + 2}`, v);
    }
    const rp = p.replicates!.points[0]!;
    expect(rp.status).toBe('max-reached');
    expect(rp.replicates).toHaveLength(6);
    expect(rp.note).toMatch(/^target not met within max 6: totalThroughputPerGpu ±\d+\.\d % > 3\.0 %$/);
    expect(replicateLines(p.replicates!)[0]).toMatch(
      /^c=4 totalThroughputPerGpu 1000\.0 ± .* \(n 6, max-reached: target not met/,
    );
  });

  it('fixed n = min without a target, with the exact t-interval', () => {
    const p = firstPass({ 4: 1000 });
    const s = spec({ target: {}, max: 3 });
    startReplicates(p, s);
    step(p, s, 'job2', 1100);
    step(p, s, 'job3', 900);
    const rp = p.replicates!.points[0]!;
    expect(rp.status).toBe('fixed-n');
    expect(rp.stats.totalThroughputPerGpu!.halfWidth).toBeCloseTo(tInterval([1000, 1100, 900]).halfWidth, 12);
  });

  it('an invalid or failed replicate stops the point with the reason; its CI so far stays', () => {
    const p = firstPass({ 4: 1000, 8: 2000 });
    const s = spec();
    startReplicates(p, s);
    step(p, s, 'job2', 1010);
    step(p, s, 'job2', undefined);
    const [a, b] = p.replicates!.points;
    expect(a!.stats.totalThroughputPerGpu!.n).toBe(2);
    expect(b).toMatchObject({ status: 'failed', note: 'replicate 2 invalid: saturated' });
    const next = nextReplicate(p.replicates!)!;
    startPoint(next.state, 'job3', 't');
    failPoint(next.state, 'client crashed', 1, 't');
    settleReplicate(next.point, s);
    expect(a).toMatchObject({ status: 'failed', note: 'replicate 3 failed: client crashed' });
    expect(nextReplicate(p.replicates!)).toBeUndefined();
  });

  it('a replicate missing a target metric fails the point loudly', () => {
    const p = firstPass({ 4: 1000 });
    const s = spec({ target: { ttftP99Ms: 0.05 } });
    startReplicates(p, s);
    expect(p.replicates!.points[0]).toMatchObject({
      status: 'failed',
      note: 'no ttftP99Ms in replicate 1: the target cannot be judged',
    });
  });
});

describe('what status shows', () => {
  it('nothing before replicates start; then the pending points, the next replicate and each CI', () => {
    const p = firstPass({ 4: 1000, 8: 2000 });
    const s = spec({ target: {} });
    expect(replicateStatusLines(p)).toEqual([]);
    startReplicates(p, s);
    step(p, s, 'job2', 1010);
    expect(replicateStatusLines(p)).toEqual([
      '2 of 2 point(s) still replicating; next: replicate 2 of c=8',
      'c=4 totalThroughputPerGpu 1005.0 ± 6.3 %, interactivityP50 50.0 ± 0.0 % (n 2, replicating)',
      'c=8 no CI yet (n 1, replicating)',
    ]);
    expect(summaryLine(p)).toMatch(/; replicates: 2 of 2 point\(s\) pending$/);
  });
});

describe('betweenAllocationShare', () => {
  it('is the random-effects share, undefined below 2 allocations', () => {
    expect(betweenAllocationShare([[1, 2, 3]])).toBeUndefined();
    expect(
      betweenAllocationShare([
        [1, 1.1, 0.9],
        [5, 5.1, 4.9],
        [9, 9.1, 8.9],
      ]),
    ).toBeGreaterThan(0.99);
    expect(
      betweenAllocationShare([
        [1, 9, 5],
        [9, 1, 5],
        [5, 1, 9],
      ]),
    ).toBe(0);
  });
});
