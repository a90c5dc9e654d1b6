import { describe, expect, it } from 'vitest';
import {
  ar1,
  ar1QuadraticForm,
  ar1SampleVarianceFactor,
  ar1Series,
  ar1VarianceInflation,
  benjaminiHochberg,
  effectiveN,
  errorRateChange,
  fisher,
  gateThreshold,
  holm,
  isUnmeasured,
  meanPairwiseCorrelation,
  nightlyVerdict,
  passesGate,
  seededRng,
  shiftTest,
  stouffer,
} from '@infersweep/stats';

describe('AR(1)', () => {
  it('computes wᵀR(ρ)w in closed form', () => {
    expect(ar1QuadraticForm([1, 1], 0.5)).toBeCloseTo(3, 12);
    expect(ar1QuadraticForm([1, -1, 1], 0)).toBe(3);
    // three terms: 3 + 2(ρ·(1·1 + 1·1) + ρ²·1) at ρ = 0.5
    expect(ar1QuadraticForm([1, 1, 1], 0.5)).toBeCloseTo(3 + 2 * (0.5 * 2 + 0.25), 12);
  });

  it('inflates the variance of a long mean by (1 + ρ)/(1 − ρ)', () => {
    expect(ar1VarianceInflation(5000, 0.5)).toBeCloseTo(3, 2);
    expect(ar1VarianceInflation(20, 0)).toBe(1);
    expect(ar1SampleVarianceFactor(20, 0)).toBeCloseTo(1, 12);
    // 1ᵀR1 = 20 + 2 Σ_h (20 − h) 0.5^h = 56.000004: E[s²] = σ² (20 − 2.8) / 19
    expect(ar1SampleVarianceFactor(20, 0.5)).toBeCloseTo(17.2 / 19, 6);
    expect(effectiveN(20, 0.5)).toBeCloseTo(20 / 3, 12);
  });

  it('estimates ρ from a long series and clips a negative estimate to 0', () => {
    const x = ar1Series(seededRng(5), 4000, 1, 0.6);
    expect(ar1(x).rho).toBeCloseTo(0.6, 1);
    expect(ar1([1, -1, 1, -1, 1, -1, 1, -1, 1, -1]).rho).toBe(0);
  });
});

describe('shiftTest', () => {
  const base = [100, 102, 99, 101, 100, 98, 101, 100, 99, 102];

  it('gives a small one-sided p-value to a drop in a higher-is-better metric', () => {
    const r = shiftTest(base, [90, 91], { higherIsBetter: true });
    expect(r.worse).toBe(true);
    expect(r.effect).toBeCloseTo(Math.log(90.5) - Math.log(100.2), 2);
    expect(r.pValue).toBeLessThan(1e-4);
  });

  it('reads the same change as an improvement when lower is better', () => {
    const r = shiftTest(base, [90, 91], { higherIsBetter: false });
    expect(r.worse).toBe(false);
    expect(r.pValue).toBeGreaterThan(0.99);
  });

  it('is scale-free (log values)', () => {
    const a = shiftTest(base, [97, 96], { higherIsBetter: true });
    const b = shiftTest(
      base.map((v) => v * 1000),
      [97000, 96000],
      { higherIsBetter: true },
    );
    expect(b.pValue).toBeCloseTo(a.pValue, 10);
  });

  it('widens the variance when the baseline is autocorrelated', () => {
    const smooth = [100, 101, 102, 103, 104, 105, 104, 103, 102, 101, 100, 99];
    const r = shiftTest(smooth, [97], { higherIsBetter: true });
    expect(r.rho).toBeGreaterThan(0.3);
    expect(r.df).toBeLessThan(smooth.length - 1);
  });

  it('refuses fewer than 3 baseline runs (a variance of one degree of freedom) and non-positive values', () => {
    expect(() => shiftTest([1, 2], [1], { higherIsBetter: true })).toThrow(/needs ≥ 3/);
    expect(shiftTest([1, 1.1, 0.9], [1], { higherIsBetter: true }).df).toBe(2);
    expect(() => shiftTest([1, 2, 3, 4, 0], [1], { higherIsBetter: true })).toThrow(/positive/);
  });
});

describe('multiplicity', () => {
  const ps = [0.01, 0.04, 0.03, 0.005];
  it('Benjamini–Hochberg adjusts step-up', () => {
    const r = benjaminiHochberg(ps, 0.03);
    expect(r.adjusted.map((a) => +a.toFixed(10))).toEqual([0.02, 0.04, 0.04, 0.02]);
    expect(r.rejected).toEqual([true, false, false, true]);
  });
  it('Holm adjusts step-down', () => {
    const r = holm(ps, 0.05);
    expect(r.adjusted.map((a) => +a.toFixed(10))).toEqual([0.03, 0.06, 0.06, 0.02]);
    expect(r.rejected).toEqual([true, false, false, true]);
  });
});

describe('combining p-values', () => {
  it('Stouffer: two independent p = 0.05 make p = 0.01; perfectly correlated ones stay 0.05', () => {
    expect(stouffer([0.05, 0.05]).pValue).toBeCloseTo(0.01, 4);
    expect(stouffer([0.05, 0.05], 1).pValue).toBeCloseTo(0.05, 6);
  });
  it('Fisher: χ²(4) = 11.98 for two p = 0.05', () => {
    expect(fisher([0.05])).toBeCloseTo(0.05, 10);
    expect(fisher([0.05, 0.05])).toBeCloseTo(0.0175, 4);
  });
  it('the mean pairwise correlation is clipped to [0, 1]', () => {
    expect(
      meanPairwiseCorrelation([
        [1, 2, 3],
        [2, 4, 6],
      ]),
    ).toBeCloseTo(1, 12);
    expect(
      meanPairwiseCorrelation([
        [1, 2, 3],
        [3, 2, 1],
      ]),
    ).toBe(0);
  });
});

describe('the magnitude gate', () => {
  it('is max(5 %, 2σ̂)', () => {
    expect(gateThreshold(0.01)).toBe(0.05);
    expect(gateThreshold(0.04)).toBe(0.08);
    expect(passesGate(-0.06, 0.02)).toBe(true);
    expect(passesGate(-0.06, 0.04)).toBe(false);
  });
});

describe('the error rate on absolute change', () => {
  it('flags a rise 0 → 8 % from a zero baseline (V5)', () => {
    const r = errorRateChange({ errors: 0, requests: 4000 }, { errors: 16, requests: 200 });
    expect(r.flagged).toBe(true);
    expect(r.rise).toBeCloseTo(0.08, 12);
    expect(r.pValue).toBeLessThan(1e-10);
  });
  it('does not flag one error in 200 (below the 2-point gate)', () => {
    expect(errorRateChange({ errors: 0, requests: 4000 }, { errors: 1, requests: 200 }).flagged).toBe(false);
  });
  it('refuses impossible counts', () => {
    expect(() => errorRateChange({ errors: 5, requests: 4 }, { errors: 0, requests: 1 })).toThrow(/baseline needs/);
  });
});

describe('the nightly verdict', () => {
  it('flags a unit whose points all dropped 10 %, and not its quiet neighbour', () => {
    const rng = seededRng(11);
    const series = (factor: number) => {
      const x = ar1Series(rng, 22, 0.02, 0).map((v) => 1000 * Math.exp(v));
      return { baseline: x.slice(0, 20), window: x.slice(20).map((v) => v * factor) };
    };
    const units = [
      { id: 'slow', higherIsBetter: true, points: [0.9, 0.9, 0.9].map(series) },
      { id: 'same', higherIsBetter: true, points: [1, 1, 1].map(series) },
    ];
    const [slow, same] = nightlyVerdict(units);
    expect(slow!.flagged).toBe(true);
    expect(slow!.effect).toBeLessThan(-0.08);
    expect(same!.flagged).toBe(false);
  });

  it('an invalid, failed or missing newest run is unmeasured (V4)', () => {
    expect(isUnmeasured('invalid', 20)).toBe(true);
    expect(isUnmeasured('missing', 3)).toBe(true);
    expect(isUnmeasured('valid', 20)).toBe(false);
    expect(isUnmeasured('failed', 0)).toBe(false);
  });
});

describe('the nightly verdict per point', () => {
  it('flags a unit by one point that moved 20 % when the unit’s mean moved only 4 %', () => {
    const rng = seededRng(12);
    const series = (factor: number) => {
      const x = ar1Series(rng, 22, 0.01, 0).map((v) => 1000 * Math.exp(v));
      return { baseline: x.slice(0, 20), window: x.slice(20).map((v) => v * factor) };
    };
    const units = [{ id: 'one', higherIsBetter: true, points: [0.8, 1, 1, 1, 1].map(series) }];
    const [u] = nightlyVerdict(units, { perPoint: true });
    expect(u!.combinedFlag).toBe(false);
    expect(u!.pointFlags).toEqual([true, false, false, false, false]);
    expect(u!.flagged).toBe(true);
    // by default the point is reported but does not flag its unit
    const [byDefault] = nightlyVerdict(units);
    expect(byDefault!.pointFlags[0]).toBe(true);
    expect(byDefault!.flagged).toBe(false);
  });
});
