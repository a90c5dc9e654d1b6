/**
 * E-divisive means change points (Matteson & James 2014, "A nonparametric approach for multiple
 * change point analysis of multivariate data", JASA 109(505); the algorithm Apache Otava runs over
 * performance series), univariate, energy distance with exponent 1, a seeded permutation test.
 */
import { shuffleInPlace, type Rng } from './rng';

export interface EDivisiveOptions {
  rng: Rng;
  /** significance level of each new change point, default 0.05 */
  alpha?: number;
  /** permutations per candidate, default 199 */
  permutations?: number;
  /** the shortest segment on either side of a change point, default 5 (1: any non-empty side, as Otava) */
  minSize?: number;
}

export interface ChangePointFound {
  /** the index of the first value after the change */
  index: number;
  /** the scaled energy statistic Q̂ of the split */
  qhat: number;
  pValue: number;
}

interface Candidate {
  index: number;
  qhat: number;
}

/** P[j][i] = Σ_{i' < i} |x_i' − x_j|: column prefix sums of the distance matrix. */
function prefixDistances(x: readonly number[]): Float64Array[] {
  const n = x.length;
  return x.map((xj) => {
    const row = new Float64Array(n + 1);
    for (let i = 0; i < n; i++) row[i + 1] = row[i]! + Math.abs(x[i]! - xj);
    return row;
  });
}

/** The best split τ (with its best end κ) of x[s, e), each side at least minSize long. */
function bestSplit(P: Float64Array[], s: number, e: number, minSize: number): Candidate | null {
  let best: Candidate | null = null;
  let withinX = 0; // Σ_{s ≤ i < k < τ} |x_i − x_k|
  for (let tau = s + 1; tau <= e - minSize; tau++) {
    withinX += P[tau - 1]![tau - 1]! - P[tau - 1]![s]!;
    const n = tau - s;
    if (n < minSize) continue;
    let cross = 0;
    let withinY = 0;
    for (let kappa = tau + 1; kappa <= e; kappa++) {
      const j = kappa - 1; // the value joining Y
      cross += P[j]![tau]! - P[j]![s]!;
      withinY += P[j]![j]! - P[j]![tau]!;
      const m = kappa - tau;
      if (m < minSize) continue;
      // a side of one value has no within-side distances (Otava's B and C coefficients are 0 there)
      const energy =
        (2 * cross) / (n * m) -
        (n > 1 ? withinX / ((n * (n - 1)) / 2) : 0) -
        (m > 1 ? withinY / ((m * (m - 1)) / 2) : 0);
      const qhat = ((n * m) / (n + m)) * energy;
      if (!best || qhat > best.qhat) best = { index: tau, qhat };
    }
  }
  return best;
}

/** The best candidate over all current segments (bounded by the sorted change points). */
function bestCandidate(x: readonly number[], cuts: readonly number[], minSize: number): Candidate | null {
  const P = prefixDistances(x);
  const bounds = [0, ...cuts, x.length];
  let best: Candidate | null = null;
  for (let b = 0; b + 1 < bounds.length; b++) {
    const c = bestSplit(P, bounds[b]!, bounds[b + 1]!, minSize);
    if (c && (!best || c.qhat > best.qhat)) best = c;
  }
  return best;
}

/**
 * The best split of series[start, end) (each side at least minSize values): the index of the first
 * value after it and its Q̂; null when the segment is too short. The candidate eDivisive tests.
 */
export function eDivisiveCandidate(
  series: readonly number[],
  start: number,
  end: number,
  minSize: number,
): { index: number; qhat: number } | null {
  return bestSplit(prefixDistances(series), start, end, Math.max(1, minSize));
}

export function eDivisive(series: readonly number[], opts: EDivisiveOptions): ChangePointFound[] {
  const alpha = opts.alpha ?? 0.05;
  const R = opts.permutations ?? 199;
  const minSize = Math.max(1, opts.minSize ?? 5);
  const found: ChangePointFound[] = [];
  for (;;) {
    const cuts = found.map((f) => f.index).sort((a, b) => a - b);
    const cand = bestCandidate(series, cuts, minSize);
    if (!cand) break;
    const bounds = [0, ...cuts, series.length];
    let atLeast = 0;
    const perm = [...series];
    for (let r = 0; r < R; r++) {
      for (let b = 0; b + 1 < bounds.length; b++) shuffleInPlace(perm, opts.rng, bounds[b]!, bounds[b + 1]!);
      const c = bestCandidate(perm, cuts, minSize);
      if (c && c.qhat >= cand.qhat) atLeast++;
    }
    const pValue = (1 + atLeast) / (1 + R);
    if (pValue > alpha) break;
    found.push({ ...cand, pValue });
  }
  return found.sort((a, b) => a.index - b.index);
}
