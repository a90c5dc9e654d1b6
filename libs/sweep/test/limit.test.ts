import { describe, expect, it } from 'vitest';
import {
  finishPoint,
  invalidClass,
  limitPoints,
  limitStep,
  nextPointOrSearch,
  pointWindow,
  searchLines,
  startPoint,
  type PointState,
  type PointSummary,
  type SweepSearch,
} from '../src';
import { progress } from '@infersweep/testkit/progress-fixture';

const search: SweepSearch = {
  goal: ['slo-limit'],
  slo: { ttftMs: { p99: 500 } },
  minConcurrency: 1,
  maxConcurrency: 64,
  maxAddedPoints: 20,
  resolution: { absolute: 1 },
  pointGpuHours: 0,
};

const done = (c: number, s: Partial<PointSummary>, windows?: PointState['windows']): PointState => ({
  concurrency: c,
  status: s.valid === false ? 'invalid' : 'done',
  attempts: 1,
  ...(windows ? { windows } : {}),
  summary: { concurrency: c, valid: true, reasons: [], resultPath: `c${c}`, reused: false, ...s },
});

/** A point whose window and its re-measure were both invalid, with `reason` (its tag before the colon). */
const invalidTwice = (c: number, reason: string, remeasureReason: string): PointState => ({
  ...done(c, { valid: false, reasons: [reason] }),
  windows: [
    {
      status: 'invalid',
      remeasureReason,
      summary: { ...done(c, {}).summary!, valid: false, reasons: [reason] },
    },
  ],
});
const client = (c: number) =>
  invalidTwice(c, 'client_saturated: event loop lag 900 ms', 'the client could not hold it');
/** an idle DP rank in both windows: below the DP size, or spoiled twice */
const idleTwice = (c: number) =>
  invalidTwice(c, 'idle_dp_rank: engine 1 served no request', 'invalid for a reason not load');

describe('invalidClass: why a window is invalid', () => {
  it('load wins; then the client; an idle rank alone is not load', () => {
    expect(invalidClass(['idle_dp_rank: engine 1 served nothing'])).toBe('not-load');
    expect(invalidClass(['client_saturated: lag', 'idle_dp_rank: x'])).toBe('client');
    expect(invalidClass(['concurrency_not_held: 80 %'])).toBe('client');
    expect(invalidClass(['error_rate_exceeded: 9/10', 'client_saturated: lag'])).toBe('load');
    expect(invalidClass(['run_cancelled: failed-request threshold exceeded'])).toBe('load');
    expect(invalidClass([])).toBe('load');
  });
});

describe('limitPoints: a point’s probability of meeting the SLO', () => {
  it('is Φ(log(bound/estimate)/se), the smallest over the bounds, pooled over windows', () => {
    const slo = { ttftMs: { p99: 500 }, itlMs: { p50: 20 } };
    const [p] = limitPoints(slo, [done(8, { ttftP99Ms: 500, itlP50Ms: 10, logSe: { ttftP99Ms: 0.1, itlP50Ms: 0.1 } })]);
    expect(p).toMatchObject({ binding: 'TTFT p99', windows: 1, counted: 1 });
    expect(p!.pass).toBeCloseTo(0.5, 6);
    // two windows at ±1 SE around the bound pool to a margin of 0
    const w1 = { status: 'done' as const, remeasureReason: 'coin flip', summary: done(8, {}).summary! };
    w1.summary = { ...w1.summary, ttftP99Ms: 500 * Math.exp(0.1), logSe: { ttftP99Ms: 0.1 } };
    const [q] = limitPoints({ ttftMs: { p99: 500 } }, [
      done(8, { ttftP99Ms: 500 * Math.exp(-0.1), logSe: { ttftP99Ms: 0.1 } }, [w1]),
    ]);
    expect(q!.pass).toBeCloseTo(0.5, 6);
    expect(q!.windows).toBe(2);
  });

  it('a load-invalid window is a certain fail; a spurious one is superseded by its re-measure', () => {
    const spurious = {
      status: 'invalid' as const,
      remeasureReason: 'invalid for a reason not load',
      summary: { ...done(8, {}).summary!, valid: false, reasons: ['idle_dp_rank: engine 1'] },
    };
    const pts = limitPoints(search.slo, [
      done(8, { ttftP99Ms: 100 }, [spurious]),
      done(64, { valid: false, reasons: ['error_rate_exceeded: 40/100'] }),
    ]);
    expect(pts.map((p) => [p.concurrency, p.pass, p.binding])).toEqual([
      [8, 1, 'TTFT p99'],
      [64, 0, 'saturation'],
    ]);
  });
});

describe('limitStep: what to measure next', () => {
  it('re-measures a point invalid for a reason that is not load before it counts', () => {
    const st = limitStep(search, [
      done(8, { ttftP99Ms: 100 }),
      done(16, { valid: false, reasons: ['idle_dp_rank: engine 1 served no request'] }),
    ]);
    expect(st.next).toMatchObject({ concurrency: 16, remeasure: true });
    expect(st.next!.reason).toContain('invalid for a reason not load');
  });

  it('re-measures the less certain point of a pass above a fail', () => {
    const st = limitStep(search, [
      done(8, { ttftP99Ms: 520, logSe: { ttftP99Ms: 0.1 } }),
      done(16, { ttftP99Ms: 300, logSe: { ttftP99Ms: 0.1 } }),
      done(32, { ttftP99Ms: 2000, logSe: { ttftP99Ms: 0.1 } }),
    ]);
    expect(st.next).toMatchObject({ concurrency: 8, remeasure: true });
    expect(st.next!.reason).toMatch(/contradicts the monotone fit/);
  });

  it('re-measures a bracket end whose pass/fail is a coin flip, once', () => {
    const coin = done(16, { ttftP99Ms: 510, logSe: { ttftP99Ms: 0.1 } });
    const pts = [done(8, { ttftP99Ms: 100, logSe: { ttftP99Ms: 0.1 } }), coin];
    expect(limitStep(search, pts).next).toMatchObject({ concurrency: 16, remeasure: true });
    const again = { ...coin, windows: [{ status: 'done' as const, summary: coin.summary!, remeasureReason: 'x' }] };
    // pooled over two windows still a coin flip: no third window; the bracket moves on
    expect(limitStep(search, [pts[0]!, again]).next).toMatchObject({ concurrency: 12 });
  });

  it('a client limit bounds the search and is never the server limit', () => {
    const st = limitStep(search, [done(8, { ttftP99Ms: 100 }), done(15, { ttftP99Ms: 120 }), client(16)]);
    expect(st.next).toBeUndefined();
    expect(st.bracket).toMatchObject({
      concurrency: 15,
      below: 15,
      above: 16,
      status: 'client-bound',
      ci: { lower: 15, upper: null },
    });
    expect(st.bracket.text).toContain("a client-side limit, not the server's");
  });

  it('resolved: the limit, its interval, the binding bound and the bracketing points', () => {
    const st = limitStep(search, [
      done(8, { ttftP99Ms: 100, logSe: { ttftP99Ms: 0.1 } }),
      done(20, { ttftP99Ms: 400, logSe: { ttftP99Ms: 0.1 } }),
      done(21, { ttftP99Ms: 620, logSe: { ttftP99Ms: 0.1 } }),
      done(24, { ttftP99Ms: 900, logSe: { ttftP99Ms: 0.1 } }),
    ]);
    expect(st.next).toBeUndefined();
    // P(20) = Φ(2.23) ≈ 0.987 ≥ 0.975: the interval starts there; P(21) = Φ(−2.15) ≈ 0.016 ≤ 0.025
    expect(st.bracket).toMatchObject({
      concurrency: 20,
      below: 20,
      above: 21,
      status: 'found',
      ci: { lower: 20, upper: 20 },
      binding: 'TTFT p99',
    });
  });
});

describe('limitStep: a point invalid twice for a reason not load is unmeasurable (eighth registration)', () => {
  const pass = (c: number) => done(c, { ttftP99Ms: 100 });
  const fail = (c: number) => done(c, { ttftP99Ms: 900 });

  it('is neither a fail nor a client ceiling: no evidence, named in the lines', () => {
    const [p] = limitPoints(search.slo, [idleTwice(16)]);
    expect(p).toMatchObject({ concurrency: 16, windows: 2, counted: 0, unmeasurable: true });
    expect(p!.pass).toBeUndefined();
    const st = limitStep(search, [pass(8), idleTwice(16), fail(32)]);
    expect(st.lines).toContain('c=16 unmeasurable (no evidence), 2 window(s), latest not-load');
    // the first registration counted it a fail and reported 8 with a bracket [8, 16)
    expect(st.bracket).toMatchObject({ status: 'unresolved', below: 8, above: 32 });
  });

  it('bisection takes the measurable concurrency nearest the midpoint, the lower on a tie', () => {
    expect(limitStep(search, [pass(8), fail(32)]).next).toMatchObject({ concurrency: 20 });
    const st = limitStep(search, [pass(8), idleTwice(20), fail(32)]);
    expect(st.next).toMatchObject({ concurrency: 19 });
    expect(st.next!.reason).toContain('c=20 could not be measured (invalid for a reason not load, twice)');
    expect(limitStep(search, [pass(8), idleTwice(19), idleTwice(20), fail(32)]).next).toMatchObject({
      concurrency: 21,
    });
  });

  it('doubling and halving skip it', () => {
    expect(limitStep(search, [pass(8), idleTwice(16)]).next).toMatchObject({ concurrency: 32 });
    expect(limitStep(search, [idleTwice(4), fail(8)]).next).toMatchObject({ concurrency: 2 });
  });

  it('with no evidence, starts at the next doubling above the highest unmeasurable point (below DP)', () => {
    const st = limitStep(search, [idleTwice(4), idleTwice(8)]);
    expect(st.next).toMatchObject({ concurrency: 16 });
    expect(st.next!.reason).toBe(
      'start above c=8; c=4, c=8 could not be measured (invalid for a reason not load, twice)',
    );
    // under the first registration: c=8 "failed", the search halved to 4, 2, 1 and ended never-meets
  });

  it('ends unresolved, naming the points, when nothing measurable is left where the next point must go', () => {
    const st = limitStep(search, [pass(15), idleTwice(16), fail(17)]);
    expect(st.next).toBeUndefined();
    expect(st.bracket).toMatchObject({ status: 'unresolved', concurrency: 15, below: 15, above: 17 });
    expect(st.bracket.text).toContain('in [15, 17); c=16 could not be measured');
    const top = limitStep(search, [pass(32), idleTwice(64)]);
    expect(top.next).toBeUndefined();
    expect(top.bracket).toMatchObject({ status: 'unresolved', concurrency: 32 });
    expect(top.bracket.text).toContain('≥ 32; c=64 could not be measured');
    const none = limitStep(search, [1, 2, 4, 8, 16, 32, 64].map(idleTwice));
    expect(none.next).toBeUndefined();
    expect(none.bracket).toMatchObject({ status: 'unresolved', concurrency: null });
    expect(none.bracket.text).toMatch(/^no concurrency could be measured; c=1, c=2, .*c=64 could not be measured/);
  });

  it('below a client ceiling: the gap is bisected around it, and a gap of unmeasurable points is client-bound', () => {
    expect(limitStep(search, [pass(16), idleTwice(24), client(32)]).next).toMatchObject({ concurrency: 23 });
    // a doubling that skips an unmeasurable point to the ceiling bisects below it, never one below the
    // ceiling (the eighth run's C2 miss walked 63, 62, … 51: docs/statistics.md "Ninth registration")
    expect(limitStep(search, [pass(8), pass(16), idleTwice(32), client(64)]).next).toMatchObject({ concurrency: 40 });
    const st = limitStep(search, [pass(30), idleTwice(31), client(32)]);
    expect(st.next).toBeUndefined();
    expect(st.bracket).toMatchObject({ status: 'client-bound', concurrency: 30, above: 32, ci: { upper: null } });
    expect(st.bracket.text).toContain('c=31 could not be measured');
  });
});

describe('nextPointOrSearch: a re-measure is a fresh window of the same point', () => {
  it('keeps the first window, reopens the point and counts the re-measure against the cap', () => {
    const p = progress([8]);
    const pt = nextPointOrSearch(p, search)!;
    startPoint(pt, 'job', 't');
    finishPoint(
      pt,
      { concurrency: 8, valid: false, reasons: ['idle_dp_rank: engine 1'], resultPath: 'c8', reused: false },
      't1',
    );
    const again = nextPointOrSearch(p, search)!;
    expect(again).toBe(p.points[0]);
    expect(again).toMatchObject({ status: 'pending', attempts: 0, concurrency: 8 });
    expect(again.summary).toBeUndefined();
    expect(again.windows).toEqual([
      {
        status: 'invalid',
        summary: expect.objectContaining({ reasons: ['idle_dp_rank: engine 1'] }),
        lastError: 'idle_dp_rank: engine 1',
        finishedAt: 't1',
        remeasureReason: 're-measure c=8: invalid for a reason not load',
      },
    ]);
    expect(pointWindow(again)).toBe(2);
    expect(p.points).toHaveLength(1);
    expect(p.search?.pointsAdded).toBe(0);
    startPoint(again, 'job', 't2');
    finishPoint(
      again,
      { concurrency: 8, valid: true, reasons: [], resultPath: 'c8/w2', reused: false, ttftP99Ms: 1 },
      't3',
    );
    expect(nextPointOrSearch(p, search)).toMatchObject({ concurrency: 16, origin: 'search' });
    expect(p.search?.pointsAdded).toBe(1);
    expect(searchLines(p)).toContain('c=8 measured again (re-measure c=8: invalid for a reason not load)');
  });
});
