/**
 * The one-way random-effects variance split of request-level values grouped by allocation
 * (method of moments / ANOVA, unbalanced groups): within-run variance σ² and between-allocation
 * variance τ², truncated at 0.
 */
export interface VarianceSplit {
  allocations: number;
  requests: number;
  /** σ̂² = MSW: the variance of one request around its allocation's mean */
  within: number;
  /** τ̂² = max(0, (MSB − MSW) / m₀): the variance of the allocations' true means */
  between: number;
  /** τ̂² / (τ̂² + σ̂² / m̄): the share of a replicate mean's variance that only more allocations remove */
  betweenShare: number;
  /** τ̂² / (τ̂² + σ̂²): the intra-class correlation of one request */
  icc: number;
}

export function varianceSplit(groups: readonly (readonly number[])[]): VarianceSplit {
  const a = groups.length;
  const sizes = groups.map((g) => g.length);
  const total = sizes.reduce((s, m) => s + m, 0);
  if (a < 2 || sizes.some((m) => m < 1) || total - a < 1)
    throw new RangeError(
      `varianceSplit: needs ≥ 2 allocations with requests and N > a, got ${a} groups of ${total} values`,
    );
  const means = groups.map((g) => g.reduce((s, x) => s + x, 0) / g.length);
  const grand = groups.reduce((s, g) => s + g.reduce((t, x) => t + x, 0), 0) / total;
  let ssw = 0;
  groups.forEach((g, i) => g.forEach((x) => (ssw += (x - means[i]!) ** 2)));
  const ssb = means.reduce((s, m, i) => s + sizes[i]! * (m - grand) ** 2, 0);
  const msw = ssw / (total - a);
  const msb = ssb / (a - 1);
  const m0 = (total - sizes.reduce((s, m) => s + m * m, 0) / total) / (a - 1);
  const between = Math.max(0, (msb - msw) / m0);
  const mBar = total / a;
  const replicateVar = between + msw / mBar;
  return {
    allocations: a,
    requests: total,
    within: msw,
    between,
    betweenShare: replicateVar > 0 ? between / replicateVar : 0,
    icc: between + msw > 0 ? between / (between + msw) : 0,
  };
}
