/**
 * Percentile bootstrap confidence intervals (Efron): resample with replacement, take the statistic's
 * quantiles. `bootstrapDistribution` gives the replicates themselves (a search's pass probability is
 * the share of them that meet a bound).
 */
import { quantileSorted } from './describe';
import type { Rng } from './rng';

export interface BootstrapOptions {
  rng: Rng;
  /** resamples, default 1000 */
  resamples?: number;
  level?: number;
}

export interface BootstrapInterval {
  estimate: number;
  lower: number;
  upper: number;
  level: number;
  resamples: number;
}

/** The statistic over `resamples` resamples of `samples` (same size, with replacement), sorted. */
export function bootstrapDistribution(
  samples: readonly number[],
  statistic: (xs: number[]) => number,
  rng: Rng,
  resamples = 1000,
): number[] {
  const n = samples.length;
  if (n === 0) throw new RangeError('bootstrap: no samples');
  const out: number[] = [];
  const buf = new Array<number>(n);
  for (let b = 0; b < resamples; b++) {
    for (let i = 0; i < n; i++) buf[i] = samples[rng.int(n)]!;
    out.push(statistic(buf));
  }
  return out.sort((x, y) => x - y);
}

export function bootstrapCi(
  samples: readonly number[],
  statistic: (xs: number[]) => number,
  opts: BootstrapOptions,
): BootstrapInterval {
  const level = opts.level ?? 0.95;
  const resamples = opts.resamples ?? 1000;
  const dist = bootstrapDistribution(samples, statistic, opts.rng, resamples);
  return {
    estimate: statistic([...samples]),
    lower: quantileSorted(dist, (1 - level) / 2),
    upper: quantileSorted(dist, 1 - (1 - level) / 2),
    level,
    resamples,
  };
}

/** The fewest allocations a cluster bootstrap accepts (3 allocations have only 10 distinct resamples). */
export const MIN_CLUSTERS = 8;

/**
 * Cluster bootstrap: resample whole allocations (each a group of request values) with replacement and
 * apply `statistic` to the pooled requests. Refuses fewer than MIN_CLUSTERS groups: use the t-interval
 * on per-allocation values there.
 */
export function clusterBootstrapCi(
  groups: readonly (readonly number[])[],
  statistic: (xs: number[]) => number,
  opts: BootstrapOptions,
): BootstrapInterval {
  if (groups.length < MIN_CLUSTERS)
    throw new RangeError(
      `clusterBootstrapCi: ${groups.length} allocations; needs ≥ ${MIN_CLUSTERS} (use tInterval on per-allocation values)`,
    );
  const level = opts.level ?? 0.95;
  const resamples = opts.resamples ?? 1000;
  const idx = groups.map((_, i) => i);
  const pooledOf = (picked: readonly number[]): number[] => picked.flatMap((i) => groups[i] as number[]);
  const dist = bootstrapDistribution(idx, (ids) => statistic(pooledOf(ids)), opts.rng, resamples);
  return {
    estimate: statistic(pooledOf(idx)),
    lower: quantileSorted(dist, (1 - level) / 2),
    upper: quantileSorted(dist, 1 - (1 - level) / 2),
    level,
    resamples,
  };
}
