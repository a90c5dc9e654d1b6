import { describe, expect, it } from 'vitest';
import { resolutionStep, searchPointBound } from '@infersweep/core';
import {
  EVIDENCE_EXCERPT_CHARS,
  finishPoint,
  limitPoints,
  nextPointOrSearch,
  nextSearchPoint,
  searchLines,
  summaryLine,
  sloViolations,
  startPoint,
  type PointState,
  type PointSummary,
  type SearchResult,
  type SweepProgress,
  type SweepSearch,
} from '../src';
import { progress } from '@infersweep/testkit/progress-fixture';

/** A synthetic server: what a point at concurrency c measures. */
type Curve = (c: number) => Partial<PointSummary> & { valid?: boolean };

const search = (over: Partial<SweepSearch> = {}): SweepSearch => ({
  goal: ['slo-limit'],
  slo: { ttftMs: { p99: 500 } },
  minConcurrency: 1,
  maxConcurrency: 256,
  maxAddedPoints: 20,
  resolution: { absolute: 1 },
  pointGpuHours: 16 * (120 / 3600),
  ...over,
});

const measure = (pt: PointState, curve: Curve): void => {
  const m = curve(pt.concurrency);
  startPoint(pt, 'job1', 't');
  const valid = m.valid ?? true;
  finishPoint(
    pt,
    {
      concurrency: pt.concurrency,
      resultPath: `c${pt.concurrency}.json`,
      reused: false,
      reasons: valid ? [] : ['run_cancelled: queue is full'],
      ...m,
      valid,
    },
    't',
  );
};

/** Run the sweep's loop as the workflow does: measure the next point until there is none. */
function runSearch(
  s: SweepSearch,
  planned: number[],
  curve: Curve,
): { p: SweepProgress; result: SearchResult; added: number[] } {
  const p = progress(planned);
  for (let pt = nextPointOrSearch(p, s), n = 0; pt; pt = nextPointOrSearch(p, s), n++) {
    if (n > 1000) throw new Error('the search did not end');
    measure(pt, curve);
  }
  return { p, result: p.search!, added: p.points.filter((x) => x.origin === 'search').map((x) => x.concurrency) };
}

/** TTFT grows linearly with concurrency: the SLO p99 ≤ 500 ms holds up to exactly `limit`. */
const linearTtft =
  (limit: number): Curve =>
  (c) => ({ ttftP99Ms: c <= limit ? 100 + (400 * c) / limit : 500 + c });

describe('searchPointBound: the stated worst case', () => {
  it('is ⌈log2(max/min)⌉ bracket points + ⌈log2((max − min)/step)⌉ bisection points', () => {
    expect(searchPointBound({ minConcurrency: 1, maxConcurrency: 256, resolution: { absolute: 1 } })).toBe(8 + 8);
    expect(searchPointBound({ minConcurrency: 4, maxConcurrency: 64, resolution: { absolute: 4 } })).toBe(4 + 4);
    expect(searchPointBound({ minConcurrency: 10, maxConcurrency: 10, resolution: { absolute: 1 } })).toBe(0);
    expect(resolutionStep({ relative: 0.1 }, 64)).toBe(6);
    expect(resolutionStep({ relative: 0.1 }, 5)).toBe(1);
  });
});

describe('slo-limit on synthetic curves', () => {
  it('finds every limit 1..256 exactly (resolution 1) within the bound, from one start point', () => {
    const s = search();
    const bound = searchPointBound(s);
    for (let limit = 1; limit <= 255; limit++) {
      const { result, added } = runSearch(s, [1], linearTtft(limit));
      expect(result.limit, `limit ${limit}`).toMatchObject({
        concurrency: limit,
        below: limit,
        above: limit + 1,
        status: 'found',
      });
      expect(added.length, `limit ${limit}: added ${added.join(',')}`).toBeLessThanOrEqual(bound);
      expect(result.stoppedBy).toBe('resolved');
    }
  });

  it('brackets the limit to a relative resolution, starting from configured points', () => {
    const s = search({ resolution: { relative: 0.1 }, minConcurrency: 4, maxConcurrency: 512 });
    const bound = searchPointBound(s);
    for (const limit of [5, 17, 40, 63, 64, 65, 100, 300, 511]) {
      const { result, added } = runSearch(s, [8, 16], linearTtft(limit));
      const { below, above } = result.limit!;
      expect(below! <= limit && limit < above!, `limit ${limit} in [${below}, ${above})`).toBe(true);
      expect(above! - below!).toBeLessThanOrEqual(resolutionStep(s.resolution, below!));
      expect(added.length).toBeLessThanOrEqual(bound);
    }
  });

  it('a noisy curve without per-point uncertainty: contradictions are measured again, the bracket is the fitted evidence', () => {
    let seed = 7;
    const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31) * 2 - 1;
    const s = search({ resolution: { absolute: 2 } });
    for (let run = 0; run < 40; run++) {
      const curve: Curve = (c) => ({ ttftP99Ms: 100 + 4 * c + 120 * rnd() });
      const { p, result } = runSearch(s, [4], curve);
      const l = result.limit!;
      const windows = p.points.reduce((n, x) => n + 1 + (x.windows?.length ?? 0), 0);
      expect(windows).toBeLessThanOrEqual(2 * (searchPointBound(s) + 1));
      expect(l.status).toBe('found');
      const byC = new Map(limitPoints(s.slo, p.points).map((x) => [x.concurrency, x]));
      // certain votes: the passing end passed at least half its windows, the failing end failed at least half
      expect(byC.get(l.below!)!.pass!).toBeGreaterThanOrEqual(0.5);
      expect(byC.get(l.above!)!.pass!).toBeLessThanOrEqual(0.5);
      expect(l.above! - l.below!).toBeLessThanOrEqual(2);
    }
  });

  it('never meets: minConcurrency fails, the limit is null', () => {
    const s = search({ minConcurrency: 2 });
    const { result, added } = runSearch(s, [64], () => ({ ttftP99Ms: 9000 }));
    expect(result.limit).toMatchObject({ concurrency: null, status: 'never-meets', above: 2 });
    expect(added).toEqual([32, 16, 8, 4, 2]);
  });

  it('always meets: maxConcurrency passes, the limit is at the top of the range', () => {
    const { result, added } = runSearch(search({ maxConcurrency: 100 }), [8], () => ({ ttftP99Ms: 50 }));
    expect(result.limit).toMatchObject({ concurrency: 100, status: 'at-max' });
    expect(added).toEqual([16, 32, 64, 100]);
  });

  it('saturation at a known concurrency: invalid points past it are evidence, and the limit is where it starts', () => {
    const saturatesAbove = 24;
    const { p, result } = runSearch(search({ slo: { maxErrorRate: 0.01 } }), [4], (c) =>
      c <= saturatesAbove
        ? { requestsProfiled: 100, requestsFailed: 0 }
        : { valid: false, requestsProfiled: 100, requestsFailed: 60 },
    );
    expect(result.limit).toMatchObject({ concurrency: 24, below: 24, above: 25, status: 'found' });
    const invalid = p.points.filter((x) => x.status === 'invalid').map((x) => x.concurrency);
    expect(invalid.length).toBeGreaterThan(0);
    expect(invalid.every((c) => c > saturatesAbove)).toBe(true);
    // every added point says why, with the evidence that bracketed it
    const last = p.points[p.points.length - 1]!;
    expect(last.searchReason).toMatch(/^bisect: c=\d+ meets the SLO \(P 1.00\), c=\d+ fails \(P 0.00\)/);
    expect(last.searchEvidence).toContain('c=32 P(meets the SLO) 0.00 (saturation), 1 window(s), latest load');
  });

  it('maxPoints and the GPU-hour budget stop the search with the bracket so far', () => {
    const byPoints = runSearch(search({ maxAddedPoints: 3 }), [1], linearTtft(100));
    expect(byPoints.added).toEqual([2, 4, 8]);
    expect(byPoints.result).toMatchObject({
      stoppedBy: 'max-points',
      pointsAdded: 3,
      limit: { status: 'unresolved', below: 8 },
    });
    // 16 GPUs × 2 min = 0.533 GPU-h per point: a 3 GPU-h budget pays for 5 points, 1 of them configured
    const byBudget = runSearch(search({ gpuHourBudget: 3 }), [1], linearTtft(100));
    expect(byBudget.added).toEqual([2, 4, 8, 16]);
    expect(byBudget.result.stoppedBy).toBe('gpu-hour-budget');
  });

  it('SLO checks name the metric, the value and the bound; a missing metric fails', () => {
    const pt = (s: Partial<PointSummary>): PointState => ({
      concurrency: 8,
      status: 'done',
      attempts: 1,
      summary: { concurrency: 8, valid: true, reasons: [], resultPath: 'x', reused: false, ...s },
    });
    const slo = { ttftMs: { p99: 500 }, itlMs: { p50: 20 }, maxErrorRate: 0.01 };
    expect(sloViolations(slo, pt({ ttftP99Ms: 600, itlP50Ms: 10, requestsProfiled: 100, requestsFailed: 2 }))).toEqual([
      'TTFT p99 600.0 ms > 500 ms',
      'error rate 0.0200 > 0.01',
    ]);
    expect(sloViolations(slo, pt({ ttftP99Ms: 100, requestsProfiled: 100, requestsFailed: 0 }))).toEqual([
      'ITL p50 not measured',
    ]);
    expect(sloViolations(slo, { concurrency: 8, status: 'failed', attempts: 2, lastError: 'server died' })).toEqual([
      'failed: server died',
    ]);
  });

  it('carries a one-line excerpt of a failure, never a server log tail, so evidence stays bounded', () => {
    const logTail = Array.from({ length: 400 }, (_, i) => `\r${'#'.repeat(120)} ${i}% loading`).join('\n');
    const lastError = `server step 0 on node1 (rank 0) gone: not listed by Slurm on 3 consecutive polls ${'x'.repeat(300)}\n${logTail}`;
    const [line] = sloViolations(undefined, { concurrency: 8, status: 'failed', attempts: 2, lastError });
    expect(line!.startsWith('failed: server step 0 on node1 (rank 0) gone')).toBe(true);
    expect(line!.length).toBeLessThanOrEqual('failed: '.length + EVIDENCE_EXCERPT_CHARS);
    expect(line).not.toContain('loading');
  });

  it('is deterministic and adds nothing while a point is unsettled', () => {
    const p = progress([4]);
    const s = search();
    expect(nextPointOrSearch(p, s)?.concurrency).toBe(4);
    expect(nextPointOrSearch(p, s)?.concurrency).toBe(4);
    expect(p.points).toHaveLength(1);
    measure(p.points[0]!, linearTtft(50));
    const a = nextSearchPoint(s, p.points);
    expect(nextSearchPoint(s, structuredClone(p.points))).toEqual(a);
    expect(a).toMatchObject({
      done: false,
      concurrency: 8,
      reason: 'bracket: c=4 meets the SLO (P 1.00), doubling to c=8',
    });
    expect(nextPointOrSearch(p, s)).toMatchObject({ concurrency: 8, origin: 'search', status: 'pending' });
    expect(nextPointOrSearch(p, s)?.concurrency).toBe(8);
    expect(p.points).toHaveLength(2);
  });

  it('without a search, the configured points only', () => {
    const p = progress([4]);
    measure(p.points[0]!, linearTtft(50));
    expect(nextPointOrSearch(p, undefined)).toBeUndefined();
    expect(p.search).toBeUndefined();
  });
});

describe('frontier: the knee of throughput per GPU against concurrency', () => {
  // throughput per GPU grows with c until the batch is full at c=48, then flat; interactivity falls
  const kneeAt = 48;
  const curve: Curve = (c) => ({
    totalThroughputPerGpu: 40 * Math.min(c, kneeAt),
    interactivityP50: c <= kneeAt ? 100 - c * 0.2 : (100 - kneeAt * 0.2) * (kneeAt / c),
  });

  it('places points around the knee until it is bracketed to the resolution', () => {
    const s = search({ goal: ['frontier'], slo: undefined, maxConcurrency: 256, resolution: { relative: 0.1 } });
    const { result, added } = runSearch(s, [4], curve);
    const k = result.knee!;
    expect(k.status).toBe('found');
    expect(k.below! <= kneeAt && kneeAt <= k.above!, `${kneeAt} in [${k.below}, ${k.above}]: ${k.text}`).toBe(true);
    expect(Math.abs(k.concurrency! - kneeAt)).toBeLessThanOrEqual(resolutionStep(s.resolution, kneeAt));
    expect(added.length).toBeLessThanOrEqual(s.maxAddedPoints);
  });

  it('both goals: the SLO limit first, then the knee', () => {
    const s = search({ goal: ['slo-limit', 'frontier'], slo: { maxErrorRate: 0 }, maxConcurrency: 128 });
    const { result } = runSearch(s, [8], (c) => ({
      ...curve(c),
      requestsProfiled: 10,
      requestsFailed: c > 100 ? 1 : 0,
    }));
    expect(result.limit).toMatchObject({ concurrency: 100, status: 'found' });
    expect(result.knee?.status).toBe('found');
  });
});

describe('searchLines: the search in words for status and the report', () => {
  it('names the limit with its bracketing points and why each point was added', () => {
    const { p } = runSearch(search({ minConcurrency: 2, maxConcurrency: 16 }), [2], linearTtft(5));
    expect(searchLines(p)).toEqual([
      '1 configured + 4 added point(s), ended: resolved',
      'SLO limit 5, 95 % CI [5, 5] (c=5 meets the SLO, P 1.00; c=6 fails, P 0.00, TTFT p99; resolution 1)',
      'c=4 added (bracket: c=2 meets the SLO (P 1.00), doubling to c=4)',
      'c=8 added (bracket: c=4 meets the SLO (P 1.00), doubling to c=8)',
      'c=6 added (bisect: c=4 meets the SLO (P 1.00), c=8 fails (P 0.00); c=6 halves the bracket (resolution 1))',
      'c=5 added (bisect: c=4 meets the SLO (P 1.00), c=6 fails (P 0.00); c=5 halves the bracket (resolution 1))',
    ]);
    expect(searchLines(progress([4]))).toEqual([]);
    // the Web UI's current details and the memo say it too
    expect(summaryLine(p)).toBe(
      'balanced on local: 5 points (5 done, 4 added by search), 0 allocation(s); SLO limit 5, 95 % CI [5, 5] (c=5 meets the SLO, P 1.00; c=6 fails, P 0.00, TTFT p99; resolution 1)',
    );
  });
});
