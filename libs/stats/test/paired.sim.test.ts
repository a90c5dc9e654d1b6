import { describe, expect, it } from 'vitest';
import { confirmRate, pairedComparison, seededRng } from '../src';

// docs/statistics.md "Paired A/B": k = 6 pairs, 95 % t-interval of the paired log differences,
// `confirmed` when the whole interval lies beyond the 5 % gate. Targets stated before the runs:
// false confirmations ≤ 2.5 % at no effect and at an effect equal to the gate; power ≥ 90 % for a
// 10 % regression at 2 % measurement noise, whatever the shared per-pair (hour-of-the-night) noise.
const TRIALS = 4000;
const base = { trials: TRIALS, pairs: 6, sigma: 0.02, gate: 0.05 };

describe(`the paired A/B (6 pairs, 95 % t-interval, 5 % gate; ${TRIALS} seeded comparisons each)`, () => {
  it('P1: no effect is confirmed in ≤ 2.5 % of comparisons, even with 10 % shared per-pair noise', () => {
    const r = confirmRate(seededRng(101), { ...base, effect: 0, pairSigma: 0.1 });
    console.log(`P1 false-confirm rate ${r}`);
    expect(r).toBeLessThanOrEqual(0.025);
  });

  it('P2: an effect of exactly the gate (−5 %) is confirmed in ≤ 2.5 % of comparisons', () => {
    const r = confirmRate(seededRng(102), { ...base, effect: -0.05 });
    console.log(`P2 confirm rate at the gate ${r}`);
    expect(r).toBeLessThanOrEqual(0.025);
  });

  it('P3: a 10 % regression is confirmed in ≥ 90 % of comparisons at 2 % noise, 10 % shared noise', () => {
    const r = confirmRate(seededRng(103), { ...base, effect: -0.1, pairSigma: 0.1 });
    console.log(`P3 power at −10 % ${r}`);
    expect(r).toBeGreaterThanOrEqual(0.9);
  });

  it('P4: unpaired, the same shared noise would hide it: power falls below 50 % when the pair term is not cancelled', () => {
    // the same data, A and B from different pairs (shuffled partners): what pairing buys
    const rng = seededRng(104);
    let confirmed = 0;
    for (let t = 0; t < 1000; t++) {
      const a = Array.from({ length: 6 }, () => Math.exp(0.1 * rng.normal() + 0.02 * rng.normal()));
      const b = Array.from({ length: 6 }, () => Math.exp(0.1 * rng.normal() + Math.log(0.9) + 0.02 * rng.normal()));
      const r = pairedComparison(
        a.map((x, i) => [x, b[i]!] as const),
        { higherIsBetter: true, gate: 0.05 },
      );
      if (r.outcome === 'confirmed') confirmed++;
    }
    console.log(`P4 unpaired power at −10 % ${confirmed / 1000}`);
    expect(confirmed / 1000).toBeLessThan(0.5);
  });
});

describe('pairedComparison', () => {
  it('signs a lower-is-better metric so that a regression is negative', () => {
    const r = pairedComparison(
      [
        [10, 12],
        [10, 12.1],
        [10, 11.9],
      ],
      { higherIsBetter: false, gate: 0.05 },
    );
    expect(r.relativeEffect).toBeCloseTo(10 / 12 - 1, 2);
    expect(r.outcome).toBe('confirmed');
  });

  it('clears when fewer than 2 pairs could be measured', () => {
    const r = pairedComparison(
      [
        [10, 5],
        [null, 5],
      ],
      { higherIsBetter: true, gate: 0.05 },
    );
    expect([r.pairs, r.outcome]).toEqual([1, 'cleared']);
  });

  it('clears a significant change smaller than the gate', () => {
    const r = pairedComparison(
      [
        [100, 98],
        [100, 98.1],
        [100, 97.9],
        [100, 98],
      ],
      { higherIsBetter: true, gate: 0.05 },
    );
    expect(r.relativeUpper).toBeLessThan(0);
    expect(r.outcome).toBe('cleared');
  });
});
