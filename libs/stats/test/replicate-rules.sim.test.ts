import { beforeAll, describe, expect, it } from 'vitest';
import { replicateRules } from '@infersweep/testkit/sim-figures';

// docs/statistics.md "Second registration": R1b, R2b, R5 over 2000 sweeps with common random numbers;
// "Fifth registration": R6 (200 sweeps) and R6b (the same 2000)
describe('replicate rules over 2000 seeded sweeps', () => {
  let r: ReturnType<typeof replicateRules>;
  // ~3 s of CPU alone; the unit project runs niced beside the integration lanes, so the bound is on hangs
  beforeAll(() => {
    r = replicateRules(2000, 61);
    console.log(`R1b/R2b/R5 ${JSON.stringify(r)}`);
  }, 120_000);

  it('R1b: the fixed-n t-interval covers in ≥ 94 % at n = 3 and n = 5', () => {
    expect(r.rules['fixed n=3']!.coverage).toBeGreaterThanOrEqual(0.94);
    expect(r.rules['fixed n=5']!.coverage).toBeGreaterThanOrEqual(0.94);
  });

  // the registered target (≥ 93 %) is missed: this asserts the miss, so a change that fixes or
  // worsens the rule fails here and docs/statistics.md gets the new figure
  it('R2b: the fully sequential rule (min 3) undercovers: below its 93 % target, as first measured', () => {
    expect(r.rules['sequential min 3']!.coverage).toBeLessThan(0.93);
    expect(r.rules['sequential min 3']!.coverage).toBeGreaterThanOrEqual(0.89);
  });

  it('R5: Stein’s two-stage rule covers in ≥ 94 % for n0 = 3, 6, 8; with n0 = 8 it needs fewer replicates than fixed n', () => {
    for (const n0 of [3, 6, 8]) expect(r.rules[`stein n0=${n0}`]!.coverage).toBeGreaterThanOrEqual(0.94);
    expect(r.fixedN).not.toBeNull();
    expect(r.rules['stein n0=8']!.meanN).toBeLessThan(r.fixedN!);
  });

  it('R6b: the calibrated sequential rule covers in ≥ 94 % and needs fewer replicates than fixed n', () => {
    const c = r.rules['calibrated sequential min 3']!;
    expect(c.coverage).toBeGreaterThanOrEqual(0.94);
    expect(c.meanN).toBeLessThan(r.fixedN!);
  });
});

describe('the calibrated sequential rule over 200 seeded sweeps', () => {
  it('R6: covers in ≥ 93 % with fewer replicates on average than the fixed-n rule for the same target', () => {
    const r = replicateRules(200, 62);
    console.log(`R6 ${JSON.stringify(r)}`);
    const c = r.rules['calibrated sequential min 3']!;
    expect(c.coverage).toBeGreaterThanOrEqual(0.93);
    expect(r.fixedN).not.toBeNull();
    expect(c.meanN).toBeLessThan(r.fixedN!);
  });
});
