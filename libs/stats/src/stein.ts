/**
 * Stein's two-stage rule (Stein 1945, "A two-sample test for a linear hypothesis whose power is
 * independent of the variance", Ann. Math. Statist. 16): measure `n0` allocations, choose the total N
 * from their SD alone, and report x̄_N ± t(0.975, n0 − 1) · s0 / √N. Because N depends only on s0, and
 * x̄_N is independent of s0 for normal values, (x̄_N − μ) √N / s0 is exactly t(n0 − 1): the coverage
 * is exact at any N, the cap included. The price: the t quantile of n0 − 1 degrees of freedom.
 */
import { mean, sd } from './describe';
import { tCritical, type MeanInterval } from './t-interval';

/** The total replicates Stein's rule asks for after the first `first.length` (= n0) values. */
export function steinTotal(
  first: readonly number[],
  rule: { max: number; relativeHalfWidth: number; level?: number },
): number {
  const n0 = first.length;
  if (n0 < 2) throw new RangeError(`steinTotal: needs a first stage of ≥ 2 values, got ${n0}`);
  const t = tCritical(rule.level ?? 0.95, n0 - 1);
  const d = rule.relativeHalfWidth * Math.abs(mean(first));
  const needed = Math.ceil(((t * sd(first)) / d) ** 2);
  return Math.min(rule.max, Math.max(n0, needed));
}

/** The interval after all N values (the first n0 of them the first stage). */
export function steinInterval(values: readonly number[], n0: number, level = 0.95): MeanInterval {
  const s0 = sd(values.slice(0, n0));
  const n = values.length;
  const m = mean(values);
  const halfWidth = (tCritical(level, n0 - 1) * s0) / Math.sqrt(n);
  return {
    n,
    mean: m,
    sd: s0,
    halfWidth,
    lower: m - halfWidth,
    upper: m + halfWidth,
    relativeHalfWidth: halfWidth / Math.abs(m),
    level,
  };
}

export type TwoStageDecision =
  | { stop: false; needed: number | null; reason: 'first-stage' | 'second-stage' }
  | { stop: true; needed: number; interval: MeanInterval; reason: 'target-met' | 'max-reached' };

/**
 * The replicate decision of Stein's rule for a point measured so far on `values.length` allocations
 * (in order): measure more until the first stage (`firstStage` values) is complete and then until the
 * total it fixed is reached; the total is never revised by later values (that is what keeps the
 * coverage exact).
 */
export function twoStageDecision(
  values: readonly number[],
  rule: { firstStage: number; max: number; relativeHalfWidth: number; level?: number },
): TwoStageDecision {
  if (!Number.isInteger(rule.firstStage) || rule.firstStage < 3)
    throw new RangeError(`two-stage rule: firstStage must be an integer ≥ 3, got ${rule.firstStage}`);
  if (!Number.isInteger(rule.max) || rule.max < rule.firstStage)
    throw new RangeError(`two-stage rule: max must be an integer ≥ firstStage (${rule.firstStage}), got ${rule.max}`);
  if (values.length < rule.firstStage) return { stop: false, needed: null, reason: 'first-stage' };
  const needed = steinTotal(values.slice(0, rule.firstStage), rule);
  if (values.length < needed) return { stop: false, needed, reason: 'second-stage' };
  const interval = steinInterval(values.slice(0, needed), rule.firstStage, rule.level);
  return {
    stop: true,
    needed,
    interval,
    reason: needed >= rule.max && interval.relativeHalfWidth > rule.relativeHalfWidth ? 'max-reached' : 'target-met',
  };
}
