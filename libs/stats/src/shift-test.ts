/**
 * Is the newest run (or the newest k runs) worse than the baseline? A one-sided t-test on log values
 * with the baseline's AR(1) autocorrelation in the variance (docs/statistics.md §2): continuous
 * p-values, so a family of tests can be controlled.
 */
import { ar1, ar1QuadraticForm, ar1SampleVarianceFactor, effectiveN } from './ar1';
import { mean, variance } from './describe';
import { tCdf } from './student-t';

/** The fewest baseline runs the test accepts (two degrees of freedom for σ̂; docs/history.md asks 5 by default). */
export const MIN_BASELINE = 3;

export interface ShiftTestResult {
  /** mean(log window) − mean(log baseline): ≈ the relative change */
  effect: number;
  /** σ̂: one run's SD on the log scale (≈ relative noise), corrected for the AR(1) bias */
  sigma: number;
  /** the AR(1) coefficient used */
  rho: number;
  df: number;
  /** the effect in standard errors, positive when worse */
  statistic: number;
  /** one-sided: P(a change at least this much worse | no change) */
  pValue: number;
  worse: boolean;
}

export function shiftTest(
  baseline: readonly number[],
  window: readonly number[],
  opts: { higherIsBetter: boolean },
): ShiftTestResult {
  const n = baseline.length;
  const k = window.length;
  if (n < MIN_BASELINE) throw new RangeError(`shiftTest: ${n} baseline runs; needs ≥ ${MIN_BASELINE}`);
  if (k < 1) throw new RangeError('shiftTest: an empty window');
  const all = [...baseline, ...window];
  if (all.some((v) => !(v > 0))) throw new RangeError('shiftTest: values must be positive (the test is on logs)');
  const lb = baseline.map(Math.log);
  const lw = window.map(Math.log);
  const effect = mean(lw) - mean(lb);
  const { rho } = ar1(lb);
  const sigma = Math.sqrt(variance(lb) / ar1SampleVarianceFactor(n, rho));
  const w = [...new Array<number>(n).fill(-1 / n), ...new Array<number>(k).fill(1 / k)];
  const se = sigma * Math.sqrt(ar1QuadraticForm(w, rho));
  const df = Math.max(2, effectiveN(n, rho) - 1);
  const sign = opts.higherIsBetter ? -1 : 1;
  const statistic = se > 0 ? (sign * effect) / se : sign * effect > 0 ? Number.POSITIVE_INFINITY : 0;
  const pValue = Number.isFinite(statistic) ? 1 - tCdf(statistic, df) : 0;
  return { effect, sigma, rho, df, statistic, pValue, worse: sign * effect > 0 };
}
