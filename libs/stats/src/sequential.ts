/**
 * The fully sequential replicate rule (Chow–Robbins form): replicate a point on fresh allocations until
 * the t-interval's relative half-width meets the target, never before `min` (3) and never past `max`.
 * It undercovers: 91.0 % for a nominal 95 % in 2000 seeded sweeps (docs/statistics.md, R2b), because
 * it stops more often when s is small by chance. The rule replicates publish CIs with is the same rule
 * at a calibrated critical level (`calibratedSequentialDecision`, R6: 95.0 % in 200 sweeps, fewer
 * replicates than fixed n); Stein's two-stage rule (stein.ts) is exact but costs more at a first stage of 3.
 */
import { tInterval, type MeanInterval } from './t-interval';

export interface SequentialRule {
  /** replicates before the rule may stop (≥ 3) */
  min: number;
  /** replicates after which it stops regardless */
  max: number;
  /** target relative half-width of the CI, e.g. 0.03 */
  relativeHalfWidth: number;
  level?: number;
}

export type SequentialDecision =
  | { stop: false; interval: MeanInterval | null; reason: 'below-min' | 'target-not-met' }
  | { stop: true; interval: MeanInterval; reason: 'target-met' | 'max-reached' };

export function checkSequentialRule(rule: SequentialRule): void {
  if (!Number.isInteger(rule.min) || rule.min < 3)
    throw new RangeError(`sequential rule: min must be an integer ≥ 3, got ${rule.min}`);
  if (!Number.isInteger(rule.max) || rule.max < rule.min)
    throw new RangeError(`sequential rule: max must be an integer ≥ min (${rule.min}), got ${rule.max}`);
  if (!(rule.relativeHalfWidth > 0))
    throw new RangeError(`sequential rule: relativeHalfWidth must be > 0, got ${rule.relativeHalfWidth}`);
}

/** Given the replicate values so far (one per allocation, in order), stop or replicate again. */
export function sequentialDecision(values: readonly number[], rule: SequentialRule): SequentialDecision {
  checkSequentialRule(rule);
  const n = values.length;
  if (n < rule.min)
    return { stop: false, interval: n >= 2 ? tInterval(values, rule.level) : null, reason: 'below-min' };
  const interval = tInterval(values, rule.level);
  if (interval.relativeHalfWidth <= rule.relativeHalfWidth) return { stop: true, interval, reason: 'target-met' };
  if (n >= rule.max) return { stop: true, interval, reason: 'max-reached' };
  return { stop: false, interval, reason: 'target-not-met' };
}

/** Run the rule over a stream of replicate values (a simulation, or a replay of a sweep's replicates). */
export function runSequential(
  next: () => number,
  rule: SequentialRule,
): { values: number[]; decision: SequentialDecision & { stop: true } } {
  const values: number[] = [];
  for (;;) {
    values.push(next());
    const d = sequentialDecision(values, rule);
    if (d.stop) return { values, decision: d };
  }
}

/**
 * The critical level of the calibrated rule: t(0.99, n − 1), chosen by an exact grid computation of
 * the sequential rule's coverage under normality (docs/statistics.md, "Fifth registration"): the
 * smallest level whose coverage is ≥ 95 % for every target between a quarter and three times the
 * allocation CV, min 3.
 */
export const CALIBRATED_CRITICAL_LEVEL = 0.98;

/** The coverage the calibrated rule's interval is published with. */
export const CALIBRATED_COVERAGE = 0.95;

/**
 * The replicate rule to publish CIs with (R6): the fully sequential rule at the calibrated critical
 * level. Its interval is the t-interval at that level; `level` says the coverage the procedure has
 * (95 %), `criticalLevel` how it was built.
 */
export function calibratedSequentialDecision(
  values: readonly number[],
  rule: Omit<SequentialRule, 'level'>,
): SequentialDecision & { criticalLevel: number } {
  const d = sequentialDecision(values, { ...rule, level: CALIBRATED_CRITICAL_LEVEL });
  const criticalLevel = CALIBRATED_CRITICAL_LEVEL;
  if (d.interval === null) return { ...d, criticalLevel };
  return { ...d, interval: { ...d.interval, level: CALIBRATED_COVERAGE }, criticalLevel } as SequentialDecision & {
    criticalLevel: number;
  };
}
