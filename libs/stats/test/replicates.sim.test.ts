import { describe, expect, it } from 'vitest';
import { bootstrapP90Coverage, fixedNCoverage, sequentialVsFixed, varianceSplitMeans } from './sim-figures';

// docs/statistics.md "Pre-registered targets" R1–R4; the figures are printed for the docs
describe('replicates across allocations (seeded Monte-Carlo)', () => {
  it('R1: the t-interval on 3 or 5 allocation means covers the true mean in ≥ 93 % of 200 sweeps', () => {
    const c3 = fixedNCoverage(200, 3, 31);
    const c5 = fixedNCoverage(200, 5, 32);
    console.log(`R1 coverage n=3 ${c3}, n=5 ${c5}`);
    expect(c3).toBeGreaterThanOrEqual(0.93);
    expect(c5).toBeGreaterThanOrEqual(0.93);
  });

  it('R2: the sequential rule covers in ≥ 93 % with fewer replicates than the fixed-n rule for its target', () => {
    const r = sequentialVsFixed(200, { min: 3, max: 20, relativeHalfWidth: 0.03 }, 33);
    console.log(`R2 coverage ${r.coverage}, mean n ${r.meanN}, fixed n ${r.fixedN}`);
    expect(r.coverage).toBeGreaterThanOrEqual(0.93);
    expect(r.fixedN).not.toBeNull();
    expect(r.meanN).toBeLessThan(r.fixedN!);
  });

  it('R3: the variance split recovers τ² within 25 % and σ² within 2 % (mean of 200 sets of 6)', () => {
    const m = varianceSplitMeans(200, 6, 34);
    console.log(`R3 mean between ${m.between}, within ${m.within}`);
    expect(Math.abs(m.between - 900) / 900).toBeLessThanOrEqual(0.25);
    expect(Math.abs(m.within - 90_000) / 90_000).toBeLessThanOrEqual(0.02);
  });

  it('R4: the percentile bootstrap CI of p90 from 400 requests covers in ≥ 90 % of 200 runs', () => {
    const c = bootstrapP90Coverage(200, 400, 400, 35);
    console.log(`R4 coverage ${c}`);
    expect(c).toBeGreaterThanOrEqual(0.9);
  });
});
