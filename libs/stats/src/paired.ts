/**
 * The paired A/B comparison that confirms or clears a flagged regression (docs/statistics.md "Paired
 * A/B"): k pairs measured on one allocation, A (the last good run context) then B (the one under
 * test), interleaved A-B-A-B. Pre-registered, before any data:
 *  - statistic: the per-pair difference of log values, signed so that a regression is negative
 *    (d_i = ln B_i − ln A_i for a higher-is-better metric, ln A_i − ln B_i for a lower-is-better one);
 *  - estimator: the mean of the k differences, with its two-sided Student-t interval at `level`
 *    (df = k − 1): the pairs share the allocation, so a slow allocation or a slow hour cancels;
 *  - decision: `confirmed` when the whole interval lies below −gate (the gate in log units,
 *    −ln(1 − gate)), `cleared` otherwise.
 * Bound: whatever the true effect θ ≥ −gate (no regression, or one smaller than the gate), P(confirmed)
 * ≤ (1 − level) / 2 for normal differences (2.5 % at level 0.95); the seeded simulation in
 * libs/stats/test/paired.sim.test.ts measures it and the power. Pure.
 */
import { tInterval } from './t-interval';

export type PairedOutcome = 'confirmed' | 'cleared';

export interface PairedComparison {
  /** pairs used (pairs with a missing or non-positive value are not) */
  pairs: number;
  /** mean signed log difference (negative: B is worse) */
  logEffect: number;
  logLower: number;
  logUpper: number;
  /** the same as relative changes of B against A in the metric's own direction: exp(x) − 1 */
  relativeEffect: number;
  relativeLower: number;
  relativeUpper: number;
  level: number;
  /** the relative gate the interval had to clear */
  gate: number;
  outcome: PairedOutcome;
}

export interface PairedOptions {
  higherIsBetter: boolean;
  /** the smallest regression that counts, relative (0.05 = 5 %) */
  gate: number;
  /** two-sided interval level (default 0.95) */
  level?: number;
}

/** The signed log difference of one pair, or undefined when either value cannot be logged. */
export function pairDifference(a: number | null, b: number | null, higherIsBetter: boolean): number | undefined {
  if (a === null || b === null || !(a > 0) || !(b > 0) || !Number.isFinite(a) || !Number.isFinite(b)) return undefined;
  const d = Math.log(b) - Math.log(a);
  return higherIsBetter ? d : -d;
}

/** Compare B against A over the pairs `[a, b]` (fewer than 2 usable pairs: `cleared`, with NaN bounds). */
export function pairedComparison(
  pairs: readonly (readonly [number | null, number | null])[],
  opts: PairedOptions,
): PairedComparison {
  const level = opts.level ?? 0.95;
  const d = pairs.flatMap(([a, b]) => {
    const x = pairDifference(a, b, opts.higherIsBetter);
    return x === undefined ? [] : [x];
  });
  const ci = tInterval(d, level);
  const logGate = -Math.log(1 - opts.gate);
  const usable = d.length >= 2 && Number.isFinite(ci.upper);
  const rel = (x: number) => Math.expm1(x);
  return {
    pairs: d.length,
    logEffect: ci.mean,
    logLower: ci.lower,
    logUpper: ci.upper,
    relativeEffect: rel(ci.mean),
    relativeLower: rel(ci.lower),
    relativeUpper: rel(ci.upper),
    level,
    gate: opts.gate,
    outcome: usable && ci.upper < -logGate ? 'confirmed' : 'cleared',
  };
}

/**
 * The fraction of `trials` simulated comparisons that end `confirmed`: k pairs, B's true relative
 * effect `effect` (−0.1 = 10 % worse), each measurement with independent log-normal noise `sigma`
 * plus a shared per-pair term `pairSigma` (the allocation's hour, which pairing cancels). Seeded.
 */
export function confirmRate(
  rng: { normal(): number },
  o: { trials: number; pairs: number; effect: number; sigma: number; pairSigma?: number; gate: number; level?: number },
): number {
  let confirmed = 0;
  const shift = Math.log1p(o.effect);
  for (let t = 0; t < o.trials; t++) {
    const pairs: [number, number][] = [];
    for (let i = 0; i < o.pairs; i++) {
      const shared = (o.pairSigma ?? 0) * rng.normal();
      const a = Math.exp(shared + o.sigma * rng.normal());
      const b = Math.exp(shared + shift + o.sigma * rng.normal());
      pairs.push([a, b]);
    }
    if (pairedComparison(pairs, { higherIsBetter: true, gate: o.gate, level: o.level }).outcome === 'confirmed')
      confirmed++;
  }
  return confirmed / o.trials;
}
