/**
 * The Student-t confidence interval of a mean: the replicate statistic of a point measured on n
 * independent allocations (one value per allocation). Exact coverage for normal values, any n ≥ 2.
 */
import { mean, sd } from './describe';
import { tQuantile } from './student-t';

export interface MeanInterval {
  n: number;
  mean: number;
  sd: number;
  /** half the interval's width, in the values' unit (NaN below 2 values) */
  halfWidth: number;
  lower: number;
  upper: number;
  /** halfWidth / |mean| */
  relativeHalfWidth: number;
  level: number;
}

const quantileCache = new Map<string, number>();

/** t(p, df), memoised: the simulations ask for the same few quantiles millions of times. */
export function tCritical(level: number, df: number): number {
  const key = `${level}:${df}`;
  let q = quantileCache.get(key);
  if (q === undefined) {
    q = tQuantile(1 - (1 - level) / 2, df);
    quantileCache.set(key, q);
  }
  return q;
}

export function tInterval(values: readonly number[], level = 0.95): MeanInterval {
  const n = values.length;
  const m = mean(values);
  const s = sd(values);
  const halfWidth = n >= 2 ? (tCritical(level, n - 1) * s) / Math.sqrt(n) : Number.NaN;
  return {
    n,
    mean: m,
    sd: s,
    halfWidth,
    lower: m - halfWidth,
    upper: m + halfWidth,
    relativeHalfWidth: halfWidth / Math.abs(m),
    level,
  };
}
