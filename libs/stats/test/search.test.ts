import { describe, expect, it } from 'vitest';
import {
  eDivisive,
  goodput,
  isGoodRequest,
  isotonic,
  knee,
  nextProbe,
  passProbability,
  quantile,
  seededRng,
  sloFit,
  wilsonInterval,
} from '@infersweep/stats';

describe('isotonic (PAVA)', () => {
  it('pools adjacent violators', () => {
    expect(isotonic([1, 3, 2, 4])).toEqual([1, 2.5, 2.5, 4]);
    expect(isotonic([1, 3, 2], { weights: [1, 1, 3] })).toEqual([1, 2.25, 2.25]);
    expect(isotonic([3, 1, 2], { increasing: false })).toEqual([3, 1.5, 1.5]);
    expect(isotonic([5, 4, 3, 2])).toEqual([3.5, 3.5, 3.5, 3.5]);
  });
  it('leaves a monotone sequence alone and refuses bad weights', () => {
    expect(isotonic([1, 2, 2, 7])).toEqual([1, 2, 2, 7]);
    expect(() => isotonic([1, 2], { weights: [1, 0] })).toThrow(/positive/);
  });
});

describe('goodput', () => {
  const bounds = { ttftMs: 500, tpotMs: 50, e2elMs: 10_000 };
  it('a request is good only when it succeeded and every bound holds', () => {
    expect(isGoodRequest({ ok: true, ttftMs: 400, tpotMs: 40, e2elMs: 9000 }, bounds)).toBe(true);
    expect(isGoodRequest({ ok: true, ttftMs: 501, tpotMs: 40, e2elMs: 9000 }, bounds)).toBe(false);
    expect(isGoodRequest({ ok: false, ttftMs: 1, tpotMs: 1, e2elMs: 1 }, bounds)).toBe(false);
    expect(isGoodRequest({ ok: true, ttftMs: 400, e2elMs: 9000 }, bounds)).toBe(false);
    expect(isGoodRequest({ ok: true, ttftMs: 400 }, { ttftMs: 500 })).toBe(true);
  });
  it('attainment with its Wilson interval', () => {
    const reqs = Array.from({ length: 10 }, (_, i) => ({ ok: true, ttftMs: i < 8 ? 100 : 900 }));
    const g = goodput(reqs, { ttftMs: 500 });
    expect(g.estimate).toBe(0.8);
    expect(g.lower).toBeCloseTo(0.4902, 4);
    expect(g.upper).toBeCloseTo(0.9433, 4);
    expect(() => goodput(reqs, {})).toThrow(/at least one/);
  });
  it('the Wilson interval stays inside [0, 1] at the edges', () => {
    const w = wilsonInterval(50, 50);
    expect(w.upper).toBeCloseTo(1, 12);
    expect(w.lower).toBeCloseTo(0.9287, 4);
  });
});

describe('the next probe', () => {
  const range = { min: 1, max: 256, relativeResolution: 0.1 };
  it('re-measures a point whose pass/fail is a coin flip', () => {
    const r = nextProbe(
      [
        { concurrency: 8, passProbability: 1 },
        { concurrency: 32, passProbability: 0.55 },
        { concurrency: 64, passProbability: 0 },
      ],
      range,
    );
    expect(r).toMatchObject({ kind: 'remeasure', concurrency: 32 });
  });
  it('splits the bracket where the fitted pass probability crosses ½, geometrically', () => {
    const r = nextProbe(
      [
        { concurrency: 8, passProbability: 1 },
        { concurrency: 16, passProbability: 0.95 },
        { concurrency: 64, passProbability: 0.02 },
      ],
      range,
    );
    expect(r).toMatchObject({ kind: 'probe', concurrency: 32, bracket: [16, 64] });
  });
  it('a pass above a fail is pooled by the monotone fit instead of moving the bracket up', () => {
    const r = nextProbe(
      [
        { concurrency: 8, passProbability: 1 },
        { concurrency: 16, passProbability: 0.05 },
        { concurrency: 32, passProbability: 0.9 },
        { concurrency: 64, passProbability: 0 },
      ],
      range,
    );
    // the fit pools 16 and 32 at 0.475 < ½: the bracket is [8, 16]
    expect(r).toMatchObject({ kind: 'probe', concurrency: 11, bracket: [8, 16] });
  });
  it('doubles past the last pass and ends on a resolved bracket', () => {
    expect(nextProbe([{ concurrency: 8, passProbability: 1 }], range)).toMatchObject({
      kind: 'probe',
      concurrency: 16,
    });
    expect(
      nextProbe(
        [
          { concurrency: 40, passProbability: 1 },
          { concurrency: 43, passProbability: 0 },
        ],
        range,
      ),
    ).toMatchObject({ kind: 'done', limit: 40 });
    expect(nextProbe([{ concurrency: 1, passProbability: 0 }], range)).toMatchObject({ kind: 'done', limit: null });
  });
  it('reads a pass probability from the bootstrap of the requests', () => {
    const rng = seededRng(4);
    const fast = Array.from({ length: 300 }, () => 100 + 10 * rng.normal());
    const p95 = (v: number[]) => quantile(v, 0.95);
    expect(passProbability(fast, p95, 200, rng)).toBe(1);
    expect(passProbability(fast, p95, 90, rng)).toBe(0);
  });
});

describe('knee', () => {
  it('finds a capacity cliff and lists its candidates', () => {
    const pts = [1, 2, 4, 8, 16, 32, 64].map((c) => ({ concurrency: c, throughput: Math.min(c, 16) }));
    const k = knee(pts);
    expect(k.knee).toBe(16);
    expect(k.candidates).toEqual([16]);
    expect(k.drops.find((d) => d.concurrency === 16)!.drop).toBeCloseTo(1, 10);
  });
  it('says "no knee" for a smooth saturating curve', () => {
    const pts = [1, 2, 4, 8, 16, 32, 64, 128].map((c) => ({ concurrency: c, throughput: c / (c + 16) }));
    const k = knee(pts);
    expect(k.knee).toBeNull();
    expect(Math.max(...k.drops.map((d) => d.drop))).toBeLessThan(0.2);
  });
  it('needs three points and positive values', () => {
    expect(knee([{ concurrency: 1, throughput: 1 }]).knee).toBeNull();
    expect(() => knee([{ concurrency: 1, throughput: 0 }])).toThrow(/positive/);
  });
});

describe('E-divisive means', () => {
  it('finds two level shifts and nothing in a flat series', () => {
    const rng = seededRng(21);
    const x = Array.from({ length: 60 }, (_, i) => (i < 20 ? 100 : i < 40 ? 90 : 100) + rng.normal());
    const found = eDivisive(x, { rng: seededRng(1), permutations: 99 });
    expect(found.map((f) => f.index)).toEqual([20, 40]);
    expect(found.every((f) => f.pValue <= 0.05)).toBe(true);
    const flat = Array.from({ length: 40 }, () => rng.normal());
    expect(eDivisive(flat, { rng: seededRng(1), permutations: 99 })).toEqual([]);
  });
  it('is deterministic for a seed', () => {
    const x = Array.from({ length: 30 }, (_, i) => (i < 15 ? 0 : 1) + 0.3 * Math.sin(i));
    expect(eDivisive(x, { rng: seededRng(9) })).toEqual(eDivisive(x, { rng: seededRng(9) }));
  });
});

describe('sloFit', () => {
  it('interpolates the crossing in log concurrency on the monotone fit', () => {
    const f = sloFit(
      [
        { concurrency: 8, estimate: 100, variance: 1 },
        { concurrency: 32, estimate: 300, variance: 1 },
      ],
      200,
    );
    expect(f.bracket).toEqual([8, 32]);
    expect(f.limit).toBeCloseTo(16, 10);
  });

  it('pools a pass above a fail, a noisy point moving the fit less', () => {
    const f = sloFit(
      [
        { concurrency: 8, estimate: 100, variance: 1 },
        { concurrency: 16, estimate: 260, variance: 1 },
        { concurrency: 32, estimate: 180, variance: 9 },
        { concurrency: 64, estimate: 400, variance: 1 },
      ],
      200,
    );
    // 16 and 32 pool at (260·1 + 180/9) / (1 + 1/9) = 252
    expect(f.fitted.map((p) => p.value)).toEqual([100, 252, 252, 400]);
    expect(f.bracket).toEqual([8, 16]);
  });

  it('has no limit when no point meets the bound, the last point when all do', () => {
    const pts = [
      { concurrency: 4, estimate: 50, variance: 1 },
      { concurrency: 8, estimate: 60, variance: 1 },
    ];
    expect(sloFit(pts, 10).limit).toBeNull();
    expect(sloFit(pts, 100)).toMatchObject({ limit: 8, bracket: [8, null] });
    expect(() => sloFit([{ concurrency: 1, estimate: 1, variance: 0 }], 1)).toThrow(/positive variance/);
  });
});
