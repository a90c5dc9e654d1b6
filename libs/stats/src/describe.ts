/** Descriptive statistics of a sample: the building blocks every estimator here uses. */

export function mean(xs: readonly number[]): number {
  if (xs.length === 0) return Number.NaN;
  let s = 0;
  for (const x of xs) s += x;
  return s / xs.length;
}

/** The unbiased sample variance (n − 1 in the denominator); NaN below 2 values. */
export function variance(xs: readonly number[]): number {
  const n = xs.length;
  if (n < 2) return Number.NaN;
  const m = mean(xs);
  let ss = 0;
  for (const x of xs) ss += (x - m) * (x - m);
  return ss / (n - 1);
}

export function sd(xs: readonly number[]): number {
  return Math.sqrt(variance(xs));
}

/** The `p` quantile of a sorted sample, linear interpolation between order statistics (Hyndman–Fan type 7). */
export function quantileSorted(sorted: ArrayLike<number>, p: number): number {
  const n = sorted.length;
  if (n === 0) return Number.NaN;
  const h = (n - 1) * p;
  const lo = Math.floor(h);
  const hi = Math.min(lo + 1, n - 1);
  return sorted[lo]! + (h - lo) * (sorted[hi]! - sorted[lo]!);
}

/** Rearrange `a` so that a[k] is its k-th smallest value, smaller ones before it, larger after (Hoare). */
function selectInPlace(a: Float64Array, k: number): number {
  let lo = 0;
  let hi = a.length - 1;
  while (lo < hi) {
    const pivot = a[(lo + hi) >> 1]!;
    let i = lo;
    let j = hi;
    while (i <= j) {
      while (a[i]! < pivot) i++;
      while (a[j]! > pivot) j--;
      if (i <= j) {
        const t = a[i]!;
        a[i++] = a[j]!;
        a[j--] = t;
      }
    }
    if (k <= j) hi = j;
    else if (k >= i) lo = i;
    else break;
  }
  return a[k]!;
}

/**
 * The `p` quantile (type 7) by selection instead of a sort: the same two order statistics in O(n),
 * which is what the bootstraps call thousands of times.
 */
export function quantile(xs: readonly number[], p: number): number {
  const n = xs.length;
  if (n === 0) return Number.NaN;
  const a = Float64Array.from(xs);
  const h = (n - 1) * p;
  const lo = Math.floor(h);
  const below = selectInPlace(a, lo);
  if (lo + 1 >= n || h === lo) return below;
  let above = a[lo + 1]!;
  for (let i = lo + 2; i < n; i++) if (a[i]! < above) above = a[i]!;
  return below + (h - lo) * (above - below);
}

export function median(xs: readonly number[]): number {
  return quantile(xs, 0.5);
}

/** Pearson correlation of two equally long samples; NaN when either is constant. */
export function correlation(xs: readonly number[], ys: readonly number[]): number {
  const mx = mean(xs);
  const my = mean(ys);
  let sxy = 0;
  let sxx = 0;
  let syy = 0;
  for (let i = 0; i < xs.length; i++) {
    const dx = xs[i]! - mx;
    const dy = ys[i]! - my;
    sxy += dx * dy;
    sxx += dx * dx;
    syy += dy * dy;
  }
  return sxy / Math.sqrt(sxx * syy);
}
