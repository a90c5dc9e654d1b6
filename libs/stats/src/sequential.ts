/**
 * The fully sequential replicate rule (Chow–Robbins form): replicate a point on fresh allocations until
 * the t-interval's relative half-width meets the target, never before `min` (3) and never past `max`.
 * It undercovers: 91.0 % for a nominal 95 % in 2000 seeded sweeps (docs/statistics.md, R2b), because
 * it stops more often when s is small by chance. Publish CIs from Stein's two-stage rule
 * (stein.ts `twoStageDecision`), whose coverage is exact; this rule stays for comparison.
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
