/**
 * The AR(1) model of a nightly series (x_t = ρ x_{t−1} + e_t on log values): the lag-1
 * autocorrelation estimate and what it does to the variance of means and of the sample variance.
 */
import { mean } from './describe';

/** The largest ρ̂ used: beyond it a baseline of 20 runs carries almost no independent information. */
export const MAX_RHO = 0.9;
/** Below this many values the bias correction is unstable (its denominator is n − 4): the raw estimate is used. */
export const MIN_CORRECTED = 8;

export interface Ar1Estimate {
  /** the lag-1 sample autocorrelation */
  raw: number;
  /** bias-corrected (Kendall: (n r + 1) / (n − 4), for n ≥ MIN_CORRECTED) and clipped to [0, MAX_RHO] */
  rho: number;
}

export function ar1(xs: readonly number[]): Ar1Estimate {
  const n = xs.length;
  if (n < 3) return { raw: Number.NaN, rho: 0 };
  const m = mean(xs);
  let num = 0;
  let den = 0;
  for (let t = 0; t < n; t++) {
    const d = xs[t]! - m;
    den += d * d;
    if (t + 1 < n) num += d * (xs[t + 1]! - m);
  }
  const raw = den > 0 ? num / den : 0;
  const corrected = n >= MIN_CORRECTED ? (n * raw + 1) / (n - 4) : raw;
  return { raw, rho: Math.min(MAX_RHO, Math.max(0, corrected)) };
}

/**
 * wᵀ R(ρ) w for R_st = ρ^|s−t| over consecutive runs, in O(n): the variance of the contrast Σ w_t x_t
 * in units of the marginal variance.
 */
export function ar1QuadraticForm(w: readonly number[], rho: number): number {
  let total = 0;
  let carry = 0; // Σ_{t<s} w_t ρ^{s−t}
  for (let s = 0; s < w.length; s++) {
    if (s > 0) carry = rho * (carry + w[s - 1]!);
    total += w[s]! * w[s]! + 2 * w[s]! * carry;
  }
  return total;
}

/** Var(mean of n consecutive values) / (σ²/n): (1 + ρ)/(1 − ρ) for long runs. */
export function ar1VarianceInflation(n: number, rho: number): number {
  return ar1QuadraticForm(new Array<number>(n).fill(1), rho) / n;
}

/** E[s²] / σ² for n consecutive AR(1) values: the sample variance is biased low when ρ > 0. */
export function ar1SampleVarianceFactor(n: number, rho: number): number {
  return (n - ar1QuadraticForm(new Array<number>(n).fill(1), rho) / n) / (n - 1);
}

/** n (1 − ρ) / (1 + ρ): how many independent values a series of n carries about its variance. */
export function effectiveN(n: number, rho: number): number {
  return (n * (1 - rho)) / (1 + rho);
}
