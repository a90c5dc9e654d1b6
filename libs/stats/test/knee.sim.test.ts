import { describe, expect, it } from 'vitest';
import { cliffCurve, kneeOutcomes, smoothCurve } from '@infersweep/testkit/sim-figures';

// docs/statistics.md "Pre-registered targets" S1–S2
describe('the knee under 2 % noise (200 seeded runs each)', () => {
  it('S1: a smooth saturating curve has no knee in ≥ 95 % of runs', () => {
    const o = kneeOutcomes(200, smoothCurve, 51);
    console.log(`S1 ${JSON.stringify([...o])}`);
    expect((o.get(null) ?? 0) / 200).toBeGreaterThanOrEqual(0.95);
  });

  it('S2: a capacity cliff at c = 32 is found at 32 in ≥ 95 % of runs', () => {
    const o = kneeOutcomes(200, cliffCurve, 52);
    console.log(`S2 ${JSON.stringify([...o])}`);
    expect((o.get(32) ?? 0) / 200).toBeGreaterThanOrEqual(0.95);
  });
});
