import { describe, expect, it } from 'vitest';
import { bootstrapP90Coverage, varianceSplitMeans } from '@infersweep/testkit/sim-figures';

// docs/statistics.md "Pre-registered targets" R3–R4 (R1 and R2 run at 2000 sweeps in replicate-rules.sim.test.ts)
describe('replicates across allocations (seeded Monte-Carlo)', () => {
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
