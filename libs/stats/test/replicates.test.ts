import { describe, expect, it } from 'vitest';
import {
  bootstrapCi,
  calibratedSequentialDecision,
  CALIBRATED_CRITICAL_LEVEL,
  tCritical,
  clusterBootstrapCi,
  quantile,
  runSequential,
  seededRng,
  sequentialDecision,
  steinInterval,
  steinTotal,
  twoStageDecision,
  tInterval,
  varianceSplit,
} from '@infersweep/stats';

describe('tInterval', () => {
  it('is x̄ ± t(0.975, n − 1) s / √n', () => {
    const ci = tInterval([1, 2, 3, 4, 5]);
    expect(ci.mean).toBe(3);
    expect(ci.sd).toBeCloseTo(Math.sqrt(2.5), 12);
    expect(ci.halfWidth).toBeCloseTo((2.7764451 * Math.sqrt(2.5)) / Math.sqrt(5), 5);
    expect(ci.lower).toBeCloseTo(3 - ci.halfWidth, 12);
    expect(ci.relativeHalfWidth).toBeCloseTo(ci.halfWidth / 3, 12);
  });

  it('has no width from one value', () => {
    expect(tInterval([7]).halfWidth).toBeNaN();
  });
});

describe('varianceSplit', () => {
  it('matches the hand-computed ANOVA split', () => {
    // means 2 and 5, MSW 1, MSB 13.5, m₀ 3: τ̂² = 12.5 / 3
    const v = varianceSplit([
      [1, 2, 3],
      [4, 5, 6],
    ]);
    expect(v.within).toBeCloseTo(1, 12);
    expect(v.between).toBeCloseTo(12.5 / 3, 12);
    expect(v.betweenShare).toBeCloseTo(12.5 / 3 / (12.5 / 3 + 1 / 3), 12);
    expect(v.icc).toBeCloseTo(12.5 / 3 / (12.5 / 3 + 1), 12);
  });

  it('truncates a negative between-allocation estimate at 0', () => {
    const v = varianceSplit([
      [1, 5],
      [2, 4],
    ]);
    expect(v.between).toBe(0);
    expect(v.betweenShare).toBe(0);
  });

  it('handles unbalanced allocations (m₀ from the sizes)', () => {
    const v = varianceSplit([[1, 2, 3, 4], [10, 11], [5]]);
    expect(v.allocations).toBe(3);
    expect(v.requests).toBe(7);
    expect(v.between).toBeGreaterThan(v.within);
  });

  it('refuses a single allocation, naming what it needs', () => {
    expect(() => varianceSplit([[1, 2, 3]])).toThrow(/needs ≥ 2 allocations/);
  });
});

describe('bootstrap', () => {
  it('is reproducible from its seed and brackets the estimate', () => {
    const xs = Array.from({ length: 200 }, (_, i) => i);
    const p90 = (v: number[]) => quantile(v, 0.9);
    const a = bootstrapCi(xs, p90, { rng: seededRng(3), resamples: 300 });
    const b = bootstrapCi(xs, p90, { rng: seededRng(3), resamples: 300 });
    expect(a).toEqual(b);
    expect(a.lower).toBeLessThanOrEqual(a.estimate);
    expect(a.upper).toBeGreaterThanOrEqual(a.estimate);
    expect(a.estimate).toBeCloseTo(179.1, 6);
  });

  it('refuses a cluster bootstrap over fewer than 8 allocations', () => {
    const groups = [[1], [2], [3]];
    expect(() => clusterBootstrapCi(groups, (v) => v.length, { rng: seededRng(1) })).toThrow(/needs ≥ 8/);
  });

  it('resamples whole allocations in the cluster bootstrap', () => {
    // every allocation holds two equal values: any resample's pooled values come in pairs
    const groups = Array.from({ length: 8 }, (_, i) => [i, i]);
    const ci = clusterBootstrapCi(groups, (v) => v.length, { rng: seededRng(2), resamples: 50 });
    expect([ci.lower, ci.estimate, ci.upper]).toEqual([16, 16, 16]);
  });
});

describe('the sequential rule', () => {
  const rule = { min: 3, max: 6, relativeHalfWidth: 0.03 };

  it('never stops below min, even on identical values', () => {
    expect(sequentialDecision([100, 100], rule)).toMatchObject({ stop: false, reason: 'below-min' });
    expect(sequentialDecision([100, 100, 100], rule)).toMatchObject({ stop: true, reason: 'target-met' });
  });

  it('replicates while the CI is too wide, and stops at max', () => {
    expect(sequentialDecision([90, 110, 100], rule)).toMatchObject({ stop: false, reason: 'target-not-met' });
    expect(sequentialDecision([90, 110, 100, 95, 105, 100], rule)).toMatchObject({ stop: true, reason: 'max-reached' });
  });

  it('stops as soon as the relative half-width meets the target', () => {
    const stream = [100, 101, 99, 100, 100.5];
    let i = 0;
    const { values, decision } = runSequential(() => stream[i++]!, rule);
    expect(values).toEqual([100, 101, 99]);
    expect(decision.reason).toBe('target-met');
    expect(decision.interval.relativeHalfWidth).toBeLessThanOrEqual(0.03);
  });

  it('refuses a min below 3 or a max below min', () => {
    expect(() => sequentialDecision([1, 2], { ...rule, min: 2 })).toThrow(/min must be an integer ≥ 3/);
    expect(() => sequentialDecision([1, 2], { ...rule, max: 2 })).toThrow(/max must be an integer ≥ min/);
  });
});

describe('the calibrated sequential rule (R6)', () => {
  const rule = { min: 3, max: 6, relativeHalfWidth: 0.03 };

  it('builds its interval with t(0.99, n − 1) and publishes it as a 95 % interval', () => {
    const values = [1000, 1010, 990, 1005];
    const d = calibratedSequentialDecision(values, { ...rule, relativeHalfWidth: 0.5 });
    const plain = tInterval(values);
    expect(d.stop).toBe(true);
    expect(d.criticalLevel).toBe(CALIBRATED_CRITICAL_LEVEL);
    expect(d.interval!.level).toBe(0.95);
    expect(d.interval!.halfWidth / plain.halfWidth).toBeCloseTo(tCritical(0.98, 3) / tCritical(0.95, 3), 10);
  });

  it('keeps replicating where the uncalibrated rule would already stop', () => {
    // half-width at 0.95: 4.30·10/√3/1000 = 2.48 % ≤ 3 %; at 0.98: 6.96·10/√3/1000 = 4.0 % > 3 %
    const values = [990, 1000, 1010];
    expect(sequentialDecision(values, rule)).toMatchObject({ stop: true, reason: 'target-met' });
    expect(calibratedSequentialDecision(values, rule)).toMatchObject({ stop: false, reason: 'target-not-met' });
  });

  it('never stops below min, and stops at max with the target unmet', () => {
    expect(calibratedSequentialDecision([100, 100], rule)).toMatchObject({ stop: false, reason: 'below-min' });
    expect(calibratedSequentialDecision([90, 110, 100, 95, 105, 100], rule)).toMatchObject({
      stop: true,
      reason: 'max-reached',
    });
  });
});

describe('Stein’s two-stage rule', () => {
  const rule = { firstStage: 3, max: 10, relativeHalfWidth: 0.03 };

  it('fixes the total from the first stage: N = ⌈(t(0.975, 2) s0 / (r x̄0))²⌉', () => {
    // s0 = 2, x̄0 = 100: (4.3027 · 2 / 3)² = 8.23 → 9
    expect(steinTotal([98, 100, 102], rule)).toBe(9);
    expect(steinTotal([100, 100, 100], rule)).toBe(3);
    expect(steinTotal([50, 100, 150], rule)).toBe(10);
  });

  it('asks for the first stage, then the fixed total, then stops with t(n0 − 1) s0 / √N', () => {
    expect(twoStageDecision([98, 100], rule)).toMatchObject({ stop: false, reason: 'first-stage' });
    expect(twoStageDecision([98, 100, 102, 101], rule)).toMatchObject({
      stop: false,
      needed: 9,
      reason: 'second-stage',
    });
    const values = [98, 100, 102, 101, 99, 100, 100, 101, 99];
    const d = twoStageDecision(values, rule);
    expect(d).toMatchObject({ stop: true, needed: 9, reason: 'target-met' });
    const interval = steinInterval(values, 3);
    expect(interval.halfWidth).toBeCloseTo((4.3026527 * 2) / 3, 5);
    expect(interval.mean).toBeCloseTo(100, 12);
  });

  it('reports max-reached when the cap stops it short of the target', () => {
    const values = [50, 100, 150, 100, 100, 100, 100, 100, 100, 100];
    expect(twoStageDecision(values, rule)).toMatchObject({ stop: true, needed: 10, reason: 'max-reached' });
  });

  it('refuses a first stage below 3', () => {
    expect(() => twoStageDecision([1, 2, 3], { ...rule, firstStage: 2 })).toThrow(/firstStage must be an integer ≥ 3/);
  });
});
