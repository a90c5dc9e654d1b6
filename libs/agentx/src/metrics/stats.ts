import { z } from 'zod';

/** Summary statistics (InferenceX agentic result: mean, p50, p75, p90, p95, std; we add p99, min, max, count). */
export const statsSchema = z
  .object({
    count: z.number().int().nonnegative(),
    mean: z.number().nullable(),
    p50: z.number().nullable(),
    p75: z.number().nullable(),
    p90: z.number().nullable(),
    p95: z.number().nullable(),
    p99: z.number().nullable(),
    std: z.number().nullable(),
    min: z.number().nullable(),
    max: z.number().nullable(),
  })
  .strict();
export type Stats = z.infer<typeof statsSchema>;

export const PERCENTILES = [50, 75, 90, 95, 99] as const;

/** Percentile with linear interpolation between closest ranks (numpy's default), on a sorted array. */
export function percentileSorted(sorted: readonly number[], p: number): number | null {
  if (sorted.length === 0) return null;
  if (p <= 0) return sorted[0]!;
  if (p >= 100) return sorted[sorted.length - 1]!;
  const rank = (p / 100) * (sorted.length - 1);
  const lo = Math.floor(rank);
  const hi = Math.ceil(rank);
  const a = sorted[lo]!;
  const b = sorted[hi]!;
  return a + (b - a) * (rank - lo);
}

/** Population statistics (numpy std, ddof=0). Non-finite values are a bug upstream: rejected loudly. */
export function stats(values: readonly number[]): Stats {
  for (const v of values) if (!Number.isFinite(v)) throw new Error(`stats: non-finite value ${v}`);
  const n = values.length;
  if (n === 0)
    return {
      count: 0,
      mean: null,
      p50: null,
      p75: null,
      p90: null,
      p95: null,
      p99: null,
      std: null,
      min: null,
      max: null,
    };
  const sorted = [...values].sort((a, b) => a - b);
  let sum = 0;
  for (const v of sorted) sum += v;
  const mean = sum / n;
  let sq = 0;
  for (const v of sorted) sq += (v - mean) * (v - mean);
  return {
    count: n,
    mean,
    p50: percentileSorted(sorted, 50),
    p75: percentileSorted(sorted, 75),
    p90: percentileSorted(sorted, 90),
    p95: percentileSorted(sorted, 95),
    p99: percentileSorted(sorted, 99),
    std: Math.sqrt(sq / n),
    min: sorted[0]!,
    max: sorted[n - 1]!,
  };
}

/**
 * Reciprocal statistics at the same percentile: interactivity = 1 / ITL_p (so p90 interactivity is the
 * slow tail, as in InferenceX `request_metrics.py`). Mean is 1/mean; std is not defined → null.
 */
export function reciprocalStats(s: Stats): Stats {
  const inv = (x: number | null): number | null => (x === null || x <= 0 ? null : 1 / x);
  return {
    count: s.count,
    mean: inv(s.mean),
    p50: inv(s.p50),
    p75: inv(s.p75),
    p90: inv(s.p90),
    p95: inv(s.p95),
    p99: inv(s.p99),
    std: null,
    min: inv(s.max),
    max: inv(s.min),
  };
}
