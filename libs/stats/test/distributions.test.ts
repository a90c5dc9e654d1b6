import { describe, expect, it } from 'vitest';
import {
  incompleteBeta,
  logGamma,
  normalCdf,
  normalQuantile,
  quantile,
  quantileSorted,
  seededRng,
  tCdf,
  tQuantile,
} from '@infersweep/stats';

describe('the normal distribution', () => {
  it('matches table values of Φ and Φ⁻¹', () => {
    expect(normalCdf(0)).toBeCloseTo(0.5, 7);
    expect(normalCdf(1.96)).toBeCloseTo(0.9750021, 6);
    expect(normalCdf(-1)).toBeCloseTo(0.1586553, 6);
    expect(normalQuantile(0.975)).toBeCloseTo(1.959964, 5);
    expect(normalQuantile(0.001)).toBeCloseTo(-3.090232, 5);
    expect(normalQuantile(0.5)).toBeCloseTo(0, 9);
  });

  it('inverts itself across the range', () => {
    for (const p of [1e-8, 0.01, 0.2, 0.7, 0.99, 1 - 1e-6]) expect(normalCdf(normalQuantile(p))).toBeCloseTo(p, 6);
  });
});

describe('Student t', () => {
  // two-sided 95 % critical values t(0.975, df) from any t table
  const table: [number, number][] = [
    [1, 12.7062],
    [2, 4.3027],
    [3, 3.1824],
    [4, 2.7764],
    [5, 2.5706],
    [9, 2.2622],
    [10, 2.2281],
    [19, 2.093],
    [30, 2.0423],
    [120, 1.9799],
  ];
  it.each(table)('t(0.975, %i) = %f', (df, q) => {
    expect(tQuantile(0.975, df)).toBeCloseTo(q, 3);
  });

  it('matches other levels and is symmetric', () => {
    expect(tQuantile(0.95, 10)).toBeCloseTo(1.8125, 3);
    expect(tQuantile(0.995, 5)).toBeCloseTo(4.0321, 3);
    expect(tQuantile(0.025, 7)).toBeCloseTo(-tQuantile(0.975, 7), 9);
    expect(tCdf(2, 10)).toBeCloseTo(0.963306, 5);
    expect(tCdf(0, 3)).toBeCloseTo(0.5, 9);
  });

  it('accepts a fractional df (an effective sample size)', () => {
    const q = tQuantile(0.975, 7.5);
    expect(q).toBeLessThan(tQuantile(0.975, 7));
    expect(q).toBeGreaterThan(tQuantile(0.975, 8));
  });

  it('refuses a p or df outside its domain', () => {
    expect(() => tQuantile(1, 5)).toThrow(/p must be in/);
    expect(() => tQuantile(0.9, 0)).toThrow(/df must be positive/);
  });
});

describe('special functions', () => {
  it('log Γ and the incomplete beta match closed forms', () => {
    expect(logGamma(5)).toBeCloseTo(Math.log(24), 10);
    expect(logGamma(0.5)).toBeCloseTo(0.5 * Math.log(Math.PI), 10);
    // Beta(2, 3): CDF 12 (x²/2 − 2x³/3 + x⁴/4)
    expect(incompleteBeta(0.5, 2, 3)).toBeCloseTo(0.6875, 10);
    expect(incompleteBeta(0.9, 2, 3)).toBeCloseTo(12 * (0.81 / 2 - (2 * 0.729) / 3 + 0.6561 / 4), 10);
    expect(incompleteBeta(0, 2, 3)).toBe(0);
    expect(incompleteBeta(1, 2, 3)).toBe(1);
  });
});

describe('quantile by selection', () => {
  it('equals the sorted type-7 quantile on random samples, ties and edges included', () => {
    const rng = seededRng(8);
    for (let trial = 0; trial < 200; trial++) {
      const n = 1 + rng.int(60);
      const xs = Array.from({ length: n }, () => (trial % 3 === 0 ? rng.int(5) : rng.normal()));
      const sorted = [...xs].sort((a, b) => a - b);
      for (const p of [0, 0.1, 0.5, 0.9, 0.99, 1]) expect(quantile(xs, p)).toBe(quantileSorted(sorted, p));
    }
    expect(quantile([], 0.5)).toBeNaN();
  });
});
