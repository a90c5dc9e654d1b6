/**
 * The error rate regresses on absolute change, from request counts: a zero baseline still has a null
 * (p₀ = (errors + 1) / (requests + 2)), so a rise from 0 % to 8 % is a finding.
 */
import { incompleteBeta } from './student-t';

export interface ErrorCounts {
  errors: number;
  requests: number;
}

export interface ErrorRateChange {
  baselineRate: number;
  windowRate: number;
  /** windowRate − baselineRate */
  rise: number;
  /** P(X ≥ window errors) for X ~ Binomial(window requests, p₀) */
  pValue: number;
  flagged: boolean;
}

/** P(X ≥ k) for X ~ Binomial(n, p): I_p(k, n − k + 1). */
export function binomialUpperTail(k: number, n: number, p: number): number {
  if (k <= 0) return 1;
  if (k > n) return 0;
  return incompleteBeta(p, k, n - k + 1);
}

export function errorRateChange(
  baseline: ErrorCounts,
  window: ErrorCounts,
  opts: { alpha?: number; minAbsolute?: number } = {},
): ErrorRateChange {
  for (const [name, c] of [
    ['baseline', baseline],
    ['window', window],
  ] as const)
    if (!(c.requests > 0) || c.errors < 0 || c.errors > c.requests)
      throw new RangeError(
        `errorRateChange: ${name} needs 0 ≤ errors ≤ requests and requests > 0, got ${c.errors}/${c.requests}`,
      );
  const p0 = (baseline.errors + 1) / (baseline.requests + 2);
  const baselineRate = baseline.errors / baseline.requests;
  const windowRate = window.errors / window.requests;
  const pValue = binomialUpperTail(window.errors, window.requests, p0);
  const rise = windowRate - baselineRate;
  return {
    baselineRate,
    windowRate,
    rise,
    pValue,
    flagged: pValue <= (opts.alpha ?? 0.01) && rise >= (opts.minAbsolute ?? 0.02),
  };
}
