/**
 * The monotone fit of an SLO metric (e.g. TTFT p95) over concurrency and the limit it implies: the
 * non-decreasing PAVA fit, each point weighted by the inverse of its bootstrap variance (a noisy
 * point moves the fit less), and the concurrency where the fit crosses the bound, interpolated
 * linearly in log concurrency between the bracketing points.
 */
import { isotonic } from './isotonic';

export interface SloPoint {
  concurrency: number;
  /** the metric's estimate at this point */
  estimate: number;
  /** its variance (bootstrap of the point's requests); > 0 */
  variance: number;
}

export interface SloFit {
  /** the fitted metric per point, in concurrency order */
  fitted: { concurrency: number; value: number }[];
  /** the largest measured concurrency whose fit meets the bound, and the smallest that does not */
  bracket: [number | null, number | null];
  /** the interpolated crossing (null when no point meets the bound; the last point when all do) */
  limit: number | null;
}

export function sloFit(points: readonly SloPoint[], bound: number): SloFit {
  const pts = [...points].sort((a, b) => a.concurrency - b.concurrency);
  if (pts.length === 0) throw new RangeError('sloFit: no points');
  if (pts.some((p) => !(p.variance > 0))) throw new RangeError('sloFit: every point needs a positive variance');
  const values = isotonic(
    pts.map((p) => p.estimate),
    { weights: pts.map((p) => 1 / p.variance) },
  );
  const fitted = pts.map((p, i) => ({ concurrency: p.concurrency, value: values[i]! }));
  const lastPass = fitted.reduce((k, f, i) => (f.value <= bound ? i : k), -1);
  const lo = lastPass >= 0 ? fitted[lastPass]! : null;
  const hi = lastPass + 1 < fitted.length ? fitted[lastPass + 1]! : null;
  const bracket: [number | null, number | null] = [lo?.concurrency ?? null, hi?.concurrency ?? null];
  if (!lo) return { fitted, bracket, limit: null };
  if (!hi || hi.value === lo.value) return { fitted, bracket, limit: lo.concurrency };
  const share = (bound - lo.value) / (hi.value - lo.value);
  const logLimit = Math.log(lo.concurrency) + share * (Math.log(hi.concurrency) - Math.log(lo.concurrency));
  return { fitted, bracket, limit: Math.exp(logLimit) };
}
