/**
 * Combining one-sided p-values of related tests (an orientation's points for one metric): Stouffer
 * with a correction for positively correlated tests, and Fisher for independent ones.
 */
import { correlation } from './describe';
import { normalCdf, normalQuantile } from './normal';

/** p-values are clamped away from 0 and 1 so that Φ⁻¹ stays finite. */
const P_FLOOR = 1e-300;
const clampP = (p: number): number => Math.min(1 - 1e-16, Math.max(P_FLOOR, p));

/**
 * Stouffer's Z = Σ z_i / √(m + m(m − 1) r̄), z_i = Φ⁻¹(1 − p_i): with r̄ the mean pairwise correlation
 * of the tests' statistics (0 for independent tests), Z is standard normal under the null (Strube 1985).
 */
export function stouffer(pValues: readonly number[], meanCorrelation = 0): { z: number; pValue: number } {
  const m = pValues.length;
  if (m === 0) throw new RangeError('stouffer: no p-values');
  const r = Math.min(1, Math.max(0, meanCorrelation));
  const sum = pValues.reduce((s, p) => s + normalQuantile(1 - clampP(p)), 0);
  const z = sum / Math.sqrt(m + m * (m - 1) * r);
  return { z, pValue: 1 - normalCdf(z) };
}

/** Fisher: −2 Σ log p_i ~ χ²(2m) under the null for independent tests (not for correlated ones). */
export function fisher(pValues: readonly number[]): number {
  const m = pValues.length;
  if (m === 0) throw new RangeError('fisher: no p-values');
  const half = -pValues.reduce((s, p) => s + Math.log(clampP(p)), 0); // x/2 for x = −2 Σ log p
  // χ²(2m) survival at x: e^{−x/2} Σ_{j<m} (x/2)^j / j!
  let term = 1;
  let sum = 1;
  for (let j = 1; j < m; j++) {
    term *= half / j;
    sum += term;
  }
  return Math.min(1, Math.exp(-half) * sum);
}

/**
 * The mean pairwise Pearson correlation of equally long series (e.g. the points' baseline log
 * values, aligned by run), clipped to [0, 1]; constant series are left out. 0 for fewer than 2.
 */
export function meanPairwiseCorrelation(series: readonly (readonly number[])[]): number {
  const rs: number[] = [];
  for (let i = 0; i < series.length; i++)
    for (let j = i + 1; j < series.length; j++) {
      const r = correlation(series[i]!, series[j]!);
      if (Number.isFinite(r)) rs.push(r);
    }
  if (rs.length === 0) return 0;
  return Math.min(1, Math.max(0, rs.reduce((s, r) => s + r, 0) / rs.length));
}
