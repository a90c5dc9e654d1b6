import { describe, expect, it } from 'vitest';
import { NIGHT, eDivisiveRates, nights } from '@infersweep/testkit/sim-figures';

// docs/statistics.md "Pre-registered targets" V1–V3 (300 nights per commit; bench/stats-nights.ts runs 1000) and V6
describe('nightly verdicts on synthetic nights (80 series, seeded)', () => {
  const NIGHTS = 300;

  it('V1: σ = 3 % iid: ≤ 1 false alarm per 100 nights', () => {
    const r = nights(NIGHTS, NIGHT, 41);
    console.log(`V1 ${JSON.stringify(r)}`);
    expect(r.falseAlarms / NIGHTS).toBeLessThanOrEqual(0.01);
  });

  it('V2: σ = 3 %, AR(1) ρ = 0.5: ≤ 5 false alarms per 100 nights', () => {
    const r = nights(NIGHTS, { ...NIGHT, rho: 0.5 }, 42);
    console.log(`V2 ${JSON.stringify(r)}`);
    expect(r.falseAlarms / NIGHTS).toBeLessThanOrEqual(0.05);
  });

  it('V3: σ = 3 %: a −10 % step on an orientation’s 5 points is flagged on ≥ 90 % of nights', () => {
    const r = nights(NIGHTS, { ...NIGHT, steppedUnits: 1, step: 0.9 }, 43);
    console.log(`V3 ${JSON.stringify(r)}`);
    expect(r.stepped / NIGHTS).toBeGreaterThanOrEqual(0.9);
  });

  // the third registration's per-point path missed V1 (2.9 per 100 nights in 1000); this asserts the
  // miss, so a change to the per-point path that fixes or worsens it fails here and the docs get the figure
  it('V1 with the per-point path (perPoint): above 1 false alarm per 100 nights at σ = 3 % iid, as first measured', () => {
    const r = nights(NIGHTS, NIGHT, 41, { perPoint: true });
    console.log(`V1 per point ${JSON.stringify(r)}`);
    expect(r.falseAlarms / NIGHTS).toBeGreaterThan(0.01);
    expect(r.falseAlarms / NIGHTS).toBeLessThanOrEqual(0.06);
  });

  // the fourth registration's target (≤ 1 per 100 nights) is missed (3.0 in 1000 nights, 4.3 in these
  // 300): a night that slows every point of an allocation looks like a regression; this asserts the
  // miss so a change to the procedure that fixes or worsens it fails here and the docs get the figure
  it('V8: points sharing an allocation (r = 0.8), σ = 3 %: above 1 false alarm per 100 nights, as first measured', () => {
    const r = nights(NIGHTS, { ...NIGHT, crossCorrelation: 0.8 }, 45);
    console.log(`V8 ${JSON.stringify(r)}`);
    expect(r.falseAlarms / NIGHTS).toBeGreaterThan(0.01);
    expect(r.falseAlarms / NIGHTS).toBeLessThanOrEqual(0.06);
  });

  it('V6: E-divisive finds a −10 % step within ±2 runs in ≥ 90 % and nothing in ≥ 90 % of quiet series', () => {
    const r = eDivisiveRates(50, 44);
    console.log(`V6 ${JSON.stringify(r)}`);
    expect(r.stepFound).toBeGreaterThanOrEqual(0.9);
    expect(r.quietClean).toBeGreaterThanOrEqual(0.9);
  });
});
