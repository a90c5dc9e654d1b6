/**
 * The arithmetic of the adaptive search that the plan (its worst case) and the workflow's decision
 * function (libs/sweep/src/search.ts, which proves the bound) share. Pure.
 */

/** How close the SLO limit is bracketed (the config's `search.resolution`). */
export type SearchResolutionSpec = { absolute: number } | { relative: number };

/** The resolution's step at concurrency c (≥ 1). */
export function resolutionStep(r: SearchResolutionSpec, c: number): number {
  return 'absolute' in r ? r.absolute : Math.max(1, Math.floor(c * r.relative));
}

/**
 * The most points an slo-limit search adds: ⌈log2(max/min)⌉ bracket points plus
 * ⌈log2((max − min)/step(min))⌉ bisection points (proof in libs/sweep/src/search.ts).
 */
export function searchPointBound(s: {
  minConcurrency: number;
  maxConcurrency: number;
  resolution: SearchResolutionSpec;
}): number {
  const { minConcurrency: lo, maxConcurrency: hi } = s;
  const bracket = Math.ceil(Math.log2(hi / lo));
  const span = hi - lo;
  const step = resolutionStep(s.resolution, lo);
  const bisect = span > step ? Math.ceil(Math.log2(span / step)) : 0;
  return bracket + bisect;
}

/** Points the search may add after `planned` configured ones: maxPoints, and the GPU-hour budget of the whole sweep. */
export function searchCap(
  s: { maxPoints: number; gpuHourBudget?: number; pointGpuHours: number },
  planned: number,
): { cap: number; by: 'max-points' | 'gpu-hour-budget' } {
  if (s.gpuHourBudget === undefined || s.pointGpuHours <= 0) return { cap: s.maxPoints, by: 'max-points' };
  const byBudget = Math.max(0, Math.floor(s.gpuHourBudget / s.pointGpuHours + 1e-9) - planned);
  return byBudget < s.maxPoints ? { cap: byBudget, by: 'gpu-hour-budget' } : { cap: s.maxPoints, by: 'max-points' };
}
